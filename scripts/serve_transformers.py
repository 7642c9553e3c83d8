"""transformers continuous batching with pagedattn vs its own "paged|sdpa" and "paged|eager".

A Qwen3-architecture causal LM is built from a config with seeded random weights (no download),
a few hundred requests (256 by default) of seeded random prompt lengths are generated greedily with
`model.generate_batch` once per attention implementation, and the results go to --json:

  output_tokens_per_s  generated tokens / wall time of the timed generate_batch call. Before it, the
                       same generate_batch runs once untimed (its wall time is `cold_wall_s`): it
                       compiles the Triton kernels for every launch profile the batches select and
                       warms the libraries, as an engine does at start-up. A shorter warm-up leaves
                       profiles of later batch shapes to compile inside the timed run (1-2 s each).
  ttft_s               per request: first token's timestamp - the request's creation time
                       (GenerationOutput.timestamps with record_timestamps=True, and created_time,
                       which generate_batch sets when it queues the request). All requests are
                       queued at once, so this includes waiting for earlier requests.
  inter_token_s        differences of consecutive token timestamps of each request (the time
                       between the continuous-batching steps that served it).
  identical_requests   per pair of implementations, requests with identical greedy tokens (at bf16,
                       near-ties in the logits make even sdpa and eager differ on a few).
  logits               per pair, max |logit difference| over the first --logit-steps steps of a
                       separate short run on the first --logit-requests prompts. generate_batch
                       queues requests while its loop already runs, so its batches depend on thread
                       timing; that run queues them before starting the same manager, so every
                       implementation sees the same batches. Steps are compared until the first one
                       where a greedy token differs (the inputs diverge after it).

    PYTHONPATH=. python3 scripts/serve_transformers.py --json out.json                 # H200 preset
    PYTHONPATH=. python3 scripts/serve_transformers.py --layout 16q1kv-d256 --requests 64 --json out.json
    PYTHONPATH=. python3 scripts/serve_transformers.py --layout tiny --layers 1 --requests 4 \\
        --max-new-tokens 2 --min-prompt 8 --max-prompt 24 --json /tmp/smoke.json     # CPU smoke run

"paged|eager" materialises [heads, batch tokens, batch KV tokens] scores per layer: drop it
(--impls pagedattn,sdpa) for workloads much larger than the preset.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time

import torch

import pagedattn  # first: on a CPU machine it selects Triton's interpreter before transformers imports triton
import transformers
from transformers import AutoModelForCausalLM, ContinuousBatchingConfig, GenerationConfig, Qwen3Config, Qwen3ForCausalLM

from pagedattn.integrations.transformers import register

# name -> (query heads, KV heads, head size, hidden size, MLP size)
LAYOUTS = {
    "32q8kv-d128": (32, 8, 128, 4096, 12288),
    "16q1kv-d256": (16, 1, 256, 4096, 12288),
    "32q2kv-d256": (32, 2, 256, 4096, 12288),
    "tiny": (4, 2, 32, 64, 128),
}
IMPLEMENTATIONS = {"pagedattn": register(), "sdpa": "paged|sdpa", "eager": "paged|eager"}


def build_model(layout: str, layers: int, vocab: int, dtype: torch.dtype, device: str, seed: int,
                sliding_window: int | None = None) -> Qwen3ForCausalLM:
    """Random-weight Qwen3 causal LM; the same arguments give the same weights (seeded before construction)."""
    q_heads, kv_heads, head_dim, hidden, mlp = LAYOUTS[layout]
    config = Qwen3Config(
        vocab_size=vocab, hidden_size=hidden, intermediate_size=mlp, num_hidden_layers=layers,
        num_attention_heads=q_heads, num_key_value_heads=kv_heads, head_dim=head_dim,
        max_position_embeddings=32768, use_sliding_window=sliding_window is not None,
        sliding_window=sliding_window, max_window_layers=layers // 2,
    )
    torch.manual_seed(seed)
    with torch.device(device):
        # parameters created in `dtype`; rotary frequencies stay float32, as from_pretrained keeps them
        # (a float32 model cast with .to(bfloat16) rounds them too: a different model, whose logits
        # drift from the checkpoint's by up to 0.7 at 500 positions)
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    return model.eval()


def make_prompts(count: int, min_len: int, max_len: int, vocab: int, seed: int) -> list[list[int]]:
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(min_len, max_len + 1, (count,), generator=generator).tolist()
    return [torch.randint(0, vocab, (n,), generator=generator).tolist() for n in lengths]


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    nearest_rank = {f"p{p}": ordered[min(len(ordered) - 1, p * len(ordered) // 100)] for p in (50, 90, 99)}
    return nearest_rank | {"mean": statistics.fmean(ordered)}


def greedy(max_new_tokens: int) -> GenerationConfig:
    return GenerationConfig(max_new_tokens=max_new_tokens, do_sample=False, eos_token_id=-1, pad_token_id=0)


def synchronize(device: str) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def timed_generate_batch(model, prompts, max_new_tokens: int, device: str, cb_settings: dict) -> dict:
    """The same generate_batch twice, the first untimed (a warm-up): tokens and a summary of the second."""
    start = time.perf_counter()
    model.generate_batch(prompts, generation_config=greedy(max_new_tokens),
                         continuous_batching_config=ContinuousBatchingConfig(**cb_settings))
    synchronize(device)
    cold_wall = time.perf_counter() - start
    start = time.perf_counter()
    outputs = model.generate_batch(prompts, generation_config=greedy(max_new_tokens),
                                   continuous_batching_config=ContinuousBatchingConfig(**cb_settings),
                                   record_timestamps=True)
    synchronize(device)
    wall = time.perf_counter() - start
    outputs = list(outputs.values())
    generated = sum(len(out.generated_tokens) for out in outputs)
    ttft = [out.timestamps[0] - out.created_time for out in outputs if out.timestamps]
    gaps = [b - a for out in outputs if out.timestamps for a, b in zip(out.timestamps, out.timestamps[1:])]
    return {
        "tokens": [out.generated_tokens for out in outputs],
        "summary": {
            "wall_s": wall, "cold_wall_s": cold_wall, "requests": len(outputs), "generated_tokens": generated,
            "failed_requests": sum(out.error is not None for out in outputs),
            "output_tokens_per_s": generated / wall, "ttft_s": percentiles(ttft), "inter_token_s": percentiles(gaps),
        },
    }


def first_step_logits(model, prompts, steps: int, cb_settings: dict) -> list[torch.Tensor]:
    """Logits of the first `steps` continuous-batching steps (each request generates `steps` tokens, so
    there are at least that many), with the requests queued before the loop starts."""
    recorded = []

    def keep(module, args, out):
        if len(recorded) < steps:
            recorded.append(out[0].float().cpu())

    hook = model.lm_head.register_forward_hook(keep)
    manager = model.init_continuous_batching(generation_config=greedy(steps),
                                             continuous_batching_config=ContinuousBatchingConfig(**cb_settings))
    try:
        request_ids = manager.add_requests(prompts, max_new_tokens=steps)
        manager.start()
        finished = 0
        while finished < len(request_ids):
            result = manager.get_result(timeout=600)
            if result is None:
                raise RuntimeError("continuous batching stopped before finishing")
            if result.error is not None:
                raise RuntimeError(f"request {result.request_id} failed: {result.error}")
            finished += result.is_finished()
    finally:
        manager.stop(block=True)
        manager.destroy()
        hook.remove()
    return recorded


def compare_logits(baseline: list[torch.Tensor], other: list[torch.Tensor]) -> dict:
    per_step = []
    for want, got in zip(baseline, other):
        if want.shape != got.shape:
            break
        per_step.append((got - want).abs().max().item())
        if not torch.equal(want.argmax(-1), got.argmax(-1)):
            break
    return {"steps_compared": len(per_step), "max_abs_diff_per_step": per_step,
            "max_abs_diff": max(per_step, default=None),
            "max_abs_logit": max((want.abs().max().item() for want in baseline[: len(per_step)]), default=None)}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", required=True, help="where to write the results")
    parser.add_argument("--layout", choices=sorted(LAYOUTS), default="32q8kv-d128")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=32768, help="151936 for Qwen3's own vocabulary")
    parser.add_argument("--sliding-window", type=int, default=None,
                        help="make the upper half of the layers sliding-window layers with this window")
    parser.add_argument("--requests", type=int, default=256)
    parser.add_argument("--min-prompt", type=int, default=32)
    parser.add_argument("--max-prompt", type=int, default=512)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--block-size", type=int, default=256, help="transformers' default block size")
    parser.add_argument("--num-blocks", type=int, default=1024,
                        help="fixed, so that every implementation gets the same cache")
    parser.add_argument("--max-batch-tokens", type=int, default=1024,
                        help="also bounds paged|eager's score tensors: heads x this x the batch's KV tokens")
    parser.add_argument("--impls", default=",".join(IMPLEMENTATIONS), help="comma-separated subset of "
                        + ", ".join(IMPLEMENTATIONS) + " (pagedattn always runs)")
    parser.add_argument("--logit-requests", type=int, default=16)
    parser.add_argument("--logit-steps", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["bfloat16", "float16"], default="bfloat16")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    impls = ["pagedattn"] + [name for name in args.impls.split(",") if name != "pagedattn"]
    unknown = set(impls) - set(IMPLEMENTATIONS)
    if unknown:
        raise SystemExit(f"unknown --impls {sorted(unknown)}; choose from {sorted(IMPLEMENTATIONS)}")
    cb_settings = dict(block_size=args.block_size, num_blocks=args.num_blocks, max_batch_tokens=args.max_batch_tokens)
    model = build_model(args.layout, args.layers, args.vocab, getattr(torch, args.dtype), args.device, args.seed,
                        args.sliding_window)
    prompts = make_prompts(args.requests, args.min_prompt, args.max_prompt, args.vocab, args.seed + 1)
    q_heads, kv_heads, head_dim, hidden, mlp = LAYOUTS[args.layout]
    report = {
        "config": vars(args) | {
            "q_heads": q_heads, "kv_heads": kv_heads, "head_dim": head_dim, "hidden": hidden, "mlp": mlp,
            "prompt_tokens": sum(map(len, prompts)),
            "device_name": torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else "cpu",
            "versions": {"transformers": transformers.__version__, "torch": torch.__version__,
                         "pagedattn": pagedattn.__version__},
        },
        "results": {}, "identical_requests": {}, "logits": {},
    }
    tokens, logits = {}, {}
    for name in impls:
        model.set_attn_implementation(IMPLEMENTATIONS[name])
        run = timed_generate_batch(model, prompts, args.max_new_tokens, args.device, cb_settings)
        tokens[name] = run["tokens"]
        report["results"][name] = run["summary"]
        logits[name] = first_step_logits(model, prompts[: args.logit_requests], args.logit_steps, cb_settings)
        summary = run["summary"]
        print(f"{name:10s} {summary['output_tokens_per_s']:10.1f} tok/s  wall {summary['wall_s']:.2f} s  "
              f"ttft p50 {summary['ttft_s'].get('p50', float('nan')):.3f} s  "
              f"itl p50 {summary['inter_token_s'].get('p50', float('nan')) * 1e3:.2f} ms", flush=True)
    for first, second in itertools.combinations(impls, 2):
        pair = f"{first}~{second}"
        same = sum(a == b for a, b in zip(tokens[first], tokens[second]))
        report["identical_requests"][pair] = same
        report["logits"][pair] = compare_logits(logits[first], logits[second])
        print(f"{pair}: {same}/{len(prompts)} requests with identical greedy tokens, max |logit diff| over "
              f"{report['logits'][pair]['steps_compared']} steps {report['logits'][pair]['max_abs_diff']}", flush=True)
    with open(args.json, "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
