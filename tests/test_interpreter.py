"""The interpreter's bf16 dot is wrong in Triton 3.6 and our patch fixes it."""

import pytest
import torch
import triton
import triton.language as tl

from pagedattn.interpreter import interpreter_active

pytestmark = pytest.mark.skipif(not interpreter_active(), reason="interpreter-only behaviour")


@triton.jit
def _dot_kernel(a_ptr, b_ptr, c_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    a = tl.load(a_ptr + offs[:, None] * N + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * N + offs[None, :])
    tl.store(c_ptr + offs[:, None] * N + offs[None, :], tl.dot(a, b))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float8_e4m3fn, torch.float16])
def test_patched_dot_matches_float32_matmul(dtype):
    a = torch.randn(16, 16).to(dtype)
    b = torch.randn(16, 16).to(dtype)
    c = torch.full((16, 16), float("nan"))
    _dot_kernel[(1,)](a, b, c, N=16)
    expected = a.float() @ b.float()
    torch.testing.assert_close(c, expected, rtol=1e-5, atol=1e-5)


def test_unpatched_bf16_dot_is_wrong():
    """Documents the interpreter bug the patch exists for (skips once Triton fixes it)."""
    from triton.runtime import interpreter

    import pagedattn.interpreter as patch_module

    patched = interpreter.InterpreterBuilder.create_dot
    original = patch_module.original_dot
    assert original is not None and original is not patched
    a = torch.randn(16, 16).to(torch.bfloat16)
    b = torch.randn(16, 16).to(torch.bfloat16)
    c = torch.zeros(16, 16)
    interpreter.InterpreterBuilder.create_dot = original
    try:
        _dot_kernel[(1,)](a, b, c, N=16)
    finally:
        interpreter.InterpreterBuilder.create_dot = patched
    if torch.allclose(c, a.float() @ b.float(), rtol=1e-3, atol=1e-3):
        pytest.skip("this Triton's interpreter computes bf16 dots correctly; the patch is no longer needed")
    assert not torch.allclose(c, a.float() @ b.float(), rtol=1e-2, atol=1e-2)
