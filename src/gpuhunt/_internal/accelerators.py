"""Known accelerators: the tables of every GPU, TPU and other accelerator gpuhunt knows by name,
the info classes their rows are, and lookups by canonical name (pure data, no I/O).

How clouds, drivers and people spell these names, and turning a spelling into a canonical name,
is `gpu_names`' job: a new chip adds a row here, a new cloud's spelling an alias there.

Order matters to callers that build dicts keyed by name from these lists: when a name is listed
more than once (A100 40 GB and 80 GB), the larger memory comes last. Where gpuhunt 0.1.x already
lists a GPU, its memory and compute capability are kept as they were there, so that `matches`
answers the same for the same offer and filter.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable
from dataclasses import dataclass
from typing import ClassVar

from gpuhunt._internal.vocabulary import PICKLED_MODULE, AcceleratorVendor, AMDArchitecture


@dataclass
class AcceleratorInfo:
    vendor: ClassVar[AcceleratorVendor]
    name: str
    memory: int


@dataclass
class NvidiaGPUInfo(AcceleratorInfo):
    vendor = AcceleratorVendor.NVIDIA
    compute_capability: tuple[int, int]


@dataclass
class AMDGPUInfo(AcceleratorInfo):
    vendor = AcceleratorVendor.AMD
    architecture: AMDArchitecture
    device_ids: tuple[int, ...]


@dataclass
class TPUInfo(AcceleratorInfo):
    vendor = AcceleratorVendor.GOOGLE


@dataclass
class IntelAcceleratorInfo(AcceleratorInfo):
    vendor = AcceleratorVendor.INTEL


@dataclass
class TenstorrentAcceleratorInfo(AcceleratorInfo):
    vendor = AcceleratorVendor.TENSTORRENT


# Defined in `models` by gpuhunt 0.1.x: pickles and reprs name them there (`models` re-exports).
for _info in (
    AcceleratorInfo,
    NvidiaGPUInfo,
    AMDGPUInfo,
    TPUInfo,
    IntelAcceleratorInfo,
    TenstorrentAcceleratorInfo,
):
    _info.__module__ = PICKLED_MODULE
    # The methods dataclass wrote (`__init__`, `__repr__`, `__eq__`) too: a tool that follows
    # them by module (the docs' API reference) would otherwise go from `models` back here.
    for _method in vars(_info).values():
        if callable(_method) and getattr(_method, "__module__", None) == __name__:
            _method.__module__ = PICKLED_MODULE


def _nv(name: str, memory: int, cc: tuple[int, int]) -> NvidiaGPUInfo:
    return NvidiaGPUInfo(name=name, memory=memory, compute_capability=cc)


KNOWN_NVIDIA_GPUS: list[NvidiaGPUInfo] = [
    # Data center
    _nv("K80", 12, (3, 7)),
    _nv("M60", 8, (5, 2)),
    _nv("P4", 8, (6, 1)),
    _nv("P40", 24, (6, 1)),
    _nv("P100", 16, (6, 0)),
    _nv("V100", 16, (7, 0)),
    _nv("V100", 32, (7, 0)),
    _nv("T4", 16, (7, 5)),
    _nv("A2", 16, (8, 6)),
    _nv("A10", 24, (8, 6)),
    _nv("A10G", 24, (8, 6)),
    _nv("A16", 16, (8, 6)),
    _nv("A30", 24, (8, 0)),
    _nv("A40", 48, (8, 6)),
    _nv("A100", 40, (8, 0)),
    _nv("A100", 80, (8, 0)),
    _nv("A800", 80, (8, 0)),
    _nv("L4", 24, (8, 9)),
    _nv("L20", 48, (8, 9)),
    _nv("L40", 48, (8, 9)),
    _nv("L40S", 48, (8, 9)),
    _nv("H20", 96, (9, 0)),
    _nv("H100", 80, (9, 0)),
    _nv("H100NVL", 94, (9, 0)),
    _nv("H800", 80, (9, 0)),
    _nv("H200", 141, (9, 0)),
    _nv("H200NVL", 141, (9, 0)),
    _nv("GH200", 96, (9, 0)),
    _nv("B200", 180, (10, 0)),
    _nv("GB200", 186, (10, 0)),
    _nv("B300", 270, (10, 0)),
    _nv("GB300", 270, (10, 0)),
    # Workstation: Turing (Quadro RTX), Ampere (RTX A), Ada, Blackwell (RTX PRO)
    _nv("RTX4000", 8, (7, 5)),
    _nv("RTX5000", 16, (7, 5)),
    _nv("RTX6000", 24, (7, 5)),
    _nv("RTX8000", 48, (7, 5)),
    _nv("A2000", 12, (8, 6)),
    _nv("A4000", 16, (8, 6)),
    _nv("A4500", 20, (8, 6)),
    _nv("A5000", 24, (8, 6)),
    _nv("A5500", 24, (8, 6)),
    _nv("A6000", 48, (8, 6)),
    _nv("RTX2000Ada", 16, (8, 9)),
    _nv("RTX4000Ada", 20, (8, 9)),
    _nv("RTX4500Ada", 24, (8, 9)),
    _nv("RTX5000Ada", 32, (8, 9)),
    _nv("RTX6000Ada", 48, (8, 9)),
    _nv("RTXPRO4000", 24, (12, 0)),
    _nv("RTXPRO4500", 32, (12, 0)),
    _nv("RTXPRO5000", 48, (12, 0)),
    _nv("RTXPRO6000", 96, (12, 0)),
    # GeForce
    _nv("GTX1070", 8, (6, 1)),
    _nv("GTX1080", 8, (6, 1)),
    _nv("GTX1080Ti", 11, (6, 1)),
    _nv("TITANRTX", 24, (7, 5)),
    _nv("RTX2060", 6, (7, 5)),
    _nv("RTX2060", 12, (7, 5)),
    _nv("RTX2060SUPER", 8, (7, 5)),
    _nv("RTX2070", 8, (7, 5)),
    _nv("RTX2070SUPER", 8, (7, 5)),
    _nv("RTX2080", 8, (7, 5)),
    _nv("RTX2080SUPER", 8, (7, 5)),
    _nv("RTX2080Ti", 11, (7, 5)),
    _nv("RTX3050", 6, (8, 6)),
    _nv("RTX3050", 8, (8, 6)),
    _nv("RTX3060", 8, (8, 6)),
    _nv("RTX3060", 12, (8, 6)),
    _nv("RTX3060Ti", 8, (8, 6)),
    _nv("RTX3070", 8, (8, 6)),
    _nv("RTX3070Ti", 8, (8, 6)),
    _nv("RTX3080", 10, (8, 6)),
    _nv("RTX3080Ti", 12, (8, 6)),
    _nv("RTX3090", 24, (8, 6)),
    _nv("RTX3090Ti", 24, (8, 6)),
    _nv("RTX4060", 8, (8, 9)),
    _nv("RTX4060Ti", 8, (8, 9)),
    _nv("RTX4060Ti", 16, (8, 9)),
    _nv("RTX4070", 12, (8, 9)),
    _nv("RTX4070SUPER", 12, (8, 9)),
    _nv("RTX4070Ti", 12, (8, 9)),
    _nv("RTX4070TiSUPER", 16, (8, 9)),
    _nv("RTX4080", 16, (8, 9)),
    _nv("RTX4080SUPER", 16, (8, 9)),
    _nv("RTX4090", 24, (8, 9)),
    _nv("RTX5060", 8, (12, 0)),
    _nv("RTX5060Ti", 8, (12, 0)),
    _nv("RTX5060Ti", 16, (12, 0)),
    _nv("RTX5070", 12, (12, 0)),
    _nv("RTX5070Ti", 16, (12, 0)),
    _nv("RTX5080", 16, (12, 0)),
    _nv("RTX5090", 32, (12, 0)),
]


def _amd(name: str, memory: int, arch: AMDArchitecture, *device_ids: int) -> AMDGPUInfo:
    return AMDGPUInfo(name=name, memory=memory, architecture=arch, device_ids=device_ids)


# PCI device ids as listed in libdrm's amdgpu.ids.
KNOWN_AMD_GPUS: list[AMDGPUInfo] = [
    _amd("MI100", 32, AMDArchitecture.CDNA, 0x738C),
    _amd("MI210", 64, AMDArchitecture.CDNA2, 0x740F),
    _amd("MI250", 128, AMDArchitecture.CDNA2, 0x740C),
    _amd("MI250X", 128, AMDArchitecture.CDNA2, 0x7408),
    _amd("MI300A", 128, AMDArchitecture.CDNA3, 0x74A0),
    _amd("MI300X", 192, AMDArchitecture.CDNA3, 0x74A1, 0x74A9, 0x74B5, 0x74BD),
    _amd("MI308X", 128, AMDArchitecture.CDNA3, 0x74A2, 0x74B6),
    _amd("MI325X", 256, AMDArchitecture.CDNA3, 0x74A5),
    _amd("MI350X", 288, AMDArchitecture.CDNA4, 0x75A0),
    _amd("MI355X", 288, AMDArchitecture.CDNA4, 0x75A3),
]

# TPU generations as GCP names them; v5litepod is the API's name for v5e. Per-chip HBM is
# not tracked (0), as in gpuhunt 0.1.x.
KNOWN_TPUS: list[TPUInfo] = [
    TPUInfo(name=version, memory=0) for version in ("v2", "v3", "v4", "v5p", "v5litepod", "v6e")
]

KNOWN_INTEL_ACCELERATORS: list[IntelAcceleratorInfo] = [
    IntelAcceleratorInfo(name="Gaudi", memory=32),  # HL-205
    IntelAcceleratorInfo(name="Gaudi2", memory=96),  # HL-225
    IntelAcceleratorInfo(name="Gaudi3", memory=128),  # HL-325
]

KNOWN_TENSTORRENT_ACCELERATORS: list[TenstorrentAcceleratorInfo] = [
    TenstorrentAcceleratorInfo(name="n150", memory=12),
    TenstorrentAcceleratorInfo(name="n300", memory=24),
    TenstorrentAcceleratorInfo(name="tt-galaxy-wh", memory=12),
    TenstorrentAcceleratorInfo(name="p100a", memory=28),
    TenstorrentAcceleratorInfo(name="p150", memory=32),
    TenstorrentAcceleratorInfo(name="p300", memory=32),
    TenstorrentAcceleratorInfo(name="p300", memory=64),
    TenstorrentAcceleratorInfo(name="tt-galaxy-bh", memory=32),
]

KNOWN_ACCELERATORS: list[AcceleratorInfo] = [
    *KNOWN_NVIDIA_GPUS,
    *KNOWN_AMD_GPUS,
    *KNOWN_TPUS,
    *KNOWN_INTEL_ACCELERATORS,
    *KNOWN_TENSTORRENT_ACCELERATORS,
]

# Lower-cased name -> every entry with that name, in table order.
_BY_NAME: dict[str, list[AcceleratorInfo]] = {}
for _acc in KNOWN_ACCELERATORS:
    _BY_NAME.setdefault(_acc.name.lower(), []).append(_acc)


def accelerators_named(name: str) -> list[AcceleratorInfo]:
    """Every known accelerator whose canonical name is `name` (case-insensitive)."""
    return _BY_NAME.get(name.lower(), [])


def vendor_of(name: str | None) -> AcceleratorVendor | None:
    if name is None:
        return None
    found = accelerators_named(name)
    return found[0].vendor if found else None


# Relative difference under which a reported GPU memory size is the known size of that GPU:
# clouds and drivers report a little less than the marketed size (79.6 GiB for an 80 GB H100).
# The one tolerance for GPU memory: providers resolving a reported size, a query's "A100 80GB",
# Vast.ai's pushdown of a GPU memory range.
MEMORY_TOLERANCE = 0.07


def find_accelerators(
    names: Iterable[str] | None = None,
    vendors: Container[AcceleratorVendor] | None = None,
) -> list[AcceleratorInfo]:
    """Known accelerators with any of `names` (case-insensitive) and any of `vendors`, in table
    order. `None` does not filter."""
    if names is None:
        candidates: Iterable[AcceleratorInfo] = KNOWN_ACCELERATORS
    else:
        wanted = {n.lower() for n in names}
        candidates = [a for a in KNOWN_ACCELERATORS if a.name.lower() in wanted]
    return [a for a in candidates if vendors is None or a.vendor in vendors]


def get_compute_capability(gpu_name: str) -> tuple[int, int] | None:
    """The compute capability of a known NVIDIA GPU (canonical name), else None."""
    for acc in accelerators_named(gpu_name):
        if isinstance(acc, NvidiaGPUInfo):
            return acc.compute_capability
    return None


def correct_gpu_memory_gib(gpu_name: str, memory_mib: float) -> int:
    """Whole GiB of a GPU whose memory was reported in MiB, snapped to the known size of that GPU
    when within `MEMORY_TOLERANCE` (7%) of it (drivers and clouds report a little less than the
    marketed size)."""
    memory_gib = memory_mib / 1024
    known = {a.memory for a in accelerators_named(gpu_name)}
    if known:
        closest = min(known, key=lambda m: abs(m - memory_gib))
        if closest and abs(closest - memory_gib) / closest < MEMORY_TOLERANCE:
            return closest
    return round(memory_gib)


def is_nvidia_superchip(gpu_name: str) -> bool:
    """Whether the name is an NVIDIA Grace superchip (GH200, GB200, GB10, ...): GPU plus ARM CPU."""
    return re.match(r"^g[bh]\d+", gpu_name.lower()) is not None
