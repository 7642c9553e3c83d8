"""pagedattn as the paged attention of Hugging Face transformers' continuous batching.

    from pagedattn.integrations.transformers import register
    name = register()                                  # -> "paged|pagedattn"
    model = AutoModelForCausalLM.from_pretrained(repo, dtype=torch.bfloat16, attn_implementation=name)
    outputs = model.generate_batch(prompts, generation_config=GenerationConfig(do_sample=False, ...))

(or `model.set_attn_implementation(name)` on a loaded model). Every attention layer of every
continuous-batching step then makes one `pagedattn.unified_attention` call over transformers' own
paged cache, for batches that mix prefill chunks and decode tokens.

Contract with transformers 5.17.0
---------------------------------
Read from that version's `generation/continuous_batching/` (cache.py, cache_manager.py,
input_outputs.py, continuous_api.py, initialization.py) and `integrations/{eager,sdpa,flash}_paged.py`.

* Registration: `transformers.AttentionInterface.register(key, fn)` adds `key` to the global table
  that `attn_implementation` is checked against. Continuous batching runs only keys that start
  with "paged|" (`switch_to_cb_friendly_attn` prefixes any other name), so `register(name)` registers
  "paged|<name>". transformers treats any name containing "flash" as FlashAttention (it would import
  flash kernels and size the cache for them) and any "org/repo" name as a hub kernel, so such names
  are refused. For a name other than "paged|eager"/"paged|sdpa", continuous batching builds no
  [tokens, cache] attention mask (`attn_mask_is_needed`), and `masking_utils` builds none for a name
  it does not know.
* Call: each attention module calls `fn(module, query, key, value, attention_mask, scaling=...,
  sliding_window=..., **batch)` with query [1, Hq, T, D] and key/value [1, Hkv, T, D] (T = the
  batch's query tokens, all sequences packed), attention_mask None, and from
  `ContinuousBatchingIOs.get_model_kwargs` the `batch` kwargs used here:
      cache          PagedAttentionCache. Per layer group, key_cache[i] / value_cache[i] of shape
                     [(num_blocks + 2) * block_size, Hkv, D] for the group's i-th layer
                     (`layer_index_to_group_indices[layer] = (group, i)`); `sliding_windows[layer]`
                     is 1 for full attention, else the window; `block_size`.
      cu_seq_lens_q  [B + 1] int32.
      cu_seq_lens_k  [B + 1] int32 KV lengths, cumulative: a dict keyed "full_attention" /
                     "sliding_attention" when the model has both layer types (max_seqlen_k too).
      max_seqlen_q, max_seqlen_k   host ints.
      write_index    one [T] int64 tensor per group: the flat cache row each new token goes to
                     (padding tokens -> a trash row).
      read_index     one int64 tensor per group: the flat cache rows of every sequence's keys in
                     order, sequence after sequence (offsets cu_seq_lens_k); empty when no sequence
                     has cached tokens yet.
      block_table    set only for the `flash_attn_with_kvcache` decode path, which transformers
                     enables for FlashAttention names only; it is never set for this adapter.
  The function returns (attn_output [1, T, Hq, D], None).
* Cache layout: a full-attention layer stores token p of a sequence at flat row
  `block * block_size + p % block_size`, `block` being its (p // block_size)-th block, so the flat
  tensor *viewed* as [num_blocks + 2, block_size, Hkv, D] is exactly our `k_cache`/`v_cache` (the two
  extra blocks are transformers' read/write trash; unified_attention never reads them).
  A sliding-window layer keeps a ring of `window` slots per sequence (position p at ring slot
  p % window, spread over ceil(window / block_size) blocks). That is not expressible as a block
  table: a page of the ring holds positions of different logical pages when block_size does not
  divide the window, and a prefill chunk that wraps the ring overwrites keys that the chunk's own
  earlier queries still need, which is why transformers reads the window before writing.

Work per call
-------------
Full-attention layers, no copy of the cache:
  1. write the new K and V into their rows: two `index_copy_` of T x Hkv x D (what transformers'
     own paged implementations do);
  2. block table [B, ceil(max_seqlen_k / block_size)] int32 whose entry (s, j) is the block of
     token j * block_size of sequence s: read_index[cu_seq_lens_k[s] + j * block_size] // block_size
     (write_index when read_index is empty, since every sequence is then a fresh prompt whose rows
     are its write rows): about eight small integer ops (arange, offsets, clamp, gather, divide,
     casts) over B x pages elements, recomputed per layer;
  3. seq_lens = diff(cu_seq_lens_k) (one op);
  4. one unified_attention over the cache views.
  No host synchronisation; the only host values are the shapes and max_seqlen_k.
Sliding-window layers:
  transformers' `cache.update` writes the new K/V into the ring and gathers, for each sequence, its
  last min(past, window - 1) cached keys followed by the new ones into a [sum of KV lengths, Hkv, D]
  tensor — the copy transformers' eager/sdpa/flash-varlen paths make for *every* layer. That
  tensor is viewed as a cache of one-token pages, block table row s = cu_seq_lens_k[s] + [0,
  max_seqlen_k) (B x max_seqlen_k int32), and unified_attention runs on it with
  sliding_window=window. Extra cost over a full-attention layer: copying at most window - 1 +
  chunk keys and values per sequence.
Attention sinks (`module.sinks`, e.g. gpt-oss) go to the kernel as float32 (a cast of Hq values when
the model stores them in bf16); `scaling` and `softcap` are passed through.

Requirements and behaviour
--------------------------
* The model must run in bf16 or fp16 (the cache takes the model's dtype; our kernel takes those);
  head_dim at most 256. Query, key and value are used through views (unit last stride, which the
  attention modules' [.., heads, head_dim] projections give; a query without it is made contiguous).
* Query rows past cu_seq_lens_q[-1] (padding that transformers adds only with CUDA graphs or
  torch.compile) are left unwritten, as FlashAttention's varlen kernel leaves them.
* Tensor parallelism needs nothing extra: each rank's attention module sees its own heads and
  transformers divides the cache's KV heads by the TP size.
* A forward outside continuous batching (no `cache` kwarg) raises ValueError.
* On a machine without a GPU, import pagedattn before transformers: transformers imports triton,
  and pagedattn must select Triton's interpreter before that happens.

Around the call (transformers 5.17's choices for any non-flash name, this one included)
---------------------------------------------------------------------------------------
* The cache auto-sizing budgets memory for an attention mask that is never built for this name,
  so an auto-sized cache is somewhat smaller than it could be; pass num_blocks/max_batch_tokens in
  ContinuousBatchingConfig to size it yourself.
* CUDA graphs and async batching are off by default (transformers turns them on by default for
  flash names only); ContinuousBatchingConfig(use_cuda_graph=True, use_async_batching=True) asks
  for them. Those paths, and torch.compile of the model, are untested with this adapter.
* `transformers serve --attn-implementation` accepts only eager, sdpa, flash_attention_2/3,
  flex_attention or a hub kernel ("org/repo"), so the CLI server cannot select this adapter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from transformers import AttentionInterface

if TYPE_CHECKING:
    from transformers.generation.continuous_batching import PagedAttentionCache

from ..api import Q_DTYPES, unified_attention

PAGED_PREFIX = "paged|"
_FULL, _SLIDING = "full_attention", "sliding_attention"


def register(name: str = "pagedattn") -> str:
    """Register the adapter with transformers and return the `attn_implementation` to use ("paged|<name>")."""
    base = name.removeprefix(PAGED_PREFIX)
    if not base or "flash" in base or "/" in base or ":" in base:
        raise ValueError(f"name must be non-empty and free of 'flash', '/' and ':' (transformers would take it for "
                         f"FlashAttention or a hub kernel), got {name!r}")
    key = PAGED_PREFIX + base
    AttentionInterface.register(key, paged_attention_forward)
    return key


def paged_attention_forward(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    *,
    scaling: float | None = None,
    softcap: float | None = None,
    cache: PagedAttentionCache | None = None,
    cu_seq_lens_q: torch.Tensor | None = None,
    cu_seq_lens_k: torch.Tensor | dict[str, torch.Tensor] | None = None,
    max_seqlen_q: int | None = None,
    max_seqlen_k: int | dict[str, int] | None = None,
    read_index: list[torch.Tensor] | None = None,
    write_index: list[torch.Tensor] | None = None,
    block_table: torch.Tensor | None = None,
    **unused,
) -> tuple[torch.Tensor, None]:
    """One layer of a continuous-batching step: write the new K/V into transformers' paged cache and
    attend over it with `pagedattn.unified_attention`. See the module docstring for the contract."""
    if cache is None:
        raise ValueError("the pagedattn attention implementation serves transformers' continuous batching "
                         "(generate_batch, init_continuous_batching) and needs its paged cache; use another "
                         "attn_implementation for a plain forward or generate")
    if block_table is not None:
        raise ValueError("block_table is only set for transformers' FlashAttention decode path; the pagedattn "
                         "adapter reads read_index/write_index")
    if query.dtype not in Q_DTYPES:
        raise TypeError(f"pagedattn needs the model in bfloat16 or float16 (got {query.dtype}): load it with "
                        f"dtype=torch.bfloat16")
    layer = module.layer_idx
    window = cache.sliding_windows[layer]
    sliding = window > 1
    if isinstance(cu_seq_lens_k, dict):
        layer_type = _SLIDING if sliding else _FULL
        cu_seq_lens_k, max_seqlen_k = cu_seq_lens_k[layer_type], max_seqlen_k[layer_type]
    group, index_in_group = cache.layer_index_to_group_indices[layer]

    if sliding:
        k_cache, v_cache = cache.update(key, value, layer, read_index, write_index)  # [KV tokens, Hkv, D]
        k_cache, v_cache = k_cache.unsqueeze(1), v_cache.unsqueeze(1)  # one-token pages
        table = _token_table(cu_seq_lens_k, max_seqlen_k)
    else:
        k_rows, v_rows = cache.key_cache[index_in_group], cache.value_cache[index_in_group]
        k_rows.index_copy_(0, write_index[group], key[0].transpose(0, 1))
        v_rows.index_copy_(0, write_index[group], value[0].transpose(0, 1))
        k_cache = k_rows.view(-1, cache.block_size, *k_rows.shape[1:])
        v_cache = v_rows.view(k_cache.shape)
        rows = read_index[group] if read_index[group].numel() else write_index[group]
        table = _page_table(rows, cu_seq_lens_k, max_seqlen_k, cache.block_size)

    q = query[0].transpose(0, 1)  # [T, Hq, D]
    if q.stride(-1) != 1:
        q = q.contiguous()
    sinks = getattr(module, "sinks", None)
    out = unified_attention(
        q, k_cache, v_cache,
        cu_seqlens_q=cu_seq_lens_q.to(torch.int32),
        seq_lens=torch.diff(cu_seq_lens_k).to(torch.int32),
        block_table=table,
        max_seqlen_q=max_seqlen_q,
        max_seqlen_k=max_seqlen_k,
        softmax_scale=scaling,
        sliding_window=window if sliding else None,
        softcap=softcap,
        sinks=None if sinks is None else sinks.to(torch.float32),
    )
    return out.unsqueeze(0), None


def _page_table(token_rows: torch.Tensor, cu_seq_lens_k: torch.Tensor, max_seqlen_k: int,
                block_size: int) -> torch.Tensor:
    """[B, pages] int32 block ids from the flat cache rows of every sequence's tokens (offsets cu_seq_lens_k).

    Entry (s, j) is the block of token j * block_size of sequence s. Pages past a sequence's length
    hold some other row's block; the kernel never reads past seq_lens."""
    num_pages = -(-max_seqlen_k // block_size)
    page_starts = torch.arange(num_pages, device=token_rows.device, dtype=torch.int64) * block_size
    first_tokens = (cu_seq_lens_k[:-1, None].to(torch.int64) + page_starts).clamp_(max=token_rows.numel() - 1)
    return torch.div(token_rows[first_tokens], block_size, rounding_mode="floor").to(torch.int32)


def _token_table(cu_seq_lens_k: torch.Tensor, max_seqlen_k: int) -> torch.Tensor:
    """[B, max_seqlen_k] int32 block table over one-token pages stored sequence after sequence."""
    offsets = torch.arange(max_seqlen_k, device=cu_seq_lens_k.device, dtype=torch.int32)
    return cu_seq_lens_k[:-1, None].to(torch.int32) + offsets
