"""Test harness: device selection, the interpreter patch, markers and shared helpers.

Without a CUDA device, `import pagedattn` selects Triton's interpreter (TRITON_INTERPRET=1) before
any kernel is defined and patches the interpreter's bf16/fp8 `tl.dot` (see pagedattn/interpreter.py);
`test_interpreter.py` proves the patch. Tests marked `gpu` are skipped there.
"""

import pytest
import torch

import pagedattn  # noqa: F401  (selects the interpreter and patches its dot on CPU machines)
from pagedattn import reference
from pagedattn.interpreter import interpreter_active, patch_interpreter_dot

if interpreter_active():
    patch_interpreter_dot()

HAS_CUDA = torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if HAS_CUDA:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def device() -> str:
    return "cuda" if HAS_CUDA else "cpu"


def nan_like(t: torch.Tensor) -> torch.Tensor:
    """An output buffer pre-filled with NaN, so an element the kernel never writes fails the check."""
    return torch.full_like(t, float("nan"))


rel_l2 = reference.rel_l2  # tests import it from here


def assert_close_to_reference(out: torch.Tensor, ref: torch.Tensor, bound: float = 1e-2) -> None:
    assert not torch.isnan(out).any(), "output has NaN: an element was not written"
    err = rel_l2(out, ref)
    assert err < bound, f"rel-L2 {err:.3e} >= {bound:.0e}"
