"""The build's file I/O: the collected CSVs it reads, the previous catalog it carries
providers over from, and the folder it writes (laid out like the bucket)."""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Sequence
from pathlib import Path

from gpuhunt._internal import registry
from gpuhunt._internal.costs import interruption
from gpuhunt._internal.errors import GPUHuntError, PipelineInputError
from gpuhunt._internal.formats import archive
from gpuhunt._internal.formats import terms as terms_file
from gpuhunt._internal.load import fetch
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.publish.build import Build
from gpuhunt._internal.publish.converge import CANDIDATES, Collected

# The files a collection writes beside `{provider}.csv` (docs/costs.md): `formats.terms` and
# `costs.interruption` name them.
SIDE_SUFFIXES = (terms_file.SUFFIX, interruption.SUFFIX)

logger = logging.getLogger(__name__)

DOWNLOAD_TIMEOUT = (10.0, 120.0)


META_SUFFIX = ".meta.json"  # `python -m gpuhunt P --output X.csv` also writes X.csv.meta.json


def collector_meta(started_at: dt.datetime, provider: str) -> bytes:
    from gpuhunt._version import __version__

    meta = {
        "provider": provider,
        "started_at": started_at.astimezone(dt.timezone.utc).replace(microsecond=0).isoformat(),
        "gpuhunt_version": __version__,
    }
    return (json.dumps(meta, indent=1) + "\n").encode()


def _started_at(path: Path, provider: str) -> str | None:
    """The collection's start time from the collector's side file, or None (no file, or one
    that does not say; then the CSV's modification time stands in)."""
    meta = path.with_name(path.name + META_SUFFIX)
    if not meta.is_file():
        return None
    try:
        doc = json.loads(meta.read_text(encoding="utf-8"))
        when = dt.datetime.fromisoformat(str(doc["started_at"]).replace("Z", "+00:00"))
        if doc.get("provider") not in (None, provider):
            raise ValueError(f"it is {doc.get('provider')!r}'s")
    except (OSError, ValueError, KeyError, TypeError) as e:
        logger.warning("Ignoring %s (%s); using the CSV's modification time", meta, e)
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.astimezone(dt.timezone.utc).replace(microsecond=0).isoformat()


def read_input(
    directory: str | Path, providers: Sequence[str] | None = None
) -> dict[str, Collected]:
    """The `{provider}.csv` files a collection left in `directory`, with the `{provider}.terms`
    and `{provider}.interruption` files written beside them (docs/costs.md). `collected_at` is when the
    collector started (`{provider}.csv.meta.json`, written by `python -m gpuhunt P --output`);
    without that file, the CSV's modification time, which after an artifact upload and
    download is the download's time (docs/pipeline.md)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise PipelineInputError(f"Input folder {folder} does not exist")
    providers = list(registry.OFFLINE_PROVIDERS if providers is None else providers)
    out = {}
    for path in sorted(folder.glob("*.csv")):
        name = path.stem
        if name not in providers:
            logger.warning("Ignoring %s: not an offline provider of this build", path)
            continue
        when = _started_at(path, name)
        if when is None:
            mtime = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc)
            when = mtime.replace(microsecond=0).isoformat()
        sides = {
            side.name: side.read_bytes()
            for suffix in SIDE_SUFFIXES
            if (side := folder / f"{name}{suffix}").is_file()
        }
        out[name] = Collected(path.read_bytes(), when, sides)
    return out


def load_candidates(
    url: str, previous: RawCatalog, *, allow_http: bool = False
) -> dict[str, bytes]:
    """The refused CSVs published with `previous` (`{version}/candidates.zip`), which the gate
    compares the next collections with. Any problem only restarts the confirmations.
    `allow_http`: the caller's setting (`GPUHUNT_ALLOW_HTTP`, read by the command)."""
    entries = (previous.manifest or {}).get("providers") or {}
    if not any(isinstance(e, dict) and e.get("pending") for e in entries.values()):
        return {}
    rel = f"{previous.version}/{CANDIDATES}"
    try:
        fetcher = fetch.Fetcher(url.rstrip("/"), DOWNLOAD_TIMEOUT, 2, allow_http=allow_http)
        got = archive.read_archive(fetcher.get(rel), source=rel)
    except GPUHuntError as e:
        logger.warning("Could not read %s (%s); unconfirmed changes start again", rel, e)
        return {}
    return dict(got.csvs)


def load_previous(
    url: str, providers: Sequence[str] | None = None, *, allow_http: bool = False
) -> tuple[RawCatalog | None, str | None]:
    """The latest published catalog under `url` (either layout), or why it could not be read.
    `allow_http`: the caller's setting (`GPUHUNT_ALLOW_HTTP`, read by the command)."""
    try:
        raw = fetch.fetch(
            url,
            list(registry.OFFLINE_PROVIDERS if providers is None else providers),
            version=None,
            cache=None,
            timeout=DOWNLOAD_TIMEOUT,
            retries=2,
            allow_http=allow_http,
        )
    except GPUHuntError as e:
        return None, str(e)
    return raw, None


def write_build(build: Build, output: str | Path) -> None:
    """Lay the build out like the bucket; pointers last, so an interrupted write is not a
    loadable new version."""
    out = Path(output)
    if out.exists() and any(out.iterdir()):
        raise PipelineInputError(f"Output folder {out} is not empty")
    for rel, data in [*build.objects.items(), *build.pointers.items()]:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
