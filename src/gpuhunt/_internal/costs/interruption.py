"""Spot interruption risk: the AWS Spot Instance Advisor's band per (region, instance type).

The advisor is one JSON document (`spot-advisor-data.json`): `ranges` (index 0-4 with labels
"<5%", "5-10%", "10-15%", "15-20%", ">20%"), `instance_types`, and
`spot_advisor[region][Linux|Windows][type] = {"s": savings %, "r": range index}`. It carries no
date: the time it was fetched is the time it was observed, and a stored copy is dated by when
it was stored.

A band's upper bound (`upper_pct`) comes from its label: "5-10%" -> 10, "<5%" -> 5, ">20%" ->
100. A `max_interruption` of 10 keeps the bands whose upper bound is at most 10 (the first two).
The document's own `max` numbers (5, 11, 16, 22, 100) are not used: they overlap the next
band's label and would let a 10% filter keep the 10-15% band's neighbour.

Where the advisor says nothing (another region, a type it does not list), the band is unknown:
`None` in a lookup, NaN / -1 in arrays, never a guess. The published table is a CSV of its
own beside the catalog, `{provider}.interruption` (`write_bands` / `read_bands`), for the same
reason as the terms file: 0.1.x never opens it.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

SUFFIX = ".interruption"
ADVISOR_OS = "Linux"  # the catalog's offers are Linux
_LABEL = re.compile(r"^\s*(?:<\s*(\d+)|(\d+)\s*-\s*(\d+)|>\s*(\d+))\s*%\s*$")
COLUMNS = ("region", "instance_type", "band", "label", "upper_pct", "savings_pct", "observed_at")


@dataclass(frozen=True)
class Band:
    index: int
    label: str
    upper_pct: float


@dataclass(frozen=True)
class Advice:
    region: str
    instance_type: str
    band: Band
    savings_pct: int  # the advisor's saving of spot over on demand, in %
    observed_at: datetime | None


def band_from_label(index: int, label: str) -> Band:
    m = _LABEL.match(label)
    if m is None:
        raise ValueError(f"spot advisor range {index}: label {label!r} is not like '5-10%'")
    below, _, upper, above = m.groups()
    if above is not None:  # ">20%": no bound below 100
        return Band(index, label, 100.0)
    return Band(index, label, float(below if below is not None else upper))


def parse_spot_advisor(
    doc: Mapping[str, Any], *, observed_at: datetime | None, os: str = ADVISOR_OS
) -> list[Advice]:
    """Every (region, type) the advisor rates for `os`; a malformed document is a ValueError
    naming the part at fault, a malformed entry is skipped."""
    try:
        ranges = {int(r["index"]): band_from_label(int(r["index"]), str(r["label"]))
                  for r in doc["ranges"]}  # fmt: skip
        regions = doc["spot_advisor"]
    except (KeyError, TypeError) as e:
        raise ValueError(
            f"spot advisor document has no usable 'ranges'/'spot_advisor' ({e})"
        ) from None
    if not isinstance(regions, Mapping):
        raise ValueError("spot advisor document: 'spot_advisor' is not an object")
    out: list[Advice] = []
    for region, by_os in regions.items():
        types = by_os.get(os) if isinstance(by_os, Mapping) else None
        if not isinstance(types, Mapping):
            continue
        for instance_type, entry in types.items():
            if not isinstance(entry, Mapping):
                continue
            index, saving = entry.get("r"), entry.get("s")
            band = ranges.get(index) if isinstance(index, int) else None
            if band is None or not isinstance(saving, int) or isinstance(saving, bool):
                continue
            out.append(Advice(str(region), str(instance_type), band, saving, observed_at))
    return sorted(out, key=lambda a: (a.region, a.instance_type))


class BandTable:
    """Bands by (region, instance type), looked up for whole arrays at once."""

    def __init__(self, advice: Sequence[Advice]) -> None:
        ordered = sorted(advice, key=lambda a: (a.region, a.instance_type))
        self.advice = ordered
        self._keys = np.array([_key(a.region, a.instance_type) for a in ordered], dtype=str)
        self._band = np.array([a.band.index for a in ordered], dtype=np.int64)
        self._upper = np.array([a.band.upper_pct for a in ordered], dtype=np.float64)

    def lookup(self, region: str, instance_type: str) -> Advice | None:
        i = self._find(np.array([_key(region, instance_type)]))[0]
        return self.advice[i] if i >= 0 else None

    def bands(
        self, regions: npt.ArrayLike, instance_types: npt.ArrayLike
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """(band index or -1, upper bound in % or NaN) for each (region, type) pair."""
        keys = np.char.add(np.char.add(np.asarray(regions, dtype=str), "\x1f"),
                           np.asarray(instance_types, dtype=str))  # fmt: skip
        found = self._find(keys)
        hit = found >= 0
        where = np.where(hit, found, 0)
        band = np.where(hit, self._band[where] if len(self._band) else -1, -1)
        upper = np.where(hit, self._upper[where] if len(self._upper) else np.nan, np.nan)
        return band.astype(np.int64), upper.astype(np.float64)

    def within(
        self, regions: npt.ArrayLike, instance_types: npt.ArrayLike, max_interruption: float
    ) -> npt.NDArray[np.bool_]:
        """True where the band is known and its upper bound is at most `max_interruption` %."""
        if not 0 < max_interruption <= 100:
            raise ValueError(
                f"max_interruption is a percentage in (0, 100], got {max_interruption!r}"
            )
        _, upper = self.bands(regions, instance_types)
        with np.errstate(invalid="ignore"):
            return np.asarray(upper <= max_interruption)

    def _find(self, keys: npt.NDArray[np.str_]) -> npt.NDArray[np.int64]:
        if not len(self._keys):
            return np.full(len(keys), -1, dtype=np.int64)
        at = np.searchsorted(self._keys, keys)
        clipped = np.minimum(at, len(self._keys) - 1)
        return np.where(self._keys[clipped] == keys, clipped, -1).astype(np.int64)


def _key(region: str, instance_type: str) -> str:
    return f"{region}\x1f{instance_type}"


def write_bands(advice: Sequence[Advice]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for a in advice:
        when = a.observed_at.isoformat() if a.observed_at else ""
        writer.writerow([a.region, a.instance_type, a.band.index, a.band.label,
                         repr(a.band.upper_pct), a.savings_pct, when])  # fmt: skip
    return out.getvalue().encode()


def read_bands(data: bytes, *, source: str = "interruption") -> list[Advice]:
    reader = csv.reader(io.StringIO(data.decode()))
    if tuple(next(reader, ())) != COLUMNS:
        raise ValueError(f"{source}: not an interruption file")
    out = []
    for line, row in enumerate(reader, start=2):
        try:
            region, instance_type, index, label, upper, saving, when = row
            band = Band(int(index), label, float(upper))
            observed = datetime.fromisoformat(when) if when else None
            out.append(Advice(region, instance_type, band, int(saving), observed))
        except ValueError as e:
            raise ValueError(f"{source}, line {line}: {e}") from None
    return out
