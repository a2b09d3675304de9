"""How clouds, drivers and people spell accelerator names, and the one way every provider and
every query turns such a spelling into a canonical name of the `accelerators` tables (pure, no
I/O). Kept apart from the tables because it changes for another reason: a new cloud's spelling
adds an alias or a rule here, a new chip a row there.

Two sides use it: providers (`canonical_gpu_name`, `resolve_gpu`: a cloud's name and the memory
it reports -> canonical name, vendor and memory, the same whichever cloud sells the GPU) and
queries (`gpu_name_spec`, `memory_fits`, `closest_gpu_names`: a GPU name as a person writes it
in a filter - with a memory size, a form factor, a count - and "did you mean" hints).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

from gpuhunt._internal.accelerators import (
    KNOWN_ACCELERATORS,
    KNOWN_TPUS,
    MEMORY_TOLERANCE,
    accelerators_named,
)
from gpuhunt._internal.form_factor import (
    form_factor_words,
    refine,
    strip_form_factor_words,
)
from gpuhunt._internal.vocabulary import AcceleratorVendor

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
    # Google's marketing names for TPU generations ("TPU v6e Trillium", "Cloud TPU v5e"): the
    # words "tpu" and "cloud" are noise, the rest maps to KNOWN_TPUS' names.
    "v6etrillium": "v6e",
    "trilliumv6e": "v6e",
    "v5elite": "v5litepod",
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


_TPU_SLICE = re.compile(r"(v\d+[a-z]*)-(\d+)")
_TPU_NAMES = frozenset(t.name.lower() for t in KNOWN_TPUS)


def tpu_generation(gpu_name: str) -> str | None:
    """The TPU generation of an offer's TPU slice name, lower-case: GCP's offers name the slice
    ("v5litepod-8", "v6e-4", as gpuhunt 0.1.x published), so a query for the generation
    ("v5litepod", or "TPU v5e" through its alias) finds every slice of it. None for anything
    that is not a slice of a generation in `KNOWN_TPUS`."""
    m = _TPU_SLICE.fullmatch(gpu_name.lower())
    return m.group(1) if m and m.group(1) in _TPU_NAMES else None


def gpu_memory_from_name(name: str) -> float | None:
    """The memory size written into a GPU's name ("A100-SXM4-80GB" -> 80.0), if any."""
    # "_" is a word character, so "A100_PCIE_80GB" (Fluidstack, Prime Intellect) would hide
    # its size from the word boundary; it separates words as "-" and " " do.
    if m := _MEMORY.search(name.lower().replace("_", " ")):
        return float(m.group(1))
    return None


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

# The name the query side used for `accelerators.MEMORY_TOLERANCE` (kept importable).
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


class GpuNameSpec(NamedTuple):
    """What a filter's GPU name asks for beyond the name: `"A100 80GB SXM:8"` is
    `GpuNameSpec("A100", 80.0, "sxm", 8)`. `name` is canonical, or as written (without the
    count) when only a count was given to a name the tables do not know."""

    name: str
    memory: float | None  # GiB, compared within MEMORY_TOLERANCE
    form_factor: str | None  # one of form_factor.FORM_FACTORS
    gpu_count: int | None  # exactly this many GPUs (SkyPilot's "A100:8")


_COUNT = re.compile(r"^(.*?)\s*:\s*([^:]*)$")


def split_gpu_count(name: str) -> tuple[str, int | None]:
    """`"A100:8"` -> `("A100", 8)`, `"A100"` -> `("A100", None)`: SkyPilot's NAME:COUNT. A
    count that is not a whole number of GPUs, 1 or more, is a ValueError naming the name."""
    m = _COUNT.match(name)
    if m is None:
        return name, None
    base, count = m.group(1), m.group(2).strip()
    if not base.strip() or ":" in base or not count.isdigit() or int(count) < 1:
        raise ValueError(
            f"Invalid gpu_name {name!r}: NAME:COUNT takes a whole number of GPUs, 1 or more "
            "(A100:8)"
        )
    return base, int(count)


@lru_cache(maxsize=1024)
def gpu_name_spec(name: str) -> GpuNameSpec | None:
    """What a filter's GPU name asks for: the GPU, and the memory (`"A100 80GB"`), form factor
    (`"H100 SXM"`, `h100-pcie`, `H100-SXM5`) and count (`"A100:8"`) it gives. None when it
    gives none of these (the name is then compared as written and by its canonical name).
    A name that says two form factors ("H100 SXM PCIe") or a bad count is a ValueError.

    A name that is a model of its own keeps that meaning: `"H100 NVL"` is the `H100NVL` model
    (NVL form factor), not any H100 in an NVL board."""
    base, count = split_gpu_count(name)
    said = form_factor_words(base)
    if len(said) > 1:
        raise ValueError(
            f"Invalid gpu_name {name!r}: it names two form factors ({', '.join(sorted(said))})"
        )
    form_factor = said.pop() if said else None
    memory = None if _MIG_SLICE.search(base) else gpu_memory_from_name(base)
    canonical = canonical_gpu_name(base)
    if canonical is None and form_factor is not None:
        canonical = canonical_gpu_name(strip_form_factor_words(base))  # "GB200 NVL72"
    if canonical is None:
        return GpuNameSpec(base, None, None, count) if count is not None else None
    form_factor = refine(canonical, form_factor)
    if memory is None and form_factor is None and count is None:
        return None
    return GpuNameSpec(canonical, memory, form_factor, count)


def filter_gpu_name(name: str) -> tuple[str, str | None]:
    """A filter's GPU name as written without its count, and the canonical name it asks for
    (None when the tables do not know it): `"A100 80GB:8"` -> `("A100 80GB", "A100")`,
    `"GB200 NVL72"` -> `("GB200 NVL72", "GB200")`."""
    base, _ = split_gpu_count(name)
    spec = gpu_name_spec(name)
    if spec is not None and (spec.memory or spec.form_factor or canonical_gpu_name(spec.name)):
        return base, spec.name
    return base, canonical_gpu_name(base)


def memory_fits(actual: float | None, wanted: float) -> bool:
    """Whether a GPU with `actual` GiB is the `wanted`-GB model (within `MEMORY_TOLERANCE`)."""
    return actual is not None and abs(actual - wanted) <= MEMORY_TOLERANCE * wanted


def closest_gpu_names(name: str, also: Iterable[str] = (), n: int = 3) -> list[str]:
    """Known GPU names (and `also`, e.g. names only a catalog uses) that look most like `name`,
    best first, for "did you mean" hints."""
    index = _name_index(tuple(also))
    return [index.by_key[k] for k in index.closest(_key(name), n)]


# How many candidates, those sharing the most letter pairs with a name, difflib compares it to:
# comparing every known name (hundreds with a catalog's) cost ~0.5 ms a name, so refusing
# 10,000 unknown names took seconds (issue 50).
SHORTLIST = 12


def _pairs(key: str) -> set[str]:
    padded = f" {key} "  # a one-letter key still has pairs; a name's ends weigh as letters do
    return {padded[i : i + 2] for i in range(len(padded) - 1)}


class _NameIndex:
    """The keys of the names hints may offer, with each letter pair's keys: a name is compared
    (by difflib) only to the `SHORTLIST` keys sharing the most pairs with it."""

    def __init__(self, also: tuple[str, ...]) -> None:
        self.by_key: dict[str, str] = dict(_KNOWN_BY_KEY)
        for other in also:
            self.by_key.setdefault(_key(other), other)
        self.keys = list(self.by_key)
        self.postings: dict[str, list[int]] = {}
        for i, key in enumerate(self.keys):
            for pair in _pairs(key):
                self.postings.setdefault(pair, []).append(i)

    def closest(self, key: str, n: int) -> list[str]:
        shared: Counter[int] = Counter()
        for pair in _pairs(key):
            shared.update(self.postings.get(pair, ()))
        # Ties in shared pairs keep the keys' order, as difflib's full scan would meet them.
        best = sorted(shared, key=lambda i: (-shared[i], i))[:SHORTLIST]
        return _close_matches(key, [self.keys[i] for i in sorted(best)], n)


def _close_matches(key: str, candidates: list[str], n: int) -> list[str]:
    return difflib.get_close_matches(key, candidates, n=n, cutoff=0.5)


_KNOWN_BY_KEY: dict[str, str] = {_key(a.name): a.name for a in KNOWN_ACCELERATORS}


@lru_cache(maxsize=8)
def _name_index(also: tuple[str, ...]) -> _NameIndex:
    """The index for hints offering `also` too; a catalog's names are the same from one query
    to the next, so it is built once per catalog, not once per name."""
    return _NameIndex(also)


def aliases_of(name: str) -> list[str]:
    """The extra spellings the alias table maps to canonical `name` (normalised keys), for
    lists of the spellings a name accepts (the catalog page's GPU filter)."""
    return sorted(k for k, v in _EXTRA_ALIASES.items() if v == name)
