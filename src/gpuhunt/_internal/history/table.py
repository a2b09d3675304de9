"""Price history (pure: bytes in, tables out; fetching and publishing are `tracking`'s job).

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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from gpuhunt._internal.accelerators import canonical_gpu_name
from gpuhunt._internal.formats import archive
from gpuhunt._internal.formats.csv import iter_rows
from gpuhunt._internal.query.table import gc_paused as _gc_paused

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
SPARKS = "▁▂▃▄▅▆▇█"

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
    with _gc_paused():  # rows hold no cycles; collections over 100k tuples only cost time
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

    with _gc_paused():  # as in `loads`
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
    with _gc_paused():  # as in `loads`
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


# --------------------------------------------------------------------------- query


@dataclass
class Series:
    """One line of a history: the cheapest price on each day (None: nothing on offer)."""

    name: str
    prices: list[float | None]
    where: list[str | None]  # the offer that had that price: provider/instance/location[/spot]

    def known(self) -> list[float]:
        return [p for p in self.prices if p is not None]


@dataclass
class PriceHistory:
    """Cheapest price per day, per GPU model (per GPU, $/h) or per instance ($/h)."""

    by: str  # "gpu" or "instance"
    days: list[dt.date]
    series: list[Series]
    version: str | None = None
    url: str | None = None
    missing: list[str] = field(default_factory=list)  # providers that have no history

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "unit": "USD per GPU per hour" if self.by == "gpu" else "USD per hour",
            "version": self.version,
            "url": self.url,
            "days": [d.isoformat() for d in self.days],
            "series": [{"name": s.name, "prices": s.prices, "where": s.where} for s in self.series],
            "missing": self.missing,
        }

    def rows(self) -> list[list[Any]]:
        """Long form: name, date, price, where; one row per series and day with a price."""
        return [
            [s.name, d.isoformat(), p, w]
            for s in self.series
            for d, p, w in zip(self.days, s.prices, s.where)
            if p is not None
        ]


def _norm_gpu(name: str | None) -> str | None:
    if not name:
        return None
    return canonical_gpu_name(name) or name


def query(
    histories: Mapping[str, Sequence[Span]],
    *,
    gpu_name: Sequence[str] | None = None,
    provider: Sequence[str] | None = None,
    location: Sequence[str] | None = None,
    spot: bool | None = None,
    since: dt.date | None = None,
    by: str = "gpu",
) -> PriceHistory:
    """Cheapest price per day of the offers matching every filter given. By GPU the price is
    per GPU (an 8-GPU instance at $16/h is $2/GPU/h), so instance sizes compare; offers without
    GPUs appear only by instance."""
    with _gc_paused():  # as in `loads`
        return _query(histories, gpu_name, provider, location, spot, since, by)


def _query(
    histories: Mapping[str, Sequence[Span]],
    gpu_name: Sequence[str] | None,
    provider: Sequence[str] | None,
    location: Sequence[str] | None,
    spot: bool | None,
    since: dt.date | None,
    by: str,
) -> PriceHistory:
    if by not in ("gpu", "instance"):
        raise ValueError(f"by must be 'gpu' or 'instance', not {by!r}")
    gpus = {(_norm_gpu(g) or "").lower() for g in gpu_name} if gpu_name else None
    providers = {p.lower() for p in provider} if provider else None
    locations = {x.lower() for x in location} if location else None
    picked: list[tuple[str, str, float, dt.date, dt.date]] = []  # name, where, value, from, to
    for p, spans in histories.items():
        if providers is not None and p.lower() not in providers:
            continue
        for s in spans:
            gpu = _norm_gpu(s.gpu_name)
            if gpus is not None and (gpu or "").lower() not in gpus:
                continue
            if locations is not None and s.location.lower() not in locations:
                continue
            if spot is not None and s.spot != spot:
                continue
            start = max(s.from_date, since) if since else s.from_date
            if start > s.to_date:
                continue
            where = f"{p}/{s.instance_name}/{s.location}" + ("/spot" if s.spot else "")
            if by == "gpu":
                if not s.gpu_count or gpu is None:
                    continue
                picked.append((gpu, where, s.price / s.gpu_count, start, s.to_date))
            else:
                picked.append((f"{p}/{s.instance_name}", where, s.price, start, s.to_date))
    if not picked:
        return PriceHistory(by, [], [])
    first = min(x[3] for x in picked)
    last = max(x[4] for x in picked)
    n = (last - first).days + 1
    days = [first + dt.timedelta(days=i) for i in range(n)]
    by_name: dict[str, list[tuple[float, int, int, str]]] = {}
    for name, where, value, start, end in picked:
        by_name.setdefault(name, []).append(
            (value, (start - first).days, (end - first).days + 1, where)
        )
    series = []
    for name, pieces in by_name.items():
        prices: list[float | None] = [None] * n
        wheres: list[str | None] = [None] * n
        # Cheapest first, each day taken by the first span that covers it: `after[d]` leads
        # to the next day not taken yet, so every day is visited once (union-find painting).
        after = list(range(n + 1))
        # Ties go to the first offer by name, so the answer does not depend on file order.
        for value, a, b, where in sorted(pieces, key=operator.itemgetter(0, 3)):
            d = _free(after, a)
            while d < b:
                prices[d] = round(value, 6)
                wheres[d] = where
                after[d] = d + 1
                d = _free(after, d + 1)
        series.append(Series(name, prices, wheres))
    series.sort(key=lambda s: (s.known()[-1], s.name))
    return PriceHistory(by, days, series)


def _free(after: list[int], d: int) -> int:
    """The first day from `d` on that no span has taken yet."""
    root = d
    while after[root] != root:
        root = after[root]
    while after[d] != root:  # path compression
        after[d], d = root, after[d]
    return root


def sparkline(values: Sequence[float | None], width: int = 40) -> str:
    """One character per day (or per group of days, cheapest of the group, when there are more
    days than `width`); a blank where nothing was on offer."""
    vals = list(values)
    if len(vals) > width:
        groups = np.array_split(np.arange(len(vals)), width)
        vals = [min((vals[i] for i in g if vals[i] is not None), default=None) for g in groups]
    known = [v for v in vals if v is not None]
    if not known:
        return " " * len(vals)
    lo, hi = min(known), max(known)
    top = len(SPARKS) - 1
    out = []
    for v in vals:
        if v is None:
            out.append(" ")
        elif hi == lo:
            out.append(SPARKS[top // 2])
        else:
            out.append(SPARKS[round((v - lo) / (hi - lo) * top)])
    return "".join(out)


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
