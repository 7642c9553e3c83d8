"""Running the kernels under Triton's CPU interpreter (`TRITON_INTERPRET=1`).

Triton 3.6's interpreter stores bf16 values as their raw uint16 bits and its `tl.dot` multiplies
those integers, so a bf16 dot returns garbage. `patch_interpreter_dot` makes the interpreter's
dot upcast bf16 and 8-bit float operands to float32 first (the GPU's matrix units accumulate in
float32 too). It is idempotent and only touches the interpreter.
"""

from __future__ import annotations

import os
import sys

import numpy as np

_PATCHED = False
original_dot = None  # the interpreter's own create_dot, kept for the test that shows its bug


def interpreter_active() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def use_interpreter_if_no_gpu() -> None:
    """Select the interpreter before any kernel is defined when no CUDA device exists."""
    import torch

    if not torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") in (None, ""):
        if "triton" in sys.modules:
            raise ImportError("no CUDA device: import pagedattn before anything that imports triton (e.g. "
                              "transformers), or set TRITON_INTERPRET=1, so that the interpreter is chosen "
                              "before kernels are defined")
        os.environ["TRITON_INTERPRET"] = "1"


def patch_interpreter_dot() -> None:
    global _PATCHED, original_dot
    if _PATCHED:
        return
    import triton.language as tl
    from triton.runtime import interpreter

    original = original_dot = interpreter.InterpreterBuilder.create_dot

    def upcast(handle):
        dtype = handle.dtype.scalar
        if dtype == tl.bfloat16:
            data = (handle.data.astype(np.uint32) << 16).view(np.float32)
        elif dtype.is_floating() and dtype.primitive_bitwidth == 8:
            data = interpreter._convert_float(handle.data, dtype, tl.float32, None).view(np.float32)
            data = data.reshape(handle.data.shape)
        else:
            return handle
        return interpreter.TensorHandle(data, tl.float32)

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        return original(self, upcast(a), upcast(b), d, input_precision, max_num_imprecise_acc)

    interpreter.InterpreterBuilder.create_dot = create_dot
    _PATCHED = True
