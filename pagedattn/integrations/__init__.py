"""Adapters that plug pagedattn's kernels into other libraries' serving paths.

Each submodule imports its library on import; importing this package imports none of them.
  transformers — the paged attention of Hugging Face transformers' continuous batching
"""
