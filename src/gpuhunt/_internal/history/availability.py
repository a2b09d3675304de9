"""Availability history: per offer and location, how many collections observed it over a window
and in what share of those it was available, read from the open dataset of observations
(`history.observations`) with DuckDB (the `dataset` extra).

The dataset is read where it is published: a local folder (`file://` too), or an S3 bucket
through s3fs registered with DuckDB as an fsspec filesystem (DuckDB's own httpfs extension is
downloaded at run time, which many networks refuse, so extension autoloading is turned off).
The public bucket's HTTPS address is read as the bucket it is (`https://B.s3.R.amazonaws.com/P`
is `s3://B/P`, anonymously); a path-style address under `s3_endpoint` (MinIO, a moto server)
likewise. Partition pruning does the window: only the `date=` folders from `since` on and the
`provider=` folders asked for are opened.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gpuhunt._internal.errors import HistoryUnavailable, InputError
from gpuhunt._internal.history.daily import norm_gpu
from gpuhunt._internal.history.observations import ROOT
from gpuhunt._internal.load import sources

logger = logging.getLogger(__name__)

# An S3 object's HTTPS address, virtual-hosted style (the public bucket's): bucket, key prefix.
_VIRTUAL_HOSTED = re.compile(r"^([a-z0-9][a-z0-9.-]+)\.s3(?:[.-][a-z0-9-]+)?\.amazonaws\.com$")
_PROTOCOL = "gpuhunt-s3"  # the name s3fs is registered under: never DuckDB's own `s3://`


@dataclass
class OfferAvailability:
    """One offer (provider, instance, location, spot) over the window."""

    provider: str
    instance_name: str
    location: str
    spot: bool
    gpu_name: str | None
    gpu_count: int
    observations: int  # collections that listed the offer
    reported: int  # of those, how many said whether it was available
    available_share: float | None  # available / reported; None when none reported
    first_observed: str  # ISO 8601 UTC, Z
    last_observed: str
    last_available: bool | None  # the reading of the last observation
    last_price: float


@dataclass
class AvailabilityHistory:
    """The answer of `gpuhunt history --availability` and `Catalog.history(availability=True)`."""

    url: str
    since: dt.date | None
    rows: list[OfferAvailability] = field(default_factory=list)
    files: int = 0  # observation files read (after pruning)

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "since": self.since.isoformat() if self.since else None,
            "files": self.files,
            "rows": [asdict(r) for r in self.rows],
        }


@dataclass(frozen=True)
class Location:
    """Where the dataset is: a local folder, or an S3 bucket and prefix (with its endpoint)."""

    root: str  # a local folder, or `bucket/prefix`
    s3: bool = False
    endpoint: str | None = None
    anonymous: bool = True


def locate(url: str, *, s3_endpoint: str | None = None, anonymous: bool = True) -> Location:
    """Where the observations published under catalog base `url` are (`{url}/observations`)."""
    local = sources.local_path(url)
    if local is not None:
        return Location(str(Path(local) / ROOT))
    if url.startswith("s3://"):
        return Location(f"{url[5:].rstrip('/')}/{ROOT}", True, s3_endpoint, anonymous)
    parts = urlsplit(url)
    path = parts.path.strip("/")
    if s3_endpoint and url.startswith(s3_endpoint.rstrip("/") + "/"):
        return Location(f"{path}/{ROOT}", True, s3_endpoint, anonymous)
    host = (parts.hostname or "").lower()
    m = _VIRTUAL_HOSTED.match(host)
    if parts.scheme == "https" and m:
        return Location(f"{m.group(1)}/{path}/{ROOT}".replace("//", "/"), True, None, anonymous)
    if parts.scheme == "https" and re.match(r"^s3(?:[.-][a-z0-9-]+)?\.amazonaws\.com$", host):
        return Location(f"{path}/{ROOT}", True, None, anonymous)
    raise HistoryUnavailable(
        f"The observations dataset cannot be read at {url}: give a local folder, an s3:// URL "
        "or an S3 bucket's https:// address"
    )


def connect(where: Location) -> tuple[Any, Any]:
    """A DuckDB connection that reads the dataset, and a function listing its files (each as
    DuckDB opens it)."""
    try:
        import duckdb
    except ImportError as e:
        raise HistoryUnavailable(
            f"Reading the availability history needs DuckDB ({e.name} is not installed): "
            "pip install 'gpuhunt[dataset]'"
        ) from None
    # Never download an extension at run time: a query works offline or fails saying why.
    con = duckdb.connect(
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    )
    pattern = "date=*/provider=*/*.parquet"
    if not where.s3:
        root = Path(where.root)
        return con, lambda: sorted(str(f) for f in root.glob(pattern))
    try:
        import s3fs
    except ImportError as e:
        raise HistoryUnavailable(
            f"Reading the dataset from S3 needs s3fs ({e.name} is not installed): "
            "pip install 'gpuhunt[dataset]'"
        ) from None

    class _S3(s3fs.S3FileSystem):  # type: ignore[misc]
        protocol = (_PROTOCOL,)

    kwargs: dict[str, Any] = {"anon": where.anonymous, "skip_instance_cache": True}
    if where.endpoint:
        kwargs["endpoint_url"] = where.endpoint
    fs = _S3(**kwargs)
    con.register_filesystem(fs)
    return con, lambda: sorted(f"{_PROTOCOL}://{f}" for f in fs.glob(f"{where.root}/{pattern}"))


_PARTITION = re.compile(r"/date=(\d{4}-\d{2}-\d{2})/provider=([^/]+)/[^/]+$")


def in_window(
    files: Sequence[str], since: dt.date | None, providers: Sequence[str] | None
) -> list[str]:
    """The files of the days from `since` on and of `providers`, by their partition folders
    alone: a window reads only its own files, whatever the dataset's length."""
    wanted = {p.lower() for p in providers} if providers else None
    out = []
    for f in files:
        m = _PARTITION.search(f.replace("\\", "/"))
        if m is None:
            continue
        if since is not None and dt.date.fromisoformat(m.group(1)) < since:
            continue
        if wanted is not None and m.group(2).lower() not in wanted:
            continue
        out.append(f)
    return out


def _clause(column: str, values: Sequence[str] | None, args: list[Any]) -> str:
    if not values:
        return ""
    args.extend(v.lower() for v in values)
    return f" AND lower({column}) IN ({', '.join('?' * len(values))})"


QUERY = """
SELECT provider, instance_name, location, spot,
       arg_max(gpu_name, observed_at) AS gpu_name,
       arg_max(gpu_count, observed_at) AS gpu_count,
       count(*) AS observations,
       count(available) AS reported,
       avg(CASE WHEN available THEN 1.0 WHEN NOT available THEN 0.0 END) AS available_share,
       min(observed_at) AS first_observed,
       max(observed_at) AS last_observed,
       arg_max(available, observed_at) AS last_available,
       arg_max(price, observed_at) AS last_price
FROM read_parquet(?, hive_partitioning = true,
                  hive_types = {{'date': DATE, 'provider': VARCHAR}})
WHERE true{where}
GROUP BY ALL
ORDER BY provider, instance_name, location, spot
"""


def _z(when: dt.datetime) -> str:
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def query(
    url: str,
    *,
    gpu_name: Sequence[str] | None = None,
    provider: Sequence[str] | None = None,
    location: Sequence[str] | None = None,
    spot: bool | None = None,
    since: dt.date | None = None,
    s3_endpoint: str | None = None,
    anonymous: bool = True,
) -> AvailabilityHistory:
    """Each offer's observations and available share over the window (from `since`'s day on,
    UTC), for the offers matching every filter given."""
    where = locate(url, s3_endpoint=s3_endpoint, anonymous=anonymous)
    con, list_files = connect(where)
    try:
        try:
            every = list_files()
        except OSError as e:
            raise HistoryUnavailable(f"Could not list the observations at {url}: {e}") from None
        if not every:
            raise HistoryUnavailable(
                f"No observations are published at {url} (the dataset is {ROOT}/ beside the "
                "catalog)"
            )
        files = in_window(every, since, provider)
        if not files:
            return AvailabilityHistory(url, since, [], 0)
        args: list[Any] = [files]
        sql = ""
        if since is not None:
            sql += " AND date >= ?"
            args.append(since)
        sql += _clause("location", location, args)
        if gpu_name:
            sql += _clause("gpu_name", [norm_gpu(g) or g for g in gpu_name], args)
        if spot is not None:
            sql += " AND spot = ?"
            args.append(spot)
        try:
            found = con.execute(QUERY.format(where=sql), args).fetchall()
        except Exception as e:  # noqa: BLE001 - DuckDB's errors have no common public base
            raise InputError(f"Could not read the observations at {url}: {e}") from None
    finally:
        con.close()
    rows = [
        OfferAvailability(
            provider=r[0],
            instance_name=r[1],
            location=r[2],
            spot=bool(r[3]),
            gpu_name=r[4],
            gpu_count=int(r[5]),
            observations=int(r[6]),
            reported=int(r[7]),
            available_share=None if r[8] is None else round(float(r[8]), 6),
            first_observed=_z(r[9]),
            last_observed=_z(r[10]),
            last_available=r[11],
            last_price=float(r[12]),
        )
        for r in found
    ]
    return AvailabilityHistory(url, since, rows, len(files))


WINDOW_DAYS = 7  # what the page shows beside the price chart


def recent(
    url: str, *, days: int = WINDOW_DAYS, today: dt.date | None = None
) -> AvailabilityHistory | None:
    """The last `days` days of observations under `url` for the page, or None where there are
    none or they cannot be read here (no DuckDB, a plain-HTTP catalog): the page then says so."""
    today = today or dt.datetime.now(dt.timezone.utc).date()
    try:
        return query(url, since=today - dt.timedelta(days=days - 1))
    except (HistoryUnavailable, InputError) as e:
        logger.info("No availability history for the page: %s", e)
    except Exception as e:  # noqa: BLE001 - a bucket's client errors: the page goes on without
        logger.warning("No availability history for the page: %s: %s", type(e).__name__, e)
    return None
