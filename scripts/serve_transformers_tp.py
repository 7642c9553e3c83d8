"""transformers continuous batching with pagedattn under tensor parallelism, against one device.

    PYTHONPATH=. torchrun --nproc-per-node 2 scripts/serve_transformers_tp.py --json tp.json
    PYTHONPATH=. torchrun --nproc-per-node 2 scripts/serve_transformers_tp.py --layout tiny --layers 2 \\
        --requests 6 --max-new-tokens 3 --min-prompt 8 --max-prompt 40 --block-size 16 --num-blocks 64 \\
        --max-batch-tokens 48 --device cpu --json /tmp/tp.json                        # CPU (gloo) run

Rank 0 builds the random-weight Qwen3 model of serve_transformers.py (seeded, so the weights are
fixed by the arguments), saves it to --checkpoint-dir and generates the prompts greedily on its own
device with "paged|pagedattn" (continuous batching, `generate_batch`). Then every rank loads that
checkpoint with transformers' tensor parallelism (`DistributedConfig(tp_plan="auto")`, what the
deprecated `from_pretrained(tp_plan="auto")` becomes; loading needs `accelerate`. The default
layout, 32q/2kv x 256, gives 16q/1kv per rank on 2 ranks: q/k/v projections split by heads,
o_proj and the MLP's down projection reduce across ranks) and
pagedattn as the attention, and all ranks run the same `generate_batch`: transformers 5.17
supports continuous batching under TP (rank 0 schedules and broadcasts the requests; every rank
runs the same batches on its share of the heads, and its paged cache holds its share of the KV
heads). The JSON reports tokens/s and latencies of both runs (measured as in
serve_transformers.py), how many requests got identical greedy tokens, and the head layout the
kernel saw on each rank (recorded from its first unified_attention call).

Agreement: greedy tokens of random-weight models flip on near-ties, so the check is on logits. The
first continuous-batching steps of a short run on --logit-requests prompts are recorded three times:
on one device, under TP, and on one device with the same weights in float32 (`paged|sdpa`). Two
roundings of the same model differ by up to twice one rounding's error, so `tp_within_rounding` is
max |TP - 1 device| <= 2 x max |1 device - float32| on the first step (both in the JSON, per step).

NVLink multicast stays off (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
NVSHMEM_DISABLE_NVLS=1), and so does NCCL's graph-mixing support (NCCL_GRAPH_MIXING_SUPPORT=0,
which transformers' continuous batching recommends under TP); all are set before torch is imported.
"""

import os

os.environ.update(NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1",
                  NCCL_GRAPH_MIXING_SUPPORT="0")

import argparse  # noqa: E402
import copy  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from serve_transformers import (  # noqa: E402
    IMPLEMENTATIONS, LAYOUTS, build_model, compare_logits, first_step_logits, make_prompts, timed_generate_batch,
)
from transformers import AutoModelForCausalLM, DistributedConfig  # noqa: E402

from pagedattn.integrations import transformers as integration  # noqa: E402


class HeadLayoutRecorder:
    """Wraps the adapter's kernel call and keeps the head counts of the first call it sees."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.layout = None

    def __call__(self, q, k_cache, v_cache, **kwargs):
        if self.layout is None:
            self.layout = {"q_heads": q.shape[1], "kv_heads": k_cache.shape[2], "head_dim": q.shape[2]}
        return self.kernel(q, k_cache, v_cache, **kwargs)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", required=True, help="where rank 0 writes the results")
    parser.add_argument("--layout", choices=sorted(LAYOUTS), default="32q2kv-d256")
    parser.add_argument("--attn", choices=sorted(IMPLEMENTATIONS), default="pagedattn",
                        help="attention of both runs; transformers' own (sdpa, eager) separate TP's numerics from ours")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=32768)
    parser.add_argument("--requests", type=int, default=256)
    parser.add_argument("--min-prompt", type=int, default=32)
    parser.add_argument("--max-prompt", type=int, default=512)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--block-size", type=int, default=256)
    parser.add_argument("--num-blocks", type=int, default=1024)
    parser.add_argument("--max-batch-tokens", type=int, default=2048)
    parser.add_argument("--logit-requests", type=int, default=16, help="requests of the logit comparison run")
    parser.add_argument("--logit-steps", type=int, default=4, help="steps compared (until a greedy token differs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["bfloat16", "float16"], default="bfloat16")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda" if torch.cuda.is_available() else "cpu",
                        help="cuda: one GPU per rank (NCCL); cpu: gloo")
    parser.add_argument("--checkpoint-dir", default=os.path.join(tempfile.gettempdir(), "pagedattn-tp-model"))
    return parser.parse_args()


def progress(rank: int, start: float, step: str) -> None:
    """One line on stderr per finished step and rank, so a rank that dies says how far it got."""
    print(f"rank {rank}: {step} ({time.perf_counter() - start:.1f} s)", file=sys.stderr, flush=True)


def main() -> None:
    start = time.perf_counter()
    args = parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    q_heads, kv_heads = LAYOUTS[args.layout][:2]
    if kv_heads % world or q_heads % world:
        raise SystemExit(f"{args.layout}: {q_heads} query / {kv_heads} KV heads do not split over {world} ranks")
    device = args.device
    if device == "cuda":
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    else:
        dist.init_process_group("gloo")
    dtype = getattr(torch, args.dtype)
    cb_settings = dict(block_size=args.block_size, num_blocks=args.num_blocks, max_batch_tokens=args.max_batch_tokens)
    prompts = make_prompts(args.requests, args.min_prompt, args.max_prompt, args.vocab, args.seed + 1)
    recorder = HeadLayoutRecorder(integration.unified_attention)
    integration.unified_attention = recorder

    single = None
    if rank == 0:
        model = build_model(args.layout, args.layers, args.vocab, dtype, device, args.seed)
        model.save_pretrained(args.checkpoint_dir)
        model.set_attn_implementation(IMPLEMENTATIONS[args.attn])
        single = timed_generate_batch(model, prompts, args.max_new_tokens, device, cb_settings)
        single["summary"]["kernel_heads"] = recorder.layout
        single_logits = first_step_logits(model, prompts[: args.logit_requests], args.logit_steps, cb_settings)
        exact = copy.deepcopy(model).float()  # the same weights, computed in float32: the yardstick of rounding
        exact.set_attn_implementation(IMPLEMENTATIONS["sdpa"])
        exact_logits = first_step_logits(exact, prompts[: args.logit_requests], args.logit_steps, cb_settings)
        del model, exact
        if device == "cuda":
            torch.cuda.empty_cache()
        progress(rank, start, "single-device runs done")
    dist.barrier()

    recorder.layout = None
    model = AutoModelForCausalLM.from_pretrained(args.checkpoint_dir, dtype=dtype, attn_implementation=IMPLEMENTATIONS[args.attn],
                                                 distributed_config=DistributedConfig(tp_plan="auto"))
    progress(rank, start, "tensor-parallel model loaded")
    tp = timed_generate_batch(model, prompts, args.max_new_tokens, device, cb_settings)
    progress(rank, start, "tensor-parallel generate_batch done")
    tp_logits = first_step_logits(model, prompts[: args.logit_requests], args.logit_steps, cb_settings)
    progress(rank, start, "tensor-parallel logits recorded")
    layouts = [None] * world
    dist.all_gather_object(layouts, recorder.layout)

    if rank == 0:
        same = sum(a == b for a, b in zip(single["tokens"], tp["tokens"]))
        report = {
            "config": vars(args) | {"world_size": world, "q_heads": q_heads, "kv_heads": kv_heads,
                                    "device_name": torch.cuda.get_device_name() if device == "cuda" else "cpu"},
            "single_device": single["summary"],
            "tensor_parallel": tp["summary"] | {"kernel_heads_per_rank": layouts},
            "identical_requests": same,
            "logits": compare_logits(single_logits, tp_logits),
            "rounding": compare_logits(exact_logits, single_logits),
        }
        tp_diff, rounding = report["logits"]["max_abs_diff_per_step"][0], report["rounding"]["max_abs_diff_per_step"][0]
        report["tp_within_rounding"] = tp_diff <= 2 * rounding
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        for label, summary in (("1 device", single["summary"]), (f"TP{world}", tp["summary"])):
            print(f"{label:9s} {summary['output_tokens_per_s']:10.1f} tok/s  wall {summary['wall_s']:.2f} s",
                  flush=True)
        print(f"kernel heads per rank: {layouts} (model: {q_heads}q/{kv_heads}kv); "
              f"identical greedy tokens: {same}/{len(prompts)} requests", flush=True)
        print(f"first-step logits: TP vs 1 device max |diff| {tp_diff:.4f}; 1 device ({args.dtype}) vs the same weights "
              f"in float32 {rounding:.4f}; TP within 2x the rounding error: {report['tp_within_rounding']}", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    progress(rank, start, "process groups destroyed")


if __name__ == "__main__":
    main()
