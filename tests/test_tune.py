"""`pagedattn tune`: candidate space and pruning, a tiny tuning run whose table the dispatcher's
lookup finds, resuming from the results file, and worker isolation (a candidate that aborts or
hangs its worker is recorded and the run still writes its table).

The runs use tiny workload cases under the interpreter (a GPU machine runs them on the GPU); each
starts worker processes, so they are kept to one or two buckets and a few candidates.
"""

import dataclasses
import json
import re
import subprocess

import pytest
import torch

from pagedattn import api, reference, tune, workloads
from pagedattn.device import KNOWN_DEVICES, DeviceInfo
from pagedattn.profiles import select, tables
from pagedattn.profiles.types import LaunchProfile, ShapeKey, next_pow2

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def tune_args(tmp_path, *argv):
    return tune.parse_args([*argv, "--table-dir", str(tmp_path / "tables"), "--report", str(tmp_path / "report.md"),
                            "--results", str(tmp_path / "results.jsonl"), "--quiet"])


def read_results(tmp_path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]


def read_table(tmp_path) -> dict:
    return json.loads(tables.table_path(DeviceInfo.current().name, tmp_path / "tables").read_text())


@pytest.fixture
def no_workers(monkeypatch):
    """Fail the test if anything starts a process."""

    def refuse(*args, **kwargs):
        raise AssertionError("a worker process was started")

    monkeypatch.setattr(subprocess, "Popen", refuse)


def test_dry_run_lists_candidates_and_counts_pruned(capsys, no_workers):
    args = tune.parse_args(["--kernel", "sparse", "--workload", "sparse-prefill", "--rows", "1024,2048", "--dry-run",
                            "--device", "NVIDIA_H200"])
    assert tune.run(args) == 0
    out = capsys.readouterr().out
    tasks = tune.plan_tasks(args)
    # 4 layouts x 2 dtypes x 2 row counts: the workload's 520- and 8,192-row cases meet in one bucket per row count
    assert len(tasks) == 16 and {t.key.num_tokens for t in tasks} == {1024, 2048}
    assert all(not t.merged for t in tasks)
    h200 = KNOWN_DEVICES["NVIDIA_H200"]
    for task in tasks:
        assert task.label in out
        candidates, pruned, fit, space = tune.plan_case(task, h200)
        assert candidates[0] == select.untuned_selection(task.key, h200).profile
        assert all(tune.prune_reason(p, task.key, h200) is None for p in candidates)
        assert sum(pruned.values()) > 0 and 0 < fit < space
    assert re.search(r"pruned \d+ x [a-z_]+ ", out)  # each pruning counted with its reason named


def test_search_space_follows_the_group_and_pruning_names_its_reason():
    tiny = workloads.WORKLOADS["mtp-verify"].tiny[0]  # 16q/1kv: group 16
    key = tune.case_shape_key(tiny)
    assert tune.field_values(key)["block_m"] == (16, 32, 64, 128)
    wide = ShapeKey(**key.bucket() | {"group": 24})
    assert tune.field_values(wide)["block_m"] == tuple(m for m in (16, 32, 64, 128) if m >= next_pow2(24))
    assert tune.field_values(key)["num_splits"][-1] == 256  # past the default's cap of 64
    tiles = -(-key.kv_len // 16)
    h200 = KNOWN_DEVICES["NVIDIA_H200"]
    assert tune.prune_reason(LaunchProfile(64, 16, num_splits=tiles), key, h200) is None
    assert "splits for" in tune.prune_reason(LaunchProfile(64, 16, num_splits=2 * tiles), key, h200)
    assert "shared memory" in tune.prune_reason(LaunchProfile(128, 128, num_stages=6), tune.case_shape_key(
        workloads.WORKLOADS["sparse-prefill"].cases[0]), h200)
    mi300 = KNOWN_DEVICES["AMD_INSTINCT_MI300X"]
    blocked = tune.prune_reason(LaunchProfile(64, 32, num_warps=1, num_stages=1), key, mi300)
    assert blocked.startswith("blocklisted")


@pytest.mark.parametrize("label,profile,fits", [
    # sm90 compiles of these (scripts/compile_report.py): 225 KB, 161 KB, 161 KB fit the H200's 227 KB; 288 KB does not
    ("kv=32768 16q/1kv d256 bf16", LaunchProfile(64, 64, 6, 4, 5), True),
    ("kv=32768 16q/1kv d256 bf16", LaunchProfile(64, 64, 6, 4, 3), True),
    ("kv=32768 16q/1kv d256 fp8", LaunchProfile(64, 64, 6, 4, 5), True),
    ("kv=32768 16q/1kv d256 fp8", LaunchProfile(64, 128, 6, 4, 3), False),
    ("kv=32768 16q/1kv d256 fp8", LaunchProfile(64, 32, 12, 4, 4, addresses_ahead=True), True),  # 112 KB: 2 per SM
    # addresses ahead: one buffer per stage (225 KB compiled; 4 x 64 KB + 32 KB cannot fit)
    ("kv=32768 16q/1kv d256 bf16", LaunchProfile(64, 64, 12, 8, 3, addresses_ahead=True), True),
    ("kv=32768 16q/1kv d256 bf16", LaunchProfile(64, 64, 6, 4, 4, addresses_ahead=True), False),
])
def test_shared_memory_estimate_keeps_the_deep_pipelines_that_fit(label, profile, fits):
    (case,) = [c for c in workloads.WORKLOADS["mtp-verify"].cases if label in c.label]
    reason = tune.prune_reason(profile, tune.case_shape_key(case), KNOWN_DEVICES["NVIDIA_H200"])
    assert (reason is None) == fits, reason
    assert 6 in tune.field_values(tune.case_shape_key(case))["num_stages"]


def test_sweeps_of_a_split_profile_also_try_the_wave_matched_split_count():
    (case,) = [c for c in workloads.WORKLOADS["mtp-verify"].cases if "kv=32768 16q/1kv d256 bf16" in c.label]
    key, h200 = tune.case_shape_key(case), KNOWN_DEVICES["NVIDIA_H200"]
    one_per_sm = LaunchProfile(64, 64, 6, 4, 3)  # ~160 KB of shared memory: one program per SM
    tiles = [p.short() for p in tune.sweep_candidates(one_per_sm, "tile_n", key, h200)]
    assert "m64/n32/s6/w4/st3/rowmajor" in tiles and "m64/n32/s12/w4/st3/rowmajor" in tiles  # half the tile fits two
    assert tune.wave_matched(LaunchProfile(64, 64, 6, 4, 5), one_per_sm, key, h200).num_splits == 6
    unsplit = LaunchProfile(64, 64, 1, 4, 3)
    assert {p.num_splits for p in tune.sweep_candidates(unsplit, "tile_n", key, h200)} == {1}
    assert {p.num_stages for p in tune.sweep_candidates(unsplit, "num_warps", key, h200)} == {3}
    # 20 sequences fill 1 and 2 waves of 132 slots with 6 and 13 splits; 1 split fills 20 (starves_slots)
    assert [p.num_splits for p in tune.sweep_candidates(one_per_sm, "num_splits", key, h200)] == list(
        tune.field_values(key)["num_splits"][1:]) + [6, 13]


def test_split_sweep_tries_the_counts_that_fill_whole_waves():
    """20 sequences x 1 KV head at two programs per SM (264 slots): 13 splits fill one wave (260),
    26 two; the powers of two reach neither (16 splits = 320 programs, a second wave 21 % full)."""
    (case,) = [c for c in workloads.WORKLOADS["mtp-verify"].cases if "kv=32768 16q/1kv d256 bf16" in c.label]
    key, h200 = tune.case_shape_key(case), KNOWN_DEVICES["NVIDIA_H200"]
    start = LaunchProfile.from_short("m64/n16/s12/w4/st4/ahead")
    assert select.program_slots(start, key, h200) == 264
    assert tune.wave_full_splits(start, key, h200) == [13, 26]
    splits = [p.num_splits for p in tune.sweep_candidates(start, "num_splits", key, h200)]
    assert 13 in splits and 26 in splits and len(splits) == len(set(splits))
    many = tune.case_shape_key(next(c for c in workloads.WORKLOADS["gqa-decode"].cases if "kv=32768" in c.label))
    assert tune.wave_full_splits(LaunchProfile.from_short("m16/n128/s1/w4/st2"), many, h200) == []  # 512 programs


def test_split_sweep_skips_counts_that_starve_the_sms():
    """Counts whose programs fill under a quarter of the program slots are not measured when the KV
    range could take twice as many splits (v15: 1.07-116x slower than the bucket's best); the
    start's own count stays, and a short KV range keeps its few splits."""
    h200 = KNOWN_DEVICES["NVIDIA_H200"]
    (mtp,) = [c for c in workloads.WORKLOADS["mtp-verify"].cases if "kv=32768 16q/1kv d256 bf16" in c.label]
    key = tune.case_shape_key(mtp)
    start = LaunchProfile.from_short("m64/n16/s13/w4/st5/ahead/wgmma")  # 264 slots, 20 sequences x 1 KV head
    splits = {p.num_splits for p in tune.sweep_candidates(start, "num_splits", key, h200)}
    assert 1 not in splits and 2 not in splits and {4, 13, 26} <= splits  # 4 x 20 = 80 programs >= 264 / 4
    assert tune.starves_slots(dataclasses.replace(start, num_splits=3), key, h200)
    assert not tune.starves_slots(dataclasses.replace(start, num_splits=4), key, h200)
    starving = dataclasses.replace(start, num_splits=2)
    assert starving in tune.sweep_candidates(starving, "num_splits", key, h200)  # the start is kept
    (long,) = [c for c in workloads.WORKLOADS["long-request"].cases if "q=1 kv=131072 16q/1kv d256 fp8" in c.label]
    long_key = tune.case_shape_key(long)
    long_start = LaunchProfile.from_short("m16/n64/s256/w4/st3")
    assert {p.num_splits for p in tune.sweep_candidates(long_start, "num_splits", long_key, h200)} >= {128, 256}
    assert all(p.num_splits >= 66 for p in tune.sweep_candidates(long_start, "num_splits", long_key, h200))
    short_key = ShapeKey(**long_key.bucket() | {"kv_len": 60})  # one tile of 64 keys: nothing to split
    assert not tune.starves_slots(dataclasses.replace(long_start, num_splits=1), short_key, h200)


@pytest.mark.parametrize("tile,stages,other_tile,matched_stages", [
    (32, 3, 128, 2),  # two 32-token buffers in flight -> one 128-token buffer
    (32, 3, 64, 2),
    (32, 3, 16, 4),  # four 16-token buffers, capped at the three Triton allocates
    (64, 2, 32, 3),
])
def test_tile_sweeps_also_try_the_pipeline_matched_stage_count(tile, stages, other_tile, matched_stages):
    key = tune.case_shape_key(workloads.WORKLOADS["gqa-decode"].cases[0])
    start = LaunchProfile(16, tile, 1, 4, stages)
    assert tune.pipeline_matched(LaunchProfile(16, other_tile, 1, 4, stages), start).num_stages == matched_stages
    assert LaunchProfile(16, other_tile, 1, 4, matched_stages) in tune.sweep_candidates(
        start, "tile_n", key, KNOWN_DEVICES["NVIDIA_H200"])


def test_the_cap_cuts_the_candidates_not_on_record():
    """Records of earlier runs count against --max-candidates and are read back for free, so the
    cap must cut only the candidates not on record (v8: a resumed H200 run capped at 21 cut the
    split sweep at its first four values, all on record, and never measured 13 and 26)."""
    (case,) = [c for c in workloads.WORKLOADS["mtp-verify"].cases if "kv=32768 16q/1kv d256 bf16" in c.label]
    key, h200 = tune.case_shape_key(case), KNOWN_DEVICES["NVIDIA_H200"]
    start = LaunchProfile.from_short("m64/n16/s12/w4/st4/ahead")
    batch = [c for c in tune.sweep_candidates(start, "num_splits", key, h200) if c != start]
    recorded = {c.short() for c in batch if c.num_splits in (1, 2, 4, 8, 16, 32, 64, 128, 256)}
    picked = tune.within_budget(batch, recorded, spent=17, cap=21)
    assert [c.num_splits for c in picked if c.short() not in recorded] == [13, 26]
    assert {c.short() for c in picked} >= recorded  # read back, free
    assert tune.within_budget(batch, recorded, spent=20, cap=21)[-1].num_splits == 13
    assert all(c.short() in recorded for c in tune.within_budget(batch, recorded, spent=21, cap=21))


def test_tiny_run_writes_a_table_the_dispatcher_finds_and_a_rerun_resumes(tmp_path, monkeypatch):
    argv = ["--kernel", "unified", "--workload", "gqa-decode", "--tiny", "--max-candidates", "3", "--jobs", "0"]
    summary = tune.run_tuning(tune_args(tmp_path, *argv))
    assert all(not r.error for r in summary.results) and summary.measured == 6 and summary.reused == 0

    table = read_table(tmp_path)
    assert table["meta"]["kernel_hash"] == {"unified": tables.kernel_hash("unified")}
    assert table["meta"]["workloads"] == ["gqa-decode"]
    report = (tmp_path / "report.md").read_text()
    tables.clear_cache()
    for case in workloads.WORKLOADS["gqa-decode"].tiny:
        kw = case.build(DEVICE).kwargs
        key = api.unified_shape_key(kw["q"], kw["k_cache"], kw["block_table"], kw["max_seqlen_q"], kw["max_seqlen_k"])
        found = tables.lookup(key, DeviceInfo.current().name, tmp_path / "tables")
        assert found is not None, f"no tuned entry for {case.label}"
        profile, entry = found
        assert entry["key"] == key.bucket() and entry["case"] == case.label
        assert profile == LaunchProfile.from_dict(entry["profile"])
        assert entry["rel_l2"] < 1e-2 and entry["speedup"] > 0 and isinstance(entry["bitwise"], bool)
        assert case.label in report
    assert "| unified | gqa-decode | B=3 q=1 8q/2kv d64 bf16 |" in report

    recorded = read_results(tmp_path)
    assert len(recorded) == 6 and all(r["status"] == "ok" for r in recorded)
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("the rerun started a worker"))
    again = tune.run_tuning(tune_args(tmp_path, *argv))
    # the cap counts the records of the first run, so the rerun only reads some of them back
    assert again.measured == 0 and 0 < again.reused <= 6
    assert read_results(tmp_path) == recorded
    # the rerun starts each bucket at its fastest record if that beats the default by --min-gain
    # (the first run's order-dependent moves may have stopped short of it: a later, faster
    # candidate within --min-gain of an earlier move); nothing on record is faster, so it stays
    min_gain = tune_args(tmp_path, *argv).min_gain
    rerun = {json.dumps(e["key"]): e for e in read_table(tmp_path)["entries"]}
    assert rerun.keys() == {json.dumps(e["key"]) for e in table["entries"]}
    for key, entry in rerun.items():
        records = [r for r in recorded if json.dumps(r["key"]) == key]
        fastest = min(records, key=lambda r: r["ms"])
        default = next(r for r in records if r["profile"] == entry["default_profile"])
        expected = fastest if fastest["ms"] < default["ms"] * (1 - min_gain) else default
        assert entry["profile"] == expected["profile"] and entry["tuned_ms"] == expected["ms"]


def test_a_rerun_resumes_each_bucket_at_the_fastest_profile_on_record(tmp_path, monkeypatch):
    argv = ["--kernel", "unified", "--workload", "gqa-decode", "--tiny", "--jobs", "0"]
    tune.run_tuning(tune_args(tmp_path, *argv, "--max-candidates", "3"))
    recorded = read_results(tmp_path)
    target = recorded[2]  # the first bucket's third candidate: a search capped at two never measures it
    assert len({json.dumps(r["key"]) for r in recorded[:3]}) == 1
    target["ms"] = 1e-6  # an earlier run found this profile fastest
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recorded))
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("the rerun started a worker"))
    tune.run_tuning(tune_args(tmp_path, *argv, "--max-candidates", "2"))
    entries = {json.dumps(e["key"], sort_keys=True): e for e in read_table(tmp_path)["entries"]}
    assert entries[json.dumps(target["key"], sort_keys=True)]["profile"] == target["profile"]


def test_a_table_tuned_for_older_kernel_sources_gives_the_search_its_start(tmp_path):
    case = workloads.WORKLOADS["gqa-decode"].tiny[0]
    key, device = tune.case_shape_key(case), DeviceInfo.current()
    default = tune.dispatch.untuned_selection(key, device).profile
    previous = dataclasses.replace(default, num_warps=2 if default.num_warps != 2 else 4, tile_n=16)
    path = tables.table_path(device.name, tmp_path / "tables")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"meta": {"triton": "3.6.0", "kernel_hash": {"unified": "older-source"}},
                                "entries": [{"key": key.bucket(), "profile": previous.to_dict()}]}))
    with pytest.warns(UserWarning, match="kernel source changed"):
        assert tables.lookup(key, device.name, tmp_path / "tables") is None  # stale: never dispatched
    assert tables.previous_profiles(key, device.name, tmp_path / "tables") == [previous]
    tune.run_tuning(tune_args(tmp_path, "--kernel", "unified", "--workload", "gqa-decode", "--tiny", "--match",
                              case.label, "--jobs", "0", "--max-candidates", "2"))
    measured = [LaunchProfile.from_dict(r["profile"]) for r in read_results(tmp_path)]
    assert measured == [default, previous]  # the capped search measured the old optimum right after the default


def test_re_tuning_one_workload_keeps_the_other_stale_profiles_as_first_guesses(tmp_path):
    """After a kernel change the workloads are re-tuned one run at a time: the first run's table
    must not drop the stale entries of the buckets later runs will tune (they start from them)."""
    tuned, later = workloads.WORKLOADS["gqa-decode"].tiny[0], workloads.WORKLOADS["sparse-decode"].tiny[0]
    device = DeviceInfo.current()
    keys = [tune.case_shape_key(c) for c in (tuned, later)]
    olds = [dataclasses.replace(tune.dispatch.untuned_selection(k, device).profile, tile_n=16, num_warps=2) for k in keys]
    path = tables.table_path(device.name, tmp_path / "tables")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"meta": {"triton": "3.6.0", "kernel_hash": {"unified": "old", "sparse": "old"}},
                                "entries": [{"key": k.bucket(), "profile": p.to_dict()} for k, p in zip(keys, olds)]}))
    tune.run_tuning(tune_args(tmp_path, "--kernel", "unified", "--workload", "gqa-decode", "--tiny", "--match",
                              tuned.label, "--jobs", "0", "--max-candidates", "1"))
    table = read_table(tmp_path)
    assert [e["key"] for e in table["entries"]] == [keys[0].bucket()]  # only the fresh entry is dispatched
    assert tables.previous_profiles(keys[1], device.name, tmp_path / "tables") == [olds[1]]
    fresh = LaunchProfile.from_dict(table["entries"][0]["profile"])
    assert tables.previous_profiles(keys[0], device.name, tmp_path / "tables") == [fresh]  # re-tuned: no stale guess


def test_an_interrupted_run_writes_the_buckets_it_finished(tmp_path, monkeypatch, capsys):
    argv = ["--kernel", "unified", "--workload", "gqa-decode", "--tiny", "--jobs", "0", "--max-candidates", "1"]
    tune_bucket = tune.Tuner.tune
    calls = []

    def interrupted_on_the_second_bucket(self, task):
        calls.append(task.label)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return tune_bucket(self, task)

    monkeypatch.setattr(tune.Tuner, "tune", interrupted_on_the_second_bucket)
    assert tune.run(tune_args(tmp_path, *argv)) == 130
    assert "interrupted" in capsys.readouterr().out
    entries = read_table(tmp_path)["entries"]
    assert [e["case"] for e in entries] == calls[:1]
    assert len(read_results(tmp_path)) == 1


def _sparse_task(args):
    [task] = tune.plan_tasks(args)
    candidates, _, _, _ = tune.plan_case(task, DeviceInfo.current())
    return task, candidates


def test_aborting_and_hanging_candidates_are_recorded_and_the_table_is_written(tmp_path, monkeypatch, capsys):
    argv = ["--kernel", "sparse", "--workload", "sparse-decode", "--tiny", "--match", "24q/2kv d32 bf16",
            "--max-candidates", "4", "--jobs", "0", "--timeout", "10"]
    args = tune_args(tmp_path, *argv)
    task, candidates = _sparse_task(args)
    aborts, hangs = candidates[1], candidates[2]
    monkeypatch.setenv(tune.FAULT_ENV, f"abort:{aborts.short()},hang:{hangs.short()}")
    # An existing table: a unified entry tuned with today's kernel is kept; a sparse entry tuned with other
    # sparse source is dropped.
    bucket = dict(task.key.bucket(), kernel="unified", query_class="decode")
    stale = dict(task.key.bucket(), num_tokens=999)
    (tmp_path / "tables").mkdir()
    tables.table_path(DeviceInfo.current().name, tmp_path / "tables").write_text(json.dumps({
        "meta": {"triton": __import__("triton").__version__,
                 "kernel_hash": {"unified": tables.kernel_hash("unified"), "sparse": "0ld"}, "workloads": ["gqa-decode"]},
        "entries": [{"key": bucket, "profile": LaunchProfile(16, 32).to_dict()},
                    {"key": stale, "profile": LaunchProfile(16, 32).to_dict()}],
    }))

    assert tune.run(args) == 0
    status = {LaunchProfile.from_dict(r["profile"]): r for r in read_results(tmp_path)}
    assert status[aborts]["status"] == "faulted" and "SIGABRT" in status[aborts]["error"]
    assert status[hangs]["status"] == "timeout"
    assert len(status) == 4 and sum(r["status"] == "ok" for r in status.values()) == 2
    out = capsys.readouterr().out
    assert f"{aborts.to_dict()!r}, 'faulted" in out and f"{hangs.to_dict()!r}, 'timeout" in out

    table = read_table(tmp_path)
    keys = [e["key"] for e in table["entries"]]
    assert bucket in keys and stale not in keys and task.key.bucket() in keys
    assert set(table["meta"]["workloads"]) == {"gqa-decode", "sparse-decode"}
    tuned = next(e for e in table["entries"] if e["key"] == task.key.bucket())
    assert LaunchProfile.from_dict(tuned["profile"]) not in (aborts, hangs)
    report = (tmp_path / "report.md").read_text()
    assert task.label in report and "Blocked(" in report


def test_a_candidate_that_kills_a_compile_worker_is_recorded(tmp_path, monkeypatch):
    # --min-gain 0.9: interpreter timings must not move the search off the default, whose sweeps
    # plan_case lists
    argv = ["--kernel", "sparse", "--workload", "sparse-decode", "--tiny", "--match", "3q/1kv d32 fp8",
            "--max-candidates", "4", "--jobs", "2", "--min-gain", "0.9"]
    args = tune_args(tmp_path, *argv)
    _, candidates = _sparse_task(args)
    # candidates[1] is the lone addresses-ahead variant (timed alone); 2 and 3 are compiled as a batch
    monkeypatch.setenv(tune.FAULT_ENV, f"abort:{candidates[2].short()}")
    summary = tune.run_tuning(args)
    [result] = summary.results
    assert not result.error and result.count("faulted") == 1
    faulted = result.measured[candidates[2].short()]
    assert faulted.status == "faulted" and faulted.phase == "compile"
    assert all(result.measured[p.short()].status == "ok" for p in (*candidates[0:2], candidates[3]))
    assert read_table(tmp_path)["entries"][0]["key"] == result.task.key.bucket()


@pytest.mark.parametrize("num_blocks,kept", [(1, 1), (2, 17), (4096, 16), (4097, 17), (48, 16)])
def test_compile_workers_build_small_caches_that_specialise_alike(num_blocks, kept, monkeypatch):
    """A compile worker's zero inputs keep every shape but the caches' page count, which shrinks to
    one Triton specialises the same way (1, a multiple of 16, or neither); strides stay, even a
    page stride of two caches interleaved in one tensor."""
    assert tune.compile_blocks(num_blocks) == kept
    assert (kept == 1) == (num_blocks == 1) and (kept % 16 == 0) == (num_blocks % 16 == 0)
    page_stride = 2 * 16 * 2 * 64  # K and V interleaved: [blocks, 2, page, heads, D]
    cache = {"shape": [num_blocks, 16, 2, 64], "stride": [page_stride, 128, 64, 1], "dtype": "bfloat16"}
    table = {"shape": [3, 40], "stride": [40, 1], "dtype": "int32"}
    state = tune._WorkerState()
    monkeypatch.setattr(state, "_use_kernel", lambda kernel, part=None: None)
    state.setup_zeros({"kernel": "unified", "signature_id": "zeros b", "signature": {
        "k_cache": cache, "v_cache": cache, "block_table": table, "max_seqlen_q": {"value": 4}}})
    [inputs] = state.inputs
    for name in ("k_cache", "v_cache"):
        assert list(inputs[name].shape) == [kept, 16, 2, 64] and list(inputs[name].stride()) == cache["stride"]
        assert inputs[name].dtype == torch.bfloat16 and not inputs[name].any()
    assert list(inputs["block_table"].shape) == [3, 40] and not inputs["block_table"].any()
    assert inputs["max_seqlen_q"] == 4 and state.setup_id == "zeros b"


@pytest.mark.parametrize("argv, env, message", [
    (["--kernel", "unified", "--workload", "gqa-decode", "--tiny"], "explode:m16", "PAGEDATTN_TUNE_FAULT"),
    (["--kernel", "unified", "--workload", "sparse-decode", "--tiny"], "", "runs the sparse kernel"),
    (["--workload", "gqa-decode", "--tiny", "--rows", "64"], "", "--rows applies to sparse"),
    (["--workload", "gqa-decode", "--tiny", "--device", "NVIDIA_H200"], "", "--device applies to --dry-run"),
    (["--workload", "gqa-decode", "--tiny", "--match", "nothing like this"], "", "no case label"),
])
def test_bad_requests_fail_with_a_message_before_any_work(tmp_path, monkeypatch, capsys, no_workers, argv, env, message):
    monkeypatch.setenv(tune.FAULT_ENV, env)
    assert tune.run(tune_args(tmp_path, *argv)) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "results.jsonl").exists()


def test_a_table_tuned_in_passes_names_each_entrys_pass(tmp_path):
    """Buckets re-tuned one workload at a time: every entry keeps the command of the pass that
    measured it (the first pass's entries survive the second), and meta's command is the last."""
    first = ["--kernel", "unified", "--workload", "gqa-decode", "--tiny", "--max-candidates", "1", "--jobs", "0"]
    second = ["--kernel", "unified", "--workload", "gqa-verify", "--tiny", "--max-candidates", "1", "--jobs", "0"]
    tune.run_tuning(tune_args(tmp_path, *first))
    tune.run_tuning(tune_args(tmp_path, *second))
    table = read_table(tmp_path)
    commands = {e["case"]: e["command"] for e in table["entries"]}
    decode = [case.label for case in workloads.WORKLOADS["gqa-decode"].tiny]
    verify = [case.label for case in workloads.WORKLOADS["gqa-verify"].tiny]
    assert set(decode + verify) <= set(commands)
    assert all("--workload gqa-decode " in commands[label] for label in decode)
    assert all("--workload gqa-verify " in commands[label] for label in verify)
    assert "--workload gqa-verify " in table["meta"]["command"]


@pytest.mark.parametrize("other_tile,matched_stages", [
    (64, 2),  # four 32-token buffers in flight -> two 64-token ones, one per stage
    (16, 6),  # eight 16-token buffers, capped at the deepest pipeline a profile may ask for
])
def test_pipeline_matching_counts_one_buffer_per_stage_when_reading_ahead(other_tile, matched_stages):
    start = LaunchProfile(64, 32, 12, 4, 4, addresses_ahead=True)
    other = LaunchProfile(64, other_tile, 12, 4, 4, addresses_ahead=True)
    assert tune.pipeline_matched(other, start).num_stages == matched_stages


def test_reading_addresses_ahead_is_also_tried_with_three_stages():
    """Read ahead, num_stages - 1 tiles are in flight (ops/common.py): the sweep pairs the flag
    with a three-stage pipeline as well as toggling it at the current depth."""
    key = tune.case_shape_key(workloads.WORKLOADS["gqa-decode"].cases[0])
    start = LaunchProfile(16, 128, 1, 4, 2)
    swept = tune.sweep_candidates(start, "addresses_ahead", key, KNOWN_DEVICES["NVIDIA_H200"])
    assert set(swept) == {start, LaunchProfile(16, 128, 1, 4, 2, addresses_ahead=True),
                          LaunchProfile(16, 128, 1, 4, 3, addresses_ahead=True)}
    deep = LaunchProfile(16, 64, 1, 4, 4)
    assert LaunchProfile(16, 64, 1, 4, 4, addresses_ahead=True) in tune.sweep_candidates(
        deep, "addresses_ahead", key, KNOWN_DEVICES["NVIDIA_H200"])


def test_a_first_guess_is_measured_in_every_bucket_and_recorded_in_the_command(tmp_path):
    """--first-guess carries a pair of fields found in an A/B (no one-field move reaches it) into
    every bucket it fits, and the table records it in its command line."""
    guess = "m32/n16/s1/w4/st3/rowmajor/ahead"
    argv = ["--kernel", "unified", "--workload", "gqa-decode", "--tiny", "--max-candidates", "2", "--jobs", "0",
            "--first-guess", guess, "--first-guess", "m16/n16/s1/w4/st2"]
    summary = tune.run_tuning(tune_args(tmp_path, *argv))
    assert all(guess in r.measured for r in summary.results)
    assert all("m16/n16/s1/w4/st2/rowmajor" in r.measured for r in summary.results)
    assert f"--first-guess {guess}" in read_table(tmp_path)["meta"]["command"]
    with pytest.raises(SystemExit):
        tune.parse_args(["--first-guess", "m32/n16/ahead"])


def test_a_mixed_batch_is_two_buckets_and_its_short_launch_prunes_what_it_cannot_run(no_workers):
    """The call, and its sequences of at most 8 queries in a launch of their own under the short-part
    key; that launch's candidates run the Triton kernel, in one pass or split. Other workloads add no
    bucket."""
    tasks = tune.plan_tasks(tune.parse_args(["--kernel", "unified", "--workload", "mixed-batch", "gqa-decode"]))
    mixed = [t for t in tasks if t.ref.workload == "mixed-batch"]
    assert len(mixed) == 4 and len(tasks) == 4 + len(workloads.WORKLOADS["gqa-decode"].cases)
    for short, call in zip(mixed[::2], mixed[1::2]):  # the short launch first: the call is timed with its profile
        assert (call.ref.part, short.ref.part) == (None, tune.SHORT_PART)
        assert short.key == select.short_part_key(call.key) and short.label == call.label + " [q<=8 launch]"
    h200, key = KNOWN_DEVICES["NVIDIA_H200"], mixed[0].key
    default = tune.default_profile(mixed[0], h200)  # the dispatcher's no-table short launch: 31,104 keys, 8 segments
    assert default == select.segmented_short(select.untuned_selection(key, h200), key).profile
    assert default.num_splits == 8
    reason = tune.prune_reason(LaunchProfile.from_short("m64/n16/s1/w4/st4/wgmma"), key, h200, tune.SHORT_PART)
    assert reason == "the short sequences' launch runs the Triton kernel"
    for profile in ("m32/n64/s1/w4/st3", "m32/n64/s2/w4/st3"):
        assert tune.prune_reason(LaunchProfile.from_short(profile), key, h200, tune.SHORT_PART) is None
    splits = {c.num_splits for c in tune.plan_case(mixed[0], h200)[0]}
    assert len(splits) > 1, "the short launch's first sweep tries split counts"


def test_a_tuned_short_launch_is_what_a_mixed_call_runs(tmp_path, monkeypatch):
    """Tune the tiny BF16 mixed batch: the short launch's bucket is measured on its own rows alone;
    a call then runs the chunks' launch and the short launches `select.short_launches` makes with that
    bucket's tuned profile, and matches the float64 reference on a NaN-prefilled output."""
    argv = ["--kernel", "unified", "--workload", "mixed-batch", "--tiny", "--match", "bf16", "--max-candidates", "2",
            "--jobs", "0"]
    summary = tune.run_tuning(tune_args(tmp_path, *argv))
    assert len(summary.results) == 2 and all(not r.error for r in summary.results)
    short = next(r for r in summary.results if r.task.ref.part == tune.SHORT_PART)
    assert all(r["status"] == "ok" and r["rel_l2"] < 1e-2 for r in read_results(tmp_path) if r["key"] == short.task.key.bucket())

    monkeypatch.setattr(tables, "TABLE_DIR", tmp_path / "tables")
    tables.clear_cache()
    kw = workloads.WORKLOADS["mixed-batch"].tiny[0].build(DEVICE, seed=3).kwargs
    plan = api.choose_unified_plan(kw["q"], kw["k_cache"], kw["block_table"], kw["max_seqlen_q"], kw["max_seqlen_k"])
    assert [p.selection.source for p in plan[:2]] == ["table", "table"]
    assert plan[1].selection.profile == short.best.profile
    assert plan[1:] == select.short_launches(short.task.key, plan[1].selection, DeviceInfo.current())
    out = api.unified_attention(**kw, out=torch.full_like(kw["q"], float("nan")))
    assert not out.isnan().any() and reference.rel_l2(out, reference.unified_attention(**kw)) < 1e-2
    tables.clear_cache()


@pytest.mark.parametrize("shape,launches", [
    (workloads.WORKLOADS["mixed-batch"].tiny[0].shape, (2, 2, 1)),
    (workloads.UnifiedShape((40, 1, 4, 8, 1, 6), (60, 50, 30, 90, 20, 40), 16, 2, 64), (3, 3, 1)),
], ids=["group4", "group8"])
def test_a_mixed_call_is_timed_in_the_launches_its_profile_would_make(monkeypatch, shape, launches):
    """`planned_call`: a Triton profile for the call, with a tuned short profile on narrower blocks,
    one pass or split, makes two launches (the chunks, then the short sequences), or at a group of 8,
    where 16-row blocks hold 2 queries, three (the sequences of 5-8 queries in the third,
    `select.short_launches`); a short profile the plan cannot take (as wide as the call's) leaves one
    launch. All match the float64 reference on a NaN-prefilled output."""
    kw = shape.build(DEVICE, seed=5).kwargs
    key = api.unified_shape_key(kw["q"], kw["k_cache"], kw["block_table"], kw["max_seqlen_q"], kw["max_seqlen_k"])
    ranges, launch = [], api._unified_launch
    monkeypatch.setattr(api, "_unified_launch", lambda *args: ranges.append(args[-2:]) or launch(*args))
    expected = reference.unified_attention(**kw)
    for short, count in zip(("m16/n32/s1/w4/st2", "m16/n32/s2/w4/st2", "m64/n32/s1/w4/st2"), launches):
        ranges.clear()
        short_plan = select.short_launches(select.short_part_key(key), select.Selection(
            LaunchProfile.from_short(short), "table"), DeviceInfo.current())
        out = tune.planned_call(key, short_plan, LaunchProfile(64, 32, 1), torch.full_like(kw["q"], float("nan")), **kw)
        assert len(ranges) == count and not out.isnan().any() and reference.rel_l2(out, expected) < 1e-2
