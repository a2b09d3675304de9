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
from dataclasses import dataclass
from typing import Any

from gpuhunt._internal.models import AcceleratorVendor, CPUArchitecture

FIELDS = [
    "instance_name",
    "location",
    "price",
    "cpu",
    "memory",
    "gpu_count",
    "gpu_name",
    "gpu_memory",
    "spot",
    "disk_size",
    "gpu_vendor",
    "flags",
    "cpu_arch",
    "provider_data",
]
REQUIRED = ("instance_name", "location", "price", "cpu", "memory", "gpu_count", "spot")
MAX_FIELD_CHARS = 64 * 1024


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
    provider_data: str  # JSON text, validated


class _Bad(ValueError):
    pass


def _finite(value: str, name: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise _Bad(f"{name} is not a number: {value[:40]!r}") from None
    if not math.isfinite(x):
        raise _Bad(f"{name} is not finite: {value[:40]!r}")
    return x


def _int(value: str, name: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise _Bad(f"{name} is not an integer: {value[:40]!r}") from None


_json_ok: dict[str, bool] = {}


def check_json(text: str) -> str:
    if not text:
        return "{}"
    ok = _json_ok.get(text)
    if ok is None:
        try:
            ok = isinstance(json.loads(text), dict)
        except ValueError:
            ok = False
        if len(_json_ok) < 100_000:
            _json_ok[text] = ok
    if not ok:
        raise _Bad("provider_data is not a JSON object")
    return text


def parse_row(get: Any) -> ParsedRow:
    """Validate one row; `get(name)` returns the field's text, or None when the column is absent."""
    for name in REQUIRED:
        value = get(name)
        if value is None:
            raise _Bad(f"required field {name!r} is missing")
        if value == "":
            raise _Bad(f"required field {name!r} is empty")
    gpu_count = _int(get("gpu_count"), "gpu_count")
    if gpu_count < 0:
        raise _Bad("gpu_count is negative")
    gpu_name = get("gpu_name") or None
    raw_vendor = get("gpu_vendor") or None
    vendor = AcceleratorVendor.cast(raw_vendor) if raw_vendor else None
    if gpu_name and gpu_name.startswith("tpu-"):
        # Catalogs from before the gpu_vendor column marked TPUs with this prefix.
        gpu_name = gpu_name[4:]
        vendor = vendor or AcceleratorVendor.GOOGLE
    elif vendor is None and gpu_count:
        vendor = AcceleratorVendor.NVIDIA
    spot_text = get("spot").lower()
    if spot_text not in ("true", "false"):
        raise _Bad(f"spot is not a boolean: {spot_text[:10]!r}")
    raw_arch = get("cpu_arch") or None
    gpu_memory = get("gpu_memory")
    disk = get("disk_size")
    return ParsedRow(
        instance_name=get("instance_name"),
        location=get("location"),
        price=_finite(get("price"), "price"),
        cpu=_int(get("cpu"), "cpu"),
        memory=_finite(get("memory"), "memory"),
        gpu_count=gpu_count,
        gpu_name=gpu_name,
        gpu_memory=_finite(gpu_memory, "gpu_memory") if gpu_memory else None,
        spot=spot_text == "true",
        disk_size=_finite(disk, "disk_size") if disk else None,
        gpu_vendor=vendor,
        flags=" ".join((get("flags") or "").split()),
        cpu_arch=CPUArchitecture.cast(raw_arch) if raw_arch else CPUArchitecture.X86,
        provider_data=check_json(get("provider_data") or ""),
    )
