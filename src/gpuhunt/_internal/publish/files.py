"""The build's file I/O: the collected CSVs it reads, the previous catalog it carries
providers over from, and the folder it writes (laid out like the bucket)."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from pathlib import Path

from gpuhunt._internal import registry
from gpuhunt._internal.errors import GPUHuntError, PipelineInputError
from gpuhunt._internal.load import fetch
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.publish.build import Build, Collected

logger = logging.getLogger(__name__)

DOWNLOAD_TIMEOUT = (10.0, 120.0)


def read_input(
    directory: str | Path, providers: Sequence[str] | None = None
) -> dict[str, Collected]:
    """The `{provider}.csv` files a collection left in `directory`; `collected_at` is each file's
    modification time (the collector writes it once, at the end)."""
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
        mtime = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc)
        out[name] = Collected(path.read_bytes(), mtime.replace(microsecond=0).isoformat())
    return out


def load_previous(
    url: str, providers: Sequence[str] | None = None
) -> tuple[RawCatalog | None, str | None]:
    """The latest published catalog under `url` (either layout), or why it could not be read."""
    try:
        raw = fetch.fetch(
            url,
            list(registry.OFFLINE_PROVIDERS if providers is None else providers),
            version=None,
            cache=None,
            timeout=DOWNLOAD_TIMEOUT,
            retries=2,
            allow_http=Settings.from_env().allow_http,
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
