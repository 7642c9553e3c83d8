"""pagedattn: Triton paged attention kernels with measured per-GPU launch profiles.

Public API:
  unified_attention  — causal paged attention for batches mixing prefill, decode and verify
  sparse_attention   — per-row top-k sparse paged GQA attention
  LaunchProfile      — explicit launch parameters (`profile=` override)
  reference          — float64 references with the same signatures
  set_content_checks — opt-in checks of index-tensor contents (costs a device sync per call)

On a machine without a CUDA device the kernels run under Triton's interpreter
(TRITON_INTERPRET=1 is set before they are defined, and the interpreter's bf16 dot is fixed).
"""

from .interpreter import use_interpreter_if_no_gpu as _use_interpreter_if_no_gpu

_use_interpreter_if_no_gpu()

from . import reference  # noqa: E402
from .api import set_content_checks, sparse_attention, unified_attention  # noqa: E402
from .device import DeviceInfo  # noqa: E402
from .interpreter import interpreter_active as _interpreter_active, patch_interpreter_dot as _patch  # noqa: E402
from .profiles.types import LaunchProfile  # noqa: E402

if _interpreter_active():
    _patch()

__all__ = ["unified_attention", "sparse_attention", "LaunchProfile", "DeviceInfo", "reference", "set_content_checks"]
__version__ = "0.1.0"
