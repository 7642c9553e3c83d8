"""v29 call 4: what bounds BF16 MTP verify on the H200. The 16-bit keys-as-rows kernel whole, its loop's math
alone and its copies alone (build/v29/ukr16_parts.py, from make_variants.py; the parts give wrong results by design), the
wgmma kernel at the H200 table's profile, and the streaming read of bench.measure_ceilings, each timed
(graph timing, variants alternated, min of 3 rounds: `scripts/ab_probe.check_and_time`, whose rel-L2 column
is meaningful for the whole kernels only) and then replayed back to back for ~2 s while nvidia-smi samples
the SM clock and board power every 100 ms (the caller's background log): the window of each variant is
written with its start and end times, so its mean power and clock can be read off the log.
Usage: parts_power.py OUT.jsonl"""
import dataclasses, functools, json, sys
import torch
sys.path.insert(0, "scripts")
sys.path.insert(0, "build/v29")
from ab_probe import check_and_time, sustained, unified_variant  # noqa: E402
from pagedattn import LaunchProfile, reference, workloads  # noqa: E402
from pagedattn.bench import _input_sets, stream_read  # noqa: E402
from pagedattn.ops.verify_wgmma import launch_verify_wgmma  # noqa: E402
from pagedattn.profiles.tables import previous_profiles  # noqa: E402
from pagedattn.tune import case_shape_key  # noqa: E402
from ukr16_parts import launch_parts  # noqa: E402

ROWS = LaunchProfile(64, 64, 1, 8, 2, keys_as_rows=True)


def parts_variant(profile, do_copy, do_math):
    def call(kw, out):
        launch_parts(kw["q"], kw["k_cache"], kw["v_cache"], out, kw["cu_seqlens_q"], kw["seq_lens"], kw["block_table"],
                     max_seqlen_q=kw["max_seqlen_q"], softmax_scale=kw["q"].shape[-1] ** -0.5, k_scale=kw["k_scale"],
                     v_scale=kw["v_scale"], profile=profile, do_copy=do_copy, do_math=do_math)
    return call


if __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        x = torch.rand((1 << 30) // 4, device="cuda")
        partials = torch.empty(x.numel() // 16384, device="cuda")
        read = functools.partial(stream_read, x, partials, 16384, 8)
        start, end, rate = sustained(read)
        row = {"variant": "stream-read-1GiB", "start": start, "end": end, "ms_sustained": 1e3 / rate,
               "tbps_sustained": x.numel() * 4 * rate / 1e12}
        print(json.dumps(row), flush=True)
        f.write(json.dumps(row) + "\n")
        del x, partials
        for case in workloads.get_workload("mtp-verify").cases:
            if case.shape.kv_dtype != "bf16" or "kv=32768" not in case.label:
                continue
            prof = previous_profiles(case_shape_key(case), "NVIDIA_H200")[0]
            splits = 132 // (len(case.shape.query_lens) * case.shape.num_kv_heads)
            rows = dataclasses.replace(ROWS, num_splits=splits)
            variants = {f"wgmma/{prof.short()}": unified_variant(launch_verify_wgmma, prof),
                        f"rows/s{splits}": parts_variant(rows, True, True),
                        f"rows-math-only/s{splits}": parts_variant(rows, False, True),
                        f"rows-copies-only/s{splits}": parts_variant(rows, True, False)}
            sets = _input_sets(case, "cuda")
            row = {"case": case.label, "bytes": sets[0].bytes_moved,
                   **check_and_time(variants, sets, reference.unified_attention(**sets[0].kwargs))}
            print(json.dumps({k: v for k, v in row.items() if k != "ms_all"}), flush=True)
            f.write(json.dumps(row) + "\n")
            kw = sets[0].kwargs
            out = torch.empty_like(kw["q"])
            for name, fn in variants.items():
                start, end, rate = sustained(lambda fn=fn: fn(kw, out))
                row = {"case": case.label, "variant": name, "start": start, "end": end, "ms_sustained": 1e3 / rate}
                print(json.dumps(row), flush=True)
                f.write(json.dumps(row) + "\n")
            del sets
            torch.cuda.empty_cache()
