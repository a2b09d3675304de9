"""The offer schema: the catalog CSV's fields and the rules that turn their text into values
(pure). Written once here; the row reader (`formats.csv`), the vectorised table builder
(`formats.table_builder`) and the column files all take their fields and rules from this module.

Rules for older files (what gpuhunt 0.1.x wrote and reads): no `gpu_vendor` means NVIDIA when
there are GPUs, and a `tpu-` name prefix means Google; no `cpu_arch` means x86; `spot` and
`cpu_arch` are read in any letter case.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from gpuhunt._internal import offer_spec
from gpuhunt._internal.errors import MissingColumns
from gpuhunt._internal.models import AcceleratorVendor, CPUArchitecture

# The contract's 14 columns first and in gpuhunt 0.1.x's order, then the library's own
# (`offer_spec`), which 0.1.x, taking columns by name, ignores.
FIELDS = list(offer_spec.CSV_COLUMNS)
CONTRACT_FIELDS = FIELDS[:14]
# Headers in the published order: this version's, and the one before the own columns.
PUBLISHED_HEADERS = (FIELDS, CONTRACT_FIELDS)
REQUIRED = ("instance_name", "location", "price", "cpu", "memory", "gpu_count", "spot")
# Columns every version of the file has had (gpuhunt 0.1.x wrote these ten): a header without
# one of them was renamed or cut, and reading it anyway would serve every offer without it
# (GPU offers without GPU names), so the file is refused instead.
HEADER_REQUIRED = tuple(FIELDS[:10])
MAX_FIELD_CHARS = 64 * 1024
MAX_COLUMNS = 256  # the header's; the catalog has 22, later versions may add a few


def decode_csv(data: bytes) -> str:
    """A catalog CSV's text. Bytes that are not UTF-8 become lone surrogates, which
    `check_fields` refuses, so a row with them is skipped rather than served with U+FFFD."""
    return data.decode("utf-8", "surrogateescape")


def check_header(header: list[str]) -> dict[str, int]:
    """Each column's position; raises `MissingColumns` naming what is wrong."""
    if len(header) > MAX_COLUMNS:
        raise MissingColumns(f"the header has {len(header)} columns (at most {MAX_COLUMNS})")
    pos: dict[str, int] = {}
    for i, name in enumerate(header):
        name = name.strip()
        if name in pos:
            # Which of the two is meant cannot be known: taking either would be a guess.
            raise MissingColumns(f"the header names the column {name[:40]!r} twice")
        pos[name] = i
    missing = [name for name in HEADER_REQUIRED if name not in pos]
    if missing:
        unknown = [n[:40] for n in pos if n not in FIELDS]
        hint = f" (it has {', '.join(map(repr, unknown[:3]))} instead)" if unknown else ""
        raise MissingColumns(f"the header lacks required column(s) {', '.join(missing)}{hint}")
    return pos


_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")


def check_fields(row: list[str], width: int) -> None:
    """The rules for a row's raw fields, the same on every parse path: no more fields than the
    header has, no field over `MAX_FIELD_CHARS`, no NUL and nothing that was not UTF-8."""
    if len(row) > width:
        raise _Bad(f"{len(row)} fields, the header has {width}")
    for value in row:
        if len(value) > MAX_FIELD_CHARS:
            raise _Bad("field too large")
        bad = _BAD_CHARS.search(value)
        if bad is not None:
            raise _Bad("NUL byte" if bad.group() == "\x00" else "invalid UTF-8")


def suspect(text: str) -> bool:
    """Whether a CSV text has anything `check_fields` refuses by character (the fast paths
    then leave the file to the row-by-row check)."""
    return not text.isascii() and _BAD_CHARS.search(text) is not None or "\x00" in text


@dataclass
class ParsedRow:
    """One validated row, as plain values ready for a table or a CatalogItem."""

    instance_name: str
    location: str
    price: float
    cpu: int
    memory: float
    gpu_count: int
    gpu_name: str | None
    gpu_memory: float | None
    spot: bool
    disk_size: float | None
    gpu_vendor: AcceleratorVendor | None
    flags: str
    cpu_arch: CPUArchitecture
    provider_data: str  # the offer text (`offer_spec`): provider_data's JSON and own cells


class _Bad(ValueError):
    pass


# --------------------------------------------------------------------------- sane values
# The one rule for what an offer's numbers may be, for published rows (`parse_row`, the table
# builder) and online providers' answers (`query.online.offer_problem`) alike: a price that
# sorts first because it is negative, or a machine with -4 vCPUs, is garbage wherever it
# came from.

MAX_CPUS = 65_536
MAX_GPUS = 1_024
MAX_MEMORY_GIB = 1_048_576.0  # 1 PiB: far beyond any one machine; anything larger is garbage
MAX_DISK_GIB = 1_048_576_000.0
# field -> (lowest, whether the lowest itself is allowed, highest, what a bad value is called)
BOUNDS: dict[str, tuple[float, bool, float, str]] = {
    "price": (0.0, False, math.inf, "a finite positive number"),
    "cpu": (0, True, MAX_CPUS, "a sane count"),
    "gpu_count": (0, True, MAX_GPUS, "a sane count"),
    "memory": (0.0, True, MAX_MEMORY_GIB, "a sane size"),
    "gpu_memory": (0.0, True, MAX_MEMORY_GIB, "a sane size"),
    "disk_size": (0.0, True, MAX_DISK_GIB, "a sane size"),
}


def value_problem(name: str, value: float) -> str | None:
    """Why `value` cannot be an offer's `name` (NaN, infinite, negative, absurdly large), or
    None when it can."""
    low, low_ok, high, what = BOUNDS[name]
    if math.isfinite(value) and (value >= low if low_ok else value > low) and value <= high:
        return None
    return f"{name} {value!r:.40} is not {what}"


def sane(name: str, value: Any) -> Any:
    """`value`, if `value_problem` has nothing against it (None passes: not given)."""
    if value is not None:
        problem = value_problem(name, value)
        if problem is not None:
            raise _Bad(problem)
    return value


# --------------------------------------------------------------------------- one field's text
# Each rule takes a field's text and returns its value or raises ValueError saying what is
# wrong. `parse_row` applies them to a row; `formats.table_builder` to each distinct value of
# a column.


def finite(text: str, name: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise _Bad(f"{name} is not a number: {text[:40]!r}") from None
    if not math.isfinite(x):
        raise _Bad(f"{name} is not finite: {text[:40]!r}")
    return x


def optional_finite(text: str, name: str) -> float | None:
    return finite(text, name) if text else None


def integer(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _Bad(f"{name} is not an integer: {text[:40]!r}") from None


def gpu_count(text: str) -> int:
    count = integer(text, "gpu_count")
    if count < 0:
        raise _Bad("gpu_count is negative")
    return int(sane("gpu_count", count))


def spot(text: str) -> bool:
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise _Bad(f"spot is not a boolean: {text[:10]!r}")
    return lowered == "true"


def cpu_arch(text: str) -> CPUArchitecture:
    """No value (or no column) is x86, as before the column existed."""
    return CPUArchitecture.cast(text) if text else CPUArchitecture.X86


def gpu(name: str, vendor: str, has_gpus: bool) -> tuple[str | None, AcceleratorVendor | None]:
    """The GPU name and vendor of a row. Catalogs from before the `gpu_vendor` column marked
    TPUs with a `tpu-` name prefix and meant NVIDIA by any other GPU."""
    found = AcceleratorVendor.cast(vendor) if vendor else None
    if name.startswith("tpu-"):
        return name[4:] or None, found or AcceleratorVendor.GOOGLE
    if found is None and has_gpus:
        found = AcceleratorVendor.NVIDIA
    return name or None, found


def flags(text: str) -> str:
    """Space-separated flags, spaces normalised."""
    return text if " " not in text or text == " ".join(text.split()) else " ".join(text.split())


_json_ok: dict[str, bool] = {}  # a memo: catalogs repeat a few provider_data texts many times


def check_json(text: str) -> str:
    """The text of a JSON object (no value is `{}`)."""
    if not text:
        return "{}"
    ok = _json_ok.get(text)
    if ok is None:
        try:
            ok = isinstance(json.loads(text), dict)
        except (ValueError, RecursionError):  # RecursionError: nested too deep to decode
            ok = False
        if len(_json_ok) < 100_000:
            _json_ok[text] = ok
    if not ok:
        raise _Bad("provider_data is not a JSON object")
    return text


# --------------------------------------------------------------------------- a row


def parse_row(get: Any) -> ParsedRow:
    """Validate one row; `get(name)` returns the field's text, or None when the column is absent."""
    for name in REQUIRED:
        value = get(name)
        if value is None:
            raise _Bad(f"required field {name!r} is missing")
        if value == "":
            raise _Bad(f"required field {name!r} is empty")
    count = gpu_count(get("gpu_count"))
    gpu_name, vendor = gpu(get("gpu_name") or "", get("gpu_vendor") or "", count > 0)
    return ParsedRow(
        instance_name=get("instance_name"),
        location=get("location"),
        price=sane("price", finite(get("price"), "price")),
        cpu=sane("cpu", integer(get("cpu"), "cpu")),
        memory=sane("memory", finite(get("memory"), "memory")),
        gpu_count=count,
        gpu_name=gpu_name,
        gpu_memory=sane("gpu_memory", optional_finite(get("gpu_memory") or "", "gpu_memory")),
        spot=spot(get("spot")),
        disk_size=sane("disk_size", optional_finite(get("disk_size") or "", "disk_size")),
        gpu_vendor=vendor,
        flags=flags(get("flags") or ""),
        cpu_arch=cpu_arch(get("cpu_arch") or ""),
        provider_data=offer_spec.offer_text(check_json(get("provider_data") or ""), get),
    )
