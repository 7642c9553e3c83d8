"""What the launch-profile layer needs to know about a GPU, as a plain value.

`DeviceInfo` is read from torch once per device (`DeviceInfo.current()`); `INTERPRETER` is the
fixed value used when kernels run under `TRITON_INTERPRET=1` on a machine without a GPU. All
profile selection is a pure function of this value, so every branch can be tested on a CPU by
constructing the `DeviceInfo` of the GPU in question (see `KNOWN_DEVICES`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import torch

from .interpreter import interpreter_active


@dataclass(frozen=True)
class DeviceInfo:
    vendor: str  # "nvidia", "amd" or "interpreter"
    arch: str  # "sm90", "sm80", "gfx942", "gfx950", "interpreter"
    name: str  # normalised marketing name, used to key tuned tables: "NVIDIA_H200"
    num_sms: int  # streaming multiprocessors (NVIDIA) or compute units (AMD)
    l2_bytes: int
    smem_per_block: int  # shared memory (LDS) a single program may use, in bytes

    @property
    def is_rocm(self) -> bool:
        return self.vendor == "amd"

    @staticmethod
    def current(device: torch.device | int | None = None) -> "DeviceInfo":
        """The DeviceInfo of `device` (default: the current CUDA device), or INTERPRETER."""
        if interpreter_active() or not torch.cuda.is_available():
            return INTERPRETER
        index = torch.cuda.current_device() if device is None else torch.device("cuda", device).index
        return _read_cuda_device(0 if index is None else index)


def normalise_name(name: str) -> str:
    """'NVIDIA H200' -> 'NVIDIA_H200'; 'AMD Instinct MI300X' -> 'AMD_INSTINCT_MI300X'."""
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper()


@functools.lru_cache(maxsize=None)
def _read_cuda_device(index: int) -> DeviceInfo:
    props = torch.cuda.get_device_properties(index)
    if torch.version.hip is not None:
        vendor, arch = "amd", props.gcnArchName.split(":")[0]
    else:
        vendor, arch = "nvidia", f"sm{props.major}{props.minor}"
    smem = getattr(props, "shared_memory_per_block_optin", 0) or getattr(props, "shared_memory_per_block", 0)
    return DeviceInfo(
        vendor=vendor,
        arch=arch,
        name=normalise_name(props.name),
        num_sms=props.multi_processor_count,
        l2_bytes=getattr(props, "L2_cache_size", 0),
        smem_per_block=smem or 48 * 1024,
    )


INTERPRETER = DeviceInfo(
    vendor="interpreter", arch="interpreter", name="TRITON_INTERPRETER", num_sms=4, l2_bytes=1 << 20,
    smem_per_block=1 << 20,
)

# Reference values of GPUs the rules know about, for CPU tests of the dispatcher.
KNOWN_DEVICES = {
    "NVIDIA_H200": DeviceInfo("nvidia", "sm90", "NVIDIA_H200", 132, 60 * 2**20, 227 * 1024),
    "NVIDIA_H100_80GB_HBM3": DeviceInfo("nvidia", "sm90", "NVIDIA_H100_80GB_HBM3", 132, 50 * 2**20, 227 * 1024),
    "NVIDIA_A100_SXM4_80GB": DeviceInfo("nvidia", "sm80", "NVIDIA_A100_SXM4_80GB", 108, 40 * 2**20, 163 * 1024),
    "AMD_INSTINCT_MI300X": DeviceInfo("amd", "gfx942", "AMD_INSTINCT_MI300X", 304, 4 * 2**20, 64 * 1024),
    "AMD_INSTINCT_MI355X": DeviceInfo("amd", "gfx950", "AMD_INSTINCT_MI355X", 256, 4 * 2**20, 160 * 1024),
    "AMD_INSTINCT_MI250X": DeviceInfo("amd", "gfx90a", "AMD_INSTINCT_MI250X", 110, 8 * 2**20, 64 * 1024),
}
