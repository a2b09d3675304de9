"""Observations: every offer as one collection saw it (its price and availability reading), the
rows of the open dataset published beside the catalog (docs/availability.md has the schema).

Each scheduled collection that a build publishes fresh is one observation of each of its
offers. A carried-over CSV was not read again, and a collection the plausibility gate refused
is not published, so neither is an observation. Rows are written as Parquet, partitioned the
Hive way so that DuckDB, Athena, Trino or Spark prune by day and provider from the path alone:

    {base}/observations/date=YYYY-MM-DD/provider=NAME/part-{version}.parquet

One file per provider and version, never rewritten: the dataset grows by appending, so a build
costs what its own collection weighs, not what a year of history does.

Pure here (CSV bytes in, columns out) but for `to_parquet`, which imports pyarrow (the
`dataset` extra) when a build writes the files.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuhunt._internal import observed, offer_spec
from gpuhunt._internal.formats.csv import iter_rows

ROOT = "observations"
FORMAT_VERSION = 1
VERSION_COLUMN = offer_spec.DatasetColumn(1, "string")  # the catalog version: no offer field
# Column -> Arrow type name, in file order: the offer fields the offer spec puts in the dataset
# (`OfferField.dataset`), and the version (`date` and `provider` live in the path).
COLUMNS = {
    name: column.arrow
    for name, column in sorted(
        [
            ("version", VERSION_COLUMN),
            *((f.name, f.dataset) for f in offer_spec.FIELDS if f.dataset is not None),
        ],
        key=lambda entry: entry[1].at,
    )
}

Key = tuple[str, str, bool]
KEY = ("instance_name", "location", "spot")  # what one observation is of
# The provider's fields in the dataset besides the key: read from the key's cheapest row. (The
# library's own fields there, `observed_at` and `available`, are each read in their own way.)
FROM_CHEAPEST = tuple(
    f.name for f in offer_spec.FIELDS if f.dataset is not None and not f.own and f.name not in KEY
)


@dataclass
class Readings:
    """One provider's observations from one collection, as columns (offer key order)."""

    provider: str
    version: str
    observed_at: dt.datetime
    columns: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return len(self.columns.get("instance_name", []))

    @property
    def reported(self) -> int:
        """Offers with an availability reading (True or False)."""
        return sum(1 for a in self.columns.get("available", []) if a is not None)

    @property
    def available(self) -> int:
        return sum(1 for a in self.columns.get("available", []) if a is True)

    @property
    def path(self) -> str:
        return partition_path(self.provider, self.observed_at.date(), self.version)


def partition_path(provider: str, day: dt.date, version: str) -> str:
    return f"{ROOT}/date={day.isoformat()}/provider={provider}/part-{version}.parquet"


def _available(offer_text: str) -> bool | None:
    """A row's availability reading (its `available` column, or the key an older catalog
    wrote into provider_data: the reader moved it out into the offer text)."""
    value = offer_spec.own_value(offer_text, "available")
    return value if isinstance(value, bool) else None


def readings(csv_data: bytes, provider: str, version: str, observed_at: dt.datetime) -> Readings:
    """A collection's observations: one per offer key (instance, location, spot), with the
    fields of the key's cheapest row (`FROM_CHEAPEST`); available when any of its rows was (a
    CSV may list a key more than once, e.g. with different disks), unavailable when all that
    say are not, else unknown. Malformed rows are skipped (the build's format check has
    refused any CSV that has them)."""
    by_key: dict[Key, list[Any]] = {}  # key -> [its cheapest row, its reading]
    text = csv_data.decode("utf-8", "replace")
    for row in iter_rows(io.StringIO(text, newline=""), provider=provider, quiet=True):
        key = (row.instance_name, row.location, row.spot)
        reading = _available(row.provider_data)
        seen = by_key.get(key)
        if seen is None:
            by_key[key] = [row, reading]
            continue
        if row.price < seen[0].price:
            seen[0] = row
        if reading is True or (reading is False and seen[1] is None):
            seen[1] = reading
    keys = sorted(by_key)
    when = observed_at.astimezone(dt.timezone.utc).replace(microsecond=0)
    cols: dict[str, list[Any]] = {
        "observed_at": [when] * len(keys),
        "version": [version] * len(keys),
        "available": [by_key[k][1] for k in keys],
    }
    for i, name in enumerate(KEY):
        cols[name] = [k[i] for k in keys]
    for name in FROM_CHEAPEST:
        cols[name] = [getattr(by_key[k][0], name) for k in keys]
    return Readings(provider, version, when, {name: cols[name] for name in COLUMNS})


def arrow_schema() -> Any:
    """The files' Arrow schema (`COLUMNS`), with the format version in its metadata."""
    import pyarrow as pa

    types = {
        "timestamp[s, tz=UTC]": pa.timestamp("s", tz="UTC"),
        "string": pa.string(),
        "bool": pa.bool_(),
        "int16": pa.int16(),
        "double": pa.float64(),
    }
    return pa.schema(
        [(name, types[t]) for name, t in COLUMNS.items()],
        metadata={"gpuhunt_observations_format": str(FORMAT_VERSION)},
    )


def write_parquet(table: Any, sink: Any) -> None:
    """One observations file (zstd; strings dictionary-encoded, as pyarrow does by default):
    the one writer of the build and of `benchmarks/bench_dataset.py`."""
    import pyarrow.parquet as pq

    pq.write_table(table, sink, compression="zstd")


def to_parquet(r: Readings) -> bytes:
    """The Parquet file of one provider's observations."""
    import pyarrow as pa

    table = pa.Table.from_pydict(r.columns, schema=arrow_schema())
    buf = io.BytesIO()
    write_parquet(table, buf)
    return buf.getvalue()


def have_writer() -> str | None:
    """Why observations cannot be written here (pyarrow missing), or None."""
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError as e:
        return f"pyarrow is not installed ({e.name}): pip install 'gpuhunt[dataset]'"
    return None


def for_build(
    entries: Mapping[str, Mapping[str, Any]],
    csvs: Mapping[str, bytes],
    version: str,
    built_at: str,
) -> dict[str, Readings]:
    """The observations a build publishes: one `Readings` per provider published fresh in
    `version`, at its `collected_at` (the build time when that is missing)."""
    out = {}
    for p, entry in entries.items():
        if entry.get("status") != "fresh" or entry.get("from_version") != version:
            continue
        when = observed.parse(entry.get("collected_at")) or observed.parse(built_at)
        if when is None:
            continue
        out[p] = readings(csvs[p], p, version, when)
    return out


def availability_note(
    provider: str, reported: int, previous_entry: Mapping[str, Any] | None
) -> str | None:
    """What the build report says when a provider that reported availability in the previous
    version reports none in this one (its collector lost the field, or the API dropped it)."""
    before = ((previous_entry or {}).get("availability") or {}).get("reported")
    if isinstance(before, int) and before > 0 and reported == 0:
        version = (previous_entry or {}).get("from_version")
        return (
            f"{provider} stopped reporting availability: {before} offers had a reading in "
            f"{version}, none has one now"
        )
    return None
