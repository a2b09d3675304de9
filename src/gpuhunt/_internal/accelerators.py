"""Known accelerators and the spelling of their names (pure data and lookups, no I/O).

Order matters to callers that build dicts keyed by name from these lists: when a name is listed
more than once (A100 40 GB and 80 GB), the larger memory comes last. Where gpuhunt 0.1.x already
lists a GPU, its memory and compute capability are kept as they were there, so that `matches`
answers the same for the same offer and filter.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

from gpuhunt._internal.models import (
    AcceleratorInfo,
    AcceleratorVendor,
    AMDArchitecture,
    AMDGPUInfo,
    IntelAcceleratorInfo,
    NvidiaGPUInfo,
    TenstorrentAcceleratorInfo,
    TPUInfo,
)


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


# ---------------------------------------------------------------------------------------------
# Name aliases: how clouds, drivers and people spell GPU names -> our canonical names.


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


_CANONICAL_BY_KEY: dict[str, str] = {_key(a.name): a.name for a in KNOWN_ACCELERATORS}

# Spellings that the generic normalisation below cannot derive.
_EXTRA_ALIASES: dict[str, str] = {
    "gracehopper": "GH200",
    "gracehopper200": "GH200",
    "gracehoppersuperchip": "GH200",
    "v5e": "v5litepod",
    "v5lite": "v5litepod",
    "trillium": "v6e",
    "hl205": "Gaudi",
    "hl225": "Gaudi2",
    "hl225h": "Gaudi2",
    "hl325": "Gaudi3",
    "hl325l": "Gaudi3",
    "gaudi1": "Gaudi",
    "titanrtx": "TITANRTX",
    "mi300": "MI300X",
    "t4g": "T4",  # AWS DescribeInstanceTypes: the T4 of Graviton g5g instances
    "gaudihl205": "Gaudi",  # AWS DescribeInstanceTypes: "Gaudi HL-205" (dl1)
    "gb200nvl": "GB200",  # Crusoe's "GB200-NVL-186GB": a GB200 NVL72 slice
    "v100fhhl": "V100",  # RunPod's "Tesla V100-FHHL-16GB" (full-height half-length board)
    "wormholen150": "n150",
    "wormholen300": "n300",
    "blackholep100a": "p100a",
    "blackholep150": "p150",
    "blackholep300": "p300",
    "n150s": "n150",
    "n150d": "n150",
    "n300s": "n300",
    "n300d": "n300",
    "p150a": "p150",
    "p150b": "p150",
    # Vast.ai's spellings (its gpulist): "Q RTX" is Quadro RTX, a trailing "S" is SUPER,
    # "B300 PC" is a B300 on another board SKU, "RTX PRO 6000 S/WS" are its server and
    # workstation editions.
    "qrtx4000": "RTX4000",
    "qrtx5000": "RTX5000",
    "qrtx6000": "RTX6000",
    "qrtx8000": "RTX8000",
    "rtx2060s": "RTX2060SUPER",
    "rtx2070s": "RTX2070SUPER",
    "rtx2080s": "RTX2080SUPER",
    "rtx4070s": "RTX4070SUPER",
    "rtx4070sti": "RTX4070TiSUPER",
    "rtx4080s": "RTX4080SUPER",
    "b300pc": "B300",
    "rtxpro6000s": "RTXPRO6000",
    "rtxpro6000ws": "RTXPRO6000",
    "rtxpro6000maxq": "RTXPRO6000",
    "instinctmi100": "MI100",
    "instinctmi210": "MI210",
    "instinctmi250x": "MI250X",
}

# Words that name a vendor, a brand or a form factor rather than the chip.
_NOISE_WORDS = re.compile(
    r"\b(nvidia|geforce|tesla|quadro|amd|radeon|instinct|intel|habana|google|cloud|tpu|"
    r"tenstorrent|gpu|graphics|accelerator|hgx|dgx|sxm\d*|pcie|pci-e|pci|hbm\d*e?|nvlink|"
    r"server|workstation|edition|max-q|maxq|blackwell|generation|gen|sff|oam|card|"
    r"tensor\s+core)\b"
)
_MEMORY = re.compile(r"\b(\d+(?:\.\d+)?)\s*(gb|gib|g)\b")


@lru_cache(maxsize=4096)
def canonical_gpu_name(name: str) -> str | None:
    """The canonical name of a GPU spelled as a cloud, a driver or a person would spell it.

    `"NVIDIA GeForce RTX 4090"`, `"RTX 4090"` and `"4090"` all give `"RTX4090"`;
    `"A100-SXM4-80GB"` gives `"A100"`, `"H100 NVL"` gives `"H100NVL"`. Unknown names give None.
    """
    if not name or not name.strip():
        return None
    if (direct := _CANONICAL_BY_KEY.get(_key(name))) is not None:
        return direct
    text = name.lower().replace("_", " ")
    text = re.sub(r"(?<=[a-z0-9])-(?=[a-z])", " ", text)  # "A100-SXM4" -> "A100 SXM4"
    text = _MEMORY.sub(" ", text)
    text = _NOISE_WORDS.sub(" ", text)
    key = _key(text)
    for candidate in _candidates(key):
        if candidate in _CANONICAL_BY_KEY:
            return _CANONICAL_BY_KEY[candidate]
        if candidate in _EXTRA_ALIASES:
            return _EXTRA_ALIASES[candidate]
    return None


def _candidates(key: str) -> list[str]:
    out = [key]
    if m := re.fullmatch(r"rtxa(\d{4})", key):  # "RTX A6000" is sold as "A6000"
        out.append("a" + m.group(1))
    if m := re.fullmatch(r"(rtx\d{4})ada(?:lovelace)?", key):
        out.append(m.group(1) + "ada")
    if m := re.fullmatch(r"tpuv?(.+)", key):
        out.append(m.group(1))
    if re.fullmatch(r"\d{4}(ti|super|tisuper)?", key):  # "4090" -> "RTX4090"
        out.append("rtx" + key)
        out.append("gtx" + key)
    if key.startswith("v") and key[1:2].isdigit():
        out.append(key.removesuffix("pod"))
    # A trailing board-variant suffix after the model number: Lium's "B300 SXM6 AC" (cooling
    # variant), Vast.ai's "B300 PC". Tried last, so a name that really ends so still wins.
    if m := re.fullmatch(r"(.*\d)(ac|pc)", key):
        out.append(m.group(1))
    return out


def gpu_memory_from_name(name: str) -> float | None:
    """The memory size written into a GPU's name ("A100-SXM4-80GB" -> 80.0), if any."""
    if m := _MEMORY.search(name.lower()):
        return float(m.group(1))
    return None


def vendor_of(name: str | None) -> AcceleratorVendor | None:
    if name is None:
        return None
    found = accelerators_named(name)
    return found[0].vendor if found else None


# Relative difference under which a reported memory size is the known size of that GPU: clouds
# and drivers report a little less than the marketed size (79.6 GiB for an 80 GB H100). The
# same tolerance as a query's "A100 80GB" uses (`VRAM_TOLERANCE` below).
MEMORY_TOLERANCE = 0.07


class ResolvedGPU(NamedTuple):
    name: str  # canonical
    vendor: AcceleratorVendor
    memory: float  # GiB per GPU


def resolve_gpu(spelling: str, memory: float | None = None) -> ResolvedGPU | None:
    """A provider's GPU name (and the memory per GPU it reports, in GiB) -> canonical name,
    vendor and memory; None when the accelerator tables do not know the name.

    Every provider resolves GPUs with this function, so that the same GPU gets the same name
    and memory whichever cloud sells it. The rule for memory:

    1. The memory the provider reports (`memory`, else a size written in the name, as in
       "A100-SXM4-80GB") is used when given. Within `MEMORY_TOLERANCE` of a size the table
       lists for that GPU, it becomes that size (79.6 -> 80); otherwise it is kept as reported
       (a board or slice the table does not list).
    2. Nothing reported: the smallest size the table lists for that name (A100 -> 40, V100 ->
       16): never promise more memory than the offer may have. A provider that knows better
       (a price list naming the 80 GB board) passes that memory.

    A name the tables do not know gives None: the provider counts it with
    `ParseReport.unknown_gpu` and keeps the offer under its own spelling or skips it, as its
    module documents.
    """
    name = canonical_gpu_name(spelling)
    if name is None:
        return None
    known = accelerators_named(name)
    reported = memory if memory else gpu_memory_from_name(spelling)
    sizes = sorted({a.memory for a in known if a.memory})
    if reported:
        close = [m for m in sizes if abs(m - reported) / m <= MEMORY_TOLERANCE]
        resolved = float(min(close, key=lambda m: abs(m - reported))) if close else reported
    else:
        resolved = float(sizes[0]) if sizes else 0.0
    return ResolvedGPU(name, known[0].vendor, resolved)


# ---------------------------------------------------------------------------------------------
# Query side: a GPU name as a person writes it in a filter ("A100 80GB", "a100-80g-pcie").

# How far an offer's GPU memory may be from the size a name asks for, as a fraction of that
# size: clouds and drivers report a little less than the marketed size (80 GB -> 79.6 GiB).
VRAM_TOLERANCE = MEMORY_TOLERANCE

_MIG_SLICE = re.compile(r"\d+g\.\d+gb", re.IGNORECASE)  # "B300 1g.34gb": a slice, not memory


@lru_cache(maxsize=1024)
def gpu_name_with_memory(name: str) -> tuple[str, float] | None:
    """(canonical name, GiB) for a filter's GPU name that also gives the memory: `"A100 80GB"`,
    `"A100-80GB"`, `"a100-80g-pcie"`, `"H100 NVL 94GB"`, `"RTX PRO 6000 96GB"`. None when the
    name gives no memory or names no known GPU (it is then compared as written)."""
    if _MIG_SLICE.search(name):
        return None
    memory = gpu_memory_from_name(name)
    canonical = canonical_gpu_name(name) if memory else None
    if canonical is None or memory is None:
        return None
    return canonical, memory


def memory_fits(actual: float | None, wanted: float) -> bool:
    """Whether a GPU with `actual` GiB is the `wanted`-GB model (within `VRAM_TOLERANCE`)."""
    return actual is not None and abs(actual - wanted) <= VRAM_TOLERANCE * wanted


def closest_gpu_names(name: str, also: Iterable[str] = (), n: int = 3) -> list[str]:
    """Known GPU names (and `also`, e.g. names only a catalog uses) that look most like `name`,
    best first, for "did you mean" hints."""
    by_key: dict[str, str] = {_key(a.name): a.name for a in KNOWN_ACCELERATORS}
    for other in also:
        by_key.setdefault(_key(other), other)
    found = difflib.get_close_matches(_key(name), list(by_key), n=n, cutoff=0.5)
    return [by_key[k] for k in found]
