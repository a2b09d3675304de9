"""Price history table (pure: bytes in, rows out): its format and how a build updates it.
The daily view of it is `daily`; fetching is `remote`'s job, publishing `publish.build`'s.

The nightly build keeps, per provider, one row per offer key (instance, location, spot) per
price that offer held, with the first and last version and date it was seen at that price. A
build extends the rows of offers whose price did not change and opens a new row for each new
price or new offer; an offer that disappears keeps its last row, whose `to_version` then says
when it was last seen. So the table grows with price changes, not with days.

Format (`docs/catalog-format.md`): a CSV with header `HEADER`, prices as in the catalog CSV,
dates `YYYY-MM-DD` (the day the provider's offers were collected), sorted by key then date.
Retention: rows last seen more than `RETENTION_DAYS` before the newest collection are dropped,
and beyond `MAX_ROWS` a provider's oldest closed rows go first; rows of current offers are
never dropped.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
import operator
import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from gpuhunt._internal.formats import archive
from gpuhunt._internal.formats.csv import iter_rows

HEADER = [
    "instance_name",
    "location",
    "spot",
    "gpu_name",
    "gpu_count",
    "price",
    "from_version",
    "from_date",
    "to_version",
    "to_date",
]
FORMAT_VERSION = 1
RETENTION_DAYS = 400
MAX_ROWS = 1_000_000  # per provider; AWS lists ~100k offers, so years of weekly changes
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

Key = tuple[str, str, bool]  # instance_name, location, spot


class Span(NamedTuple):
    """One offer at one price, from the first to the last version it was seen at it.
    (A named tuple: an AWS-sized history has hundreds of thousands.)"""

    instance_name: str
    location: str
    spot: bool
    gpu_name: str | None
    gpu_count: int
    price: float
    from_version: str
    from_date: dt.date
    to_version: str
    to_date: dt.date

    @property
    def key(self) -> Key:
        return (self.instance_name, self.location, self.spot)


class Offer(NamedTuple):
    """An offer key's cheapest row in a catalog CSV (a CSV may list one key more than once,
    e.g. with different disks)."""

    instance_name: str
    location: str
    spot: bool
    gpu_name: str | None
    gpu_count: int
    price: float

    @property
    def key(self) -> Key:
        return (self.instance_name, self.location, self.spot)


def offers_of(csv_data: bytes, provider: str) -> dict[Key, Offer]:
    """The offers of a provider's catalog CSV by key, each at its cheapest price."""
    out: dict[Key, Offer] = {}
    text = csv_data.decode("utf-8", "replace")
    for row in iter_rows(io.StringIO(text, newline=""), provider=provider, quiet=True):
        key = (row.instance_name, row.location, row.spot)
        seen = out.get(key)
        if seen is None or row.price < seen.price:
            out[key] = Offer(*key, row.gpu_name, row.gpu_count, row.price)
    return out


# --------------------------------------------------------------------------- format


def _date(text: str, name: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{name} is not a date: {text[:20]!r}") from None


class _Parser:
    """Row parsing with the values that repeat on every row (dates, versions, GPU names)
    checked once."""

    def __init__(self) -> None:
        self.dates: dict[str, dt.date] = {}
        self.versions: set[str] = set()

    def date(self, text: str, name: str) -> dt.date:
        d = self.dates.get(text)
        if d is None:
            d = self.dates[text] = _date(text, name)
        return d

    def version(self, text: str) -> str:
        if text not in self.versions:
            if not _VERSION.match(text):
                raise ValueError(f"not a catalog version: {text[:40]!r}")
            self.versions.add(text)
        return text

    def span(self, row: list[str]) -> Span:
        if len(row) != len(HEADER):
            raise ValueError(f"{len(row)} fields, expected {len(HEADER)}")
        instance, location, spot, gpu_name, gpu_count, price, fv, fd, tv, td = row
        if not instance or not location:
            raise ValueError("instance_name and location must not be empty")
        if spot not in ("True", "False"):
            raise ValueError(f"spot is not True/False: {spot[:10]!r}")
        try:
            count = int(gpu_count)
            value = float(price)
        except ValueError:
            raise ValueError(
                f"gpu_count or price is not a number: {gpu_count!r}, {price!r}"
            ) from None
        if count < 0 or not math.isfinite(value) or value < 0:
            raise ValueError(f"gpu_count {count} or price {value} out of range")
        start, end = self.date(fd, "from_date"), self.date(td, "to_date")
        if end < start:
            raise ValueError(f"to_date {td} is before from_date {fd}")
        return Span(
            instance,
            location,
            spot == "True",
            gpu_name or None,
            count,
            value,
            self.version(fv),
            start,
            self.version(tv),
            end,
        )


def loads(data: bytes) -> list[Span]:
    """Parse a history table; raises `ValueError` naming the line at fault (the table is ours,
    so anything malformed means it is corrupt, not that a row can be skipped)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"not UTF-8 ({e.reason} at byte {e.start})") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if header != HEADER:
        raise ValueError(f"header is not the history format: {','.join(header or [])[:120]!r}")
    spans = []
    parser = _Parser()
    for line, row in enumerate(reader, start=2):
        if not row:
            continue
        try:
            spans.append(parser.span(row))
        except ValueError as e:
            raise ValueError(f"line {line}: {e}") from None
    return spans


# instance_name, location, spot, from_date, from_version, to_date
_sort_key = operator.itemgetter(0, 1, 2, 7, 6, 9)


def dumps(spans: Iterable[Span]) -> bytes:
    """The table as published: sorted, so the same history gives the same bytes."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(HEADER)
    days: dict[dt.date, str] = {}

    def day(d: dt.date) -> str:
        text = days.get(d)
        if text is None:
            text = days[d] = d.isoformat()
        return text

    rows = sorted(spans, key=_sort_key)
    w.writerows(
        (
            s.instance_name,
            s.location,
            "True" if s.spot else "False",
            s.gpu_name or "",
            s.gpu_count,
            repr(s.price),
            s.from_version,
            day(s.from_date),
            s.to_version,
            day(s.to_date),
        )
        for s in rows
    )
    return buf.getvalue().encode("utf-8")


# --------------------------------------------------------------------------- update


def observe(
    previous: Sequence[Span],
    last_version: str | None,
    offers: dict[Key, Offer],
    version: str,
    day: dt.date,
    *,
    retention_days: int = RETENTION_DAYS,
    max_rows: int = MAX_ROWS,
) -> list[Span]:
    """The history after a new collection (`offers`, seen in `version` on `day`).

    `last_version` is the version of the previous collection: only the rows it ended are
    extended, so an offer that went away and came back starts a new row."""
    return _observe(previous, last_version, offers, version, day, retention_days, max_rows)


def _observe(
    previous: Sequence[Span],
    last_version: str | None,
    offers: dict[Key, Offer],
    version: str,
    day: dt.date,
    retention_days: int,
    max_rows: int,
) -> list[Span]:
    out = list(previous)
    current: dict[Key, int] = {}
    if last_version is not None:
        current = {s[:3]: i for i, s in enumerate(out) if s.to_version == last_version}
    for key, o in offers.items():
        i = current.get(key)
        if i is not None:
            s = out[i]
            if (s.price, s.gpu_name, s.gpu_count) == (o.price, o.gpu_name, o.gpu_count):
                out[i] = Span(*s[:8], version, max(day, s.to_date))
                continue
        out.append(Span(*key, o.gpu_name, o.gpu_count, o.price, version, day, version, day))
    return retain(out, version, day, retention_days=retention_days, max_rows=max_rows)


def retain(
    spans: list[Span],
    version: str,
    today: dt.date,
    *,
    retention_days: int = RETENTION_DAYS,
    max_rows: int = MAX_ROWS,
) -> list[Span]:
    """Drop rows last seen before the retention window, then the oldest closed rows beyond
    `max_rows`; rows of the offers seen in `version` always stay."""
    oldest = today - dt.timedelta(days=retention_days)
    kept = [s for s in spans if s.to_version == version or s.to_date >= oldest]
    if len(kept) > max_rows:
        open_rows = [s for s in kept if s.to_version == version]
        closed = sorted((s for s in kept if s.to_version != version), key=lambda s: s.to_date)
        room = max(0, max_rows - len(open_rows))
        kept = open_rows + (closed[len(closed) - room :] if room else [])
    return kept


def check(spans: Sequence[Span], offers: dict[Key, Offer], version: str) -> str | None:
    """Why a history does not match the offers its version collected, or None."""
    current: dict[Key, Span] = {}
    for s in spans:
        if s.to_version == version:
            if s.key in current:
                return f"two rows end at {version} for {'/'.join(map(str, s.key))}"
            current[s.key] = s
    for key, o in offers.items():
        row = current.pop(key, None)
        if row is None:
            return f"no row ends at {version} for offer {'/'.join(map(str, key))}"
        if row.price != o.price:
            return (
                f"{'/'.join(map(str, key))} is ${o.price:g} in the catalog but ${row.price:g} "
                "in its history"
            )
    if current:
        return f"a row ends at {version} for {'/'.join(map(str, next(iter(current))))}, which is not offered"
    return None


# --------------------------------------------------------------------------- build


def _day(timestamp: str | None, fallback: str) -> dt.date:
    for text in (timestamp, fallback):
        try:
            return dt.date.fromisoformat(str(text or "")[:10])
        except ValueError:
            continue
    raise ValueError(f"no date in {timestamp!r} or {fallback!r}")


def for_build(
    entries: dict[str, dict[str, Any]],
    csvs: dict[str, bytes],
    previous: dict[str, bytes],
    previous_entries: dict[str, dict[str, Any]],
    built_at: str,
) -> dict[str, bytes]:
    """Each provider's history for a new version, from the previous version's (`previous`,
    provider -> table, with that version's manifest `previous_entries`).

    A fresh collection is observed on the day it was collected. A carried-over CSV was not
    collected again, so its history is carried over unchanged; one that has none yet (the
    first build with history) starts from the version and day that collected it."""
    out: dict[str, bytes] = {}
    for p, entry in entries.items():
        old = previous.get(p)
        if entry.get("status") == "carried_over" and old is not None:
            out[p] = old
            continue
        spans = loads(old) if old is not None else []
        last = (previous_entries.get(p) or {}).get("from_version") if old is not None else None
        day = _day(entry.get("collected_at"), built_at)
        observed = observe(spans, last, offers_of(csvs[p], p), str(entry["from_version"]), day)
        out[p] = dumps(observed)
    return out


OBJECT = "history.zip"


def rows_of(table: bytes) -> int:
    reader = csv.reader(io.StringIO(table.decode("utf-8", "replace"), newline=""))
    return max(0, sum(1 for row in reader if row) - 1)


def pack(tables: dict[str, bytes], version: str) -> bytes:
    """`history.zip`: `{provider}.csv` (that provider's history table) and a `manifest.json`
    with each table's sha256, so the catalog's safe archive reader opens and checks it."""
    manifest = {
        "format_version": FORMAT_VERSION,
        "kind": "history",
        "version": version,
        "retention_days": RETENTION_DAYS,
        "max_rows": MAX_ROWS,
        "providers": {
            p: {"sha256": archive.sha256(t), "rows": rows_of(t)} for p, t in tables.items()
        },
    }
    return archive.write_archive(tables, manifest)
