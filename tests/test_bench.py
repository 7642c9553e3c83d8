"""`pagedattn bench` / `pagedattn check` and the benchmark's adapters, on tiny cases.

On a CPU machine everything runs under the Triton interpreter; the same tests run on a GPU.
"""

import argparse
import dataclasses
import json
import warnings

import pytest
import torch

from pagedattn import bench, reference
from pagedattn.device import KNOWN_DEVICES
from pagedattn.workloads import WORKLOADS, UnifiedShape


def _run(add_arguments, argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(argv)
    return args.func(args)


def _reference(kernel: str, kw: dict) -> torch.Tensor:
    return (reference.unified_attention if kernel == "unified" else reference.sparse_attention)(**kw)


def _tiny(workload: str, label_part: str):
    return next(c for c in WORKLOADS[workload].tiny if label_part in c.label)


# --------------------------------------------------------------------------- ceilings


@pytest.mark.parametrize("block,warps", bench.READ_VARIANTS)
def test_stream_read_reads_every_element(device, block, warps):
    x = torch.rand(3 * block + 5, device=device)  # a partial last block
    partials = bench.stream_read(x, torch.full((4,), float("nan"), device=device), block, warps)
    assert float(partials.sum()) == pytest.approx(float(x.sum(dtype=torch.float64)), rel=1e-5)
    x[-1] += 1000.0  # the masked tail is read too
    assert float(bench.stream_read(x, partials, block, warps).sum()) == pytest.approx(
        float(x.sum(dtype=torch.float64)), rel=1e-5)


def test_stream_read_rejects_a_wrong_partial_count(device):
    with pytest.raises(ValueError, match="partials"):
        bench.stream_read(torch.rand(100, device=device), torch.empty(3, device=device), 64, 4)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")
def test_a_call_that_cannot_be_captured_is_timed_and_leaves_the_cuda_rng_usable(capsys):
    """A host sync inside the timed call fails the graph capture: time_calls says so, times it
    eagerly, and random draws on the device work afterwards (a failed capture had left the default
    generator in capture mode: every later torch.randn on the GPU raised)."""
    x = torch.ones(1024, device="cuda")
    ms = bench.time_calls([lambda: x.sum().item()], warmup_ms=1.0, rep_ms=5.0)
    assert ms > 0 and "capture failed" in capsys.readouterr().err
    assert torch.randn(8, device="cuda").isfinite().all()


def test_measure_ceilings_runs(device):
    ceilings = bench.measure_ceilings(device, 1 << 20, 64)
    for key in ("hbm_read_tbps", "torch_sum_tbps", "copy_tbps", "matmul_bf16_tflops"):
        assert ceilings[key] > 0, key
    assert ceilings["hbm_read_tbps"] == max(ceilings["hbm_read_tbps_by_variant"].values())
    assert len(ceilings["hbm_read_tbps_by_variant"]) == len(bench.READ_VARIANTS)
    assert "HBM read, torch.sum" in bench.format_ceilings(ceilings)


def test_gather_products_multiplies_the_selected_rows(device):
    """out[row, kv] = column sums of (Q K^T) V over the row's valid selections, Q = 1 / head (16 rows)."""
    kw = _tiny("sparse-prefill", "24q/2kv d32 bf16").build(device, seed=3).kwargs
    k_cache, v_cache = kw["k_cache"], kw["v_cache"]
    tokens = bench.resolve_selections(kw["indices"], None, kw["block_table"], kw["token_to_req"], k_cache.shape[0],
                                      k_cache.shape[1])
    tokens[0, 5:9] = -1  # unused slots are not read
    head = k_cache.shape[3]
    out = bench.gather_products(k_cache, v_cache, tokens, torch.full((tokens.shape[0], 2, head), float("nan"),
                                                                     device=device), 16, 4, 1)
    flat_k, flat_v = k_cache.flatten(0, 1).double(), v_cache.flatten(0, 1).double()
    expected = torch.zeros_like(out, dtype=torch.float64)
    for row in range(tokens.shape[0]):
        ids = tokens[row][tokens[row] >= 0].long()
        for kv in range(2):
            expected[row, kv] = 16 * (flat_k[ids, kv].sum(1) / head) @ flat_v[ids, kv]
    assert reference.rel_l2(out, expected) < 1e-2  # S is rounded to bf16 before S.V


def test_sparse_gather_ceiling_times_every_variant_and_keeps_the_fastest(device, monkeypatch):
    sets = [_tiny("sparse-prefill", "24q/2kv d32 fp8").build(device, seed=s) for s in (0, 1)]
    seen = []
    real = bench.time_calls
    monkeypatch.setattr(bench, "time_calls", lambda calls: seen.append(len(calls)) or real(calls) + len(seen))
    assert bench.sparse_gather_ceiling(sets) > 1.0  # the first variant's time, plus the offset 1
    assert seen == [len(sets)] * len(bench.GATHER_VARIANTS)


@pytest.mark.parametrize("workload,label_part", [("sparse-decode", "3q/1kv d32 bf16"), ("gqa-decode", "")])
def test_sparse_rows_carry_their_gather_ceiling(device, workload, label_part):
    """With ceilings, a sparse case's rows get the case's gather ceiling and their % of it (the
    gather's time / the row's time); unified rows get neither."""
    ceilings = {"hbm_read_tbps": 1.0, "matmul_bf16_tflops": 1.0}
    rows = bench.measure_case(WORKLOADS[workload], _tiny(workload, label_part), ["pagedattn"], device, ceilings,
                              lambda _: None)
    row = rows[0]
    if workload.startswith("sparse"):
        ceiling_ms = row["bytes_moved"] / row["gather_ceiling_tbps"] / 1e9
        assert row["pct_gather"] == pytest.approx(100 * ceiling_ms / row["time_ms"])
    else:
        assert "pct_gather" not in row and "gather_ceiling_tbps" not in row
    assert "%gath" in bench.format_table({"results": rows, "timings_meaningful": True})


# --------------------------------------------------------------------------- check


def test_check_passes_on_a_tiny_workload(capsys):
    assert _run(bench.add_check_arguments, ["--workload", "gqa-verify", "--tiny"]) == 0
    lines = capsys.readouterr().out.splitlines()
    case_lines = [line for line in lines if line.startswith("ok")]
    assert len(case_lines) == len(WORKLOADS["gqa-verify"].tiny)
    assert all("rel-L2" in line and "profile" in line for line in case_lines)


def test_check_fails_on_a_wrong_kernel(monkeypatch, capsys):
    monkeypatch.setattr(bench.api, "unified_attention", lambda *a, out, **kw: out.zero_())
    assert _run(bench.add_check_arguments, ["--workload", "gqa-verify", "--tiny"]) == 1
    assert "FAIL" in capsys.readouterr().out


# --------------------------------------------------------------------------- bench


def _scaled_reference(kernel: str, kw: dict) -> bench.Prepared:
    return bench.Prepared(lambda out: out.copy_(_reference(kernel, kw) * 1.05))


def test_wrong_providers_are_reported_as_fail(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(bench.PROVIDERS, "scaled", bench.Provider("scaled", _scaled_reference))
    silent = bench.Provider("silent", lambda kernel, kw: bench.Prepared(lambda out: None))  # writes nothing
    monkeypatch.setitem(bench.PROVIDERS, "silent", silent)
    path = tmp_path / "bench.json"
    argv = ["--workload", "gqa-decode", "--tiny", "--providers", "pagedattn", "scaled", "silent", "--json", str(path)]
    assert _run(bench.add_arguments, argv) == 1
    out = capsys.readouterr().out
    assert "FAIL scaled on gqa-decode" in out and "FAIL silent on gqa-decode" in out
    results = json.loads(path.read_text())["results"]
    by_provider = {}
    for row in results:
        by_provider.setdefault(row["provider"], []).append(row)
    assert all(r["status"] == "ok" for r in by_provider["pagedattn"])
    assert all(r["status"] == "FAIL" and r["time_ms"] is None for r in by_provider["scaled"])
    assert all(r["status"] == "FAIL" and "rel-L2" in r["reason"] for r in by_provider["silent"])


def test_bench_writes_json_and_replays_it(tmp_path, capsys):
    path = tmp_path / "bench.json"
    argv = ["--workload", "sparse-decode", "--tiny", "--providers", "pagedattn", "pagedattn-default", "torch-sdpa",
            "--json", str(path)]
    assert _run(bench.add_arguments, argv) == 0
    report = json.loads(path.read_text())
    for key in ("schema", "date", "command", "python", "torch", "triton", "device", "timings_meaningful", "tiny",
                "providers", "ceilings", "results"):
        assert key in report, key
    assert report["providers"] == ["pagedattn", "pagedattn-default", "torch-sdpa"]
    assert report["device"]["name"]
    cases = WORKLOADS["sparse-decode"].tiny
    assert len(report["results"]) == 3 * len(cases)
    for row in report["results"]:
        assert row["status"] == "ok" and row["rel_l2"] < 1e-2
        assert row["time_ms"] > 0 and row["tbps"] > 0 and row["tflops"] > 0
        assert row["bytes_moved"] > 0 and row["flops"] > 0 and row["input_sets"] >= 1
        assert set(row["speedup_vs"]) == {"pagedattn", "pagedattn-default", "torch-sdpa"} - {row["provider"]}
        if row["provider"] == "pagedattn":
            assert row["profile"]["source"] in ("explicit", "table", "rules", "default")
            assert row["repeat_ms"] > 0 and row["spread"] >= 0
        elif row["provider"] == "pagedattn-default":
            assert row["profile"]["source"] in ("rules (no table)", "default (no table)")
            assert row["profile"]["profile"]["block_m"] >= 16
        else:
            assert row["profile"] is None
    if not report["timings_meaningful"]:
        assert report["ceilings"] is None and report["tiny"]
        assert "timings mean nothing" in capsys.readouterr().out

    png = tmp_path / "bench.png"
    assert _run(bench.add_arguments, ["--from-json", str(path), "--plot", str(png)]) == 0
    captured = capsys.readouterr()
    assert "sparse-decode" in captured.out and "pagedattn-default" in captured.out
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert not png.exists() and "matplotlib is not installed" in captured.err
    else:
        assert png.stat().st_size > 0


def test_missing_providers_are_skipped_with_a_line(tmp_path, capsys):
    path = tmp_path / "bench.json"
    argv = ["--workload", "long-request", "--tiny", "--providers", "pagedattn", "torch-flex", "flashinfer", "vllm",
            "--json", str(path)]
    assert _run(bench.add_arguments, argv) == 0
    err = capsys.readouterr().err
    report = json.loads(path.read_text())
    for name in ("torch-flex", "flashinfer", "vllm"):
        reason = bench.PROVIDERS[name].missing()
        assert (f"skip provider {name}: {reason}" in err) == (reason is not None)
        assert (name in report["providers"]) == (reason is None)


def test_unknown_provider_is_an_error(capsys):
    assert _run(bench.add_arguments, ["--workload", "gqa-decode", "--providers", "nope"]) == 2
    assert "unknown provider" in capsys.readouterr().err


# --------------------------------------------------------------------------- adapters


SDPA_CASES = [
    ("mtp-verify", "16q/1kv d32 fp8"),  # FP8, GQA 16, bottom-right causal queries
    ("mtp-verify", "kv=100 32q/2kv d32 bf16"),
    ("gqa-decode", "kv=70"),  # one token: the group folded into query rows
    ("mixed-batch", "fp8"),  # prefill chunks, decode and verify in one batch
    ("dense-prefill", "q=kv=40"),
    ("sparse-prefill", "24q/2kv d32 fp8"),
    ("sparse-prefill", "5q/1kv d32 bf16"),
    ("sparse-decode", "3q/1kv d32 fp8"),
]


@pytest.mark.parametrize("workload,label_part", SDPA_CASES)
def test_sdpa_adapter_matches_reference(workload, label_part, device):
    kernel = WORKLOADS[workload].kernel
    kw = _tiny(workload, label_part).build(device, seed=3).kwargs
    out = torch.full_like(kw["q"], float("nan"))
    bench.PROVIDERS["torch-sdpa"].prepare(kernel, kw).run(out)
    assert reference.rel_l2(out, _reference(kernel, kw)) < 1e-2


@pytest.mark.parametrize("window", [None, 7])
def test_sdpa_adapter_handles_ragged_batches_and_windows(window, device):
    shape = UnifiedShape((3, 1, 20, 1), (50, 33, 20, 9), 8, 2, 64, sliding_window=window, kv_dtype="fp8")
    kw = shape.build(device, seed=1).kwargs
    out = torch.full_like(kw["q"], float("nan"))
    bench.PROVIDERS["torch-sdpa"].prepare("unified", kw).run(out)
    assert reference.rel_l2(out, _reference("unified", kw)) < 1e-2


def test_sdpa_sparse_masks_unused_slots_and_counts(device):
    kw = _tiny("sparse-decode", "24q/2kv d32 bf16").build(device, seed=2).kwargs
    indices = kw["indices"].clone()
    indices[0] = -1  # an empty row gives 0
    indices[1, ::2] = -1
    kw = kw | {"indices": indices, "counts": torch.tensor([40, 40, 9, 40], dtype=torch.int32, device=device)}
    out = torch.full_like(kw["q"], float("nan"))
    bench.PROVIDERS["torch-sdpa"].prepare("sparse", kw).run(out)
    expected = _reference("sparse", kw)
    assert torch.count_nonzero(out[0]) == 0
    assert reference.rel_l2(out, expected) < 1e-2


def test_sdpa_adapter_refuses_softcap_and_sinks(device):
    for extra in (dict(softcap=5.0), dict(sinks=True)):
        kw = UnifiedShape((2,), (30,), 8, 2, 64, **extra).build(device).kwargs
        with pytest.raises(bench.Unsupported, match="softcap|sinks"):
            bench.PROVIDERS["torch-sdpa"].prepare("unified", kw)


@pytest.mark.parametrize("shape", [
    UnifiedShape((3, 1, 20, 1), (50, 33, 20, 9), 8, 2, 64, sliding_window=7, softcap=5.0),
    UnifiedShape((4, 4), (37, 100), 16, 1, 32, kv_dtype="fp8"),
])
def test_flex_layout_matches_reference_eagerly(shape, device):
    """The FlexAttention adapter's padding and block mask, run eagerly (no compile) on any machine."""
    from torch.nn.attention.flex_attention import flex_attention

    kw = shape.build(device, seed=4).kwargs
    out = torch.full_like(kw["q"], float("nan"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench.flex_unified(kw, flex_attention).run(out)
    assert reference.rel_l2(out, _reference("unified", kw)) < 1e-2


def test_providers_without_a_kernel_refuse_sparse(device):
    kw = _tiny("sparse-decode", "3q/1kv d32 bf16").build(device).kwargs
    with pytest.raises(bench.Unsupported, match="block mask"):
        bench.PROVIDERS["torch-flex"].prepare("sparse", kw)


def test_both_pagedattn_providers_run_a_mixed_batch_in_its_planned_launches(tmp_path):
    """The tiny mixed batches: each pagedattn provider records the launches it makes (a partitioned
    call names both profiles with their query ranges: the dispatcher's plan, or with no table
    `select.untuned_launch_plan`) and passes the float64 check."""
    path = tmp_path / "bench.json"
    argv = ["--workload", "mixed-batch", "--tiny", "--providers", "pagedattn", "pagedattn-default", "--json", str(path)]
    assert _run(bench.add_arguments, argv) == 0
    rows = json.loads(path.read_text())["results"]
    cases = {case.label: case for case in WORKLOADS["mixed-batch"].tiny}
    assert len(rows) == 2 * len(cases)
    device, launches = bench.DeviceInfo.current(), []
    for row in rows:
        assert row["status"] == "ok" and row["rel_l2"] < 1e-2
        kw = cases[row["case"]].build("cpu").kwargs
        key = bench._shape_key("unified", kw)
        if row["provider"] == "pagedattn":
            plan = bench.api.choose_unified_plan(kw["q"], kw["k_cache"], kw["block_table"], kw["max_seqlen_q"],
                                                 kw["max_seqlen_k"])
        else:
            plan = bench.untuned_launch_plan(key, device)
        assert row["profile"]["short"] == bench._plan_dict(plan)["short"]
        launches.append(len(plan))
    if device.vendor == "interpreter":  # the tiny cases' plans there; a GPU's depend on its table, not asserted
        assert launches == [2, 2, 2, 2]


def test_a_plan_of_three_launches_names_each_query_range():
    """The H200's no-table plan for the bench's mixed batch at a group of 8: the chunks, the sequences of
    at most 4 queries, those of 5-8 (`select.short_launches`), each profile with its range and source."""
    shape = dataclasses.replace(WORKLOADS["mixed-batch"].cases[0].shape, num_kv_heads=4)
    key = bench._shape_key("unified", shape.build("meta").kwargs)
    plan = bench.untuned_launch_plan(key, KNOWN_DEVICES["NVIDIA_H200"])
    record, ranges = bench._plan_dict(plan), ("q>8", "q<=4", "4<q<=8")
    assert record["short"] == " + ".join(f"{p.selection.profile.short()} ({r})" for p, r in zip(plan, ranges))
    assert all(f"{r}: {p.selection.source}" in record["detail"] for p, r in zip(plan, ranges))
