"""`gpuhunt catalog site OUT`: a static web page of a catalog (the I/O around `site.data`).

What it writes into OUT:

- `offers.json`: the page's data (`site.data`), for anyone who wants it without the page;
- `offers.js`: the same document as a script (`window.GPUHUNT_SITE = JSON.parse("...")`), which is what the
  page loads: browsers refuse `fetch()` of a file next to a page opened from `file://`, but
  not a `<script src>`, so the page works from a folder as well as from any static host;
- `index.html`: the page, every script and style inside it (no CDN, no request elsewhere),
  written last, so that a host serving OUT while it is written never pairs a new page with old
  data (the nightly job uploads it last for the same reason).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, cast

from gpuhunt._internal import registry
from gpuhunt._internal.errors import CatalogDownloadError, CatalogError
from gpuhunt._internal.formats import archive as storage
from gpuhunt._internal.load import disk, sources
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.loaded import Loaded
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.load.sides import Sides, reader_of
from gpuhunt._internal.load.tables import combine_freeing, provider_table
from gpuhunt._internal.models import CatalogItem, QueryFilter
from gpuhunt._internal.query import answers
from gpuhunt._internal.query.table import Table
from gpuhunt._internal.site import arrays, data, facts, marks, usage

TIMEOUT = (10.0, 60.0)
BUNDLED = "bundled"


@dataclass
class Written:
    out: Path
    version: str | None
    offers: int
    rows: int  # distinct offers (the page's rows)
    history: bool
    bytes: int  # size of offers.json


def load_catalog(spec: str | None, settings: Settings | None = None) -> sources.RawCatalog:
    """The catalog `spec` names: `bundled` (the snapshot in the package), a catalog zip, a
    folder of `{provider}.csv`, a build folder or published base URL (its latest version);
    None: the published catalog (`settings.catalog_url`: the command reads it from
    `GPUHUNT_CATALOG_URL`; the public bucket by default), or, when it cannot be downloaded,
    what `gpuhunt query` falls back to (the disk cache's newest copy, else the bundled
    snapshot), with a warning."""
    settings = settings or Settings()
    providers = list(registry.OFFLINE_PROVIDERS)
    if spec == BUNDLED:
        return sources.bundled()
    base = (spec or settings.catalog_url).rstrip("/")
    path = Path(base)
    if "://" not in base and path.is_file():
        archive = storage.read_archive(path.read_bytes(), source=str(path))
        version = str((archive.manifest or {}).get("version") or path.stem)
        return sources.RawCatalog.of(archive, version, "directory", str(path))
    if "://" not in base and path.is_dir():
        published = (path / "version").is_file() or any(
            (path / p / "version").is_file() for p in providers
        )
        if not published:
            return sources.from_directory(str(path), providers)
    sources.check_url_allowed(base, allow_http=settings.allow_http)
    from gpuhunt._internal.load import fetch  # requests: only for a download

    try:
        return fetch.fetch(
            base,
            providers,
            version=None,
            cache=None,
            timeout=TIMEOUT,
            retries=1,
            allow_http=settings.allow_http,
            max_bytes=settings.max_download_bytes,
        )
    except CatalogDownloadError as e:
        if spec is not None:  # a catalog asked for by name is that one or an error
            raise
        cache = None if sources.local_path(base) else DiskCache(base, settings.cache_dir)
        return disk.last_resort(base, cache, e)


def _providers(raw: sources.RawCatalog) -> list[str]:
    """The providers of `raw` a `Catalog` serves offers of: the offline ones, and in the bundled
    snapshot the online ones it holds, which stand in for them offline (`Loader._install`)."""
    online = [p for p in registry.ONLINE_PROVIDERS if p in raw.csvs]
    return [p for p in registry.OFFLINE_PROVIDERS if p in raw.csvs] + online


def tables_of(raw: sources.RawCatalog) -> list[Table]:
    """Every offer of `raw` as its providers' tables, read as a `Catalog` reads them (column
    files where published, else the CSVs), in the catalog's provider order, not joined."""
    tables = [provider_table(raw, p, None, set()) for p in _providers(raw)]
    if not tables:
        raise CatalogError(f"{raw.url}: the catalog has no offers of any provider")
    return tables


def table_of(raw: sources.RawCatalog) -> Table:
    """Every offer of `raw` (`tables_of`) in one table, in the catalog's price order."""
    return combine_freeing(tables_of(raw))


def offers_of(raw: sources.RawCatalog) -> list[CatalogItem]:
    """Every offer of `raw` as `CatalogItem`s, in the catalog's price order (`table_of`)."""
    table = table_of(raw)
    return answers.items(table, table.select(QueryFilter(), None))


def history_of(raw: sources.RawCatalog) -> dict[str, Any] | None:
    """The cheapest price per GPU-hour per day per GPU model, if the catalog publishes a
    history (a build folder or a published URL); None otherwise."""
    if raw.source not in ("network", "directory") or raw.version in ("local", None):
        return None
    from gpuhunt._internal.history import daily
    from gpuhunt._internal.history.remote import fetch_history

    try:
        got = fetch_history(raw.url, version=raw.version, timeout=TIMEOUT)
        result = daily.query(got.spans(), by="gpu")
    except CatalogError:
        return None
    if not result.days:
        return None
    return {
        "days": [d.isoformat() for d in result.days],
        "series": [{"name": s.name, "prices": s.prices} for s in result.series],
    }


def availability_of(raw: sources.RawCatalog, wanted: bool = True) -> Any:
    """The last week's availability history, where the catalog publishes observations."""
    if not wanted or raw.source not in ("network", "directory") or raw.version in ("local", None):
        return None
    from gpuhunt._internal.history import availability

    return availability.recent(raw.url)


def _write(path: Path, body: bytes) -> None:
    """`body` at `path`, atomically, through a temporary file of a name nobody can plant
    beforehand (`tempfile` makes it with O_EXCL in `path`'s folder): a link planted at a fixed
    name would have been written through, to wherever it points."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        os.chmod(tmp, 0o644)  # a page to publish: readable as a plain write would make it
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _string_literal(body: bytes) -> bytes:
    """`json.dumps(body.decode())` of a JSON document `json` wrote (ASCII only, every control
    character already escaped): only its backslashes and quotes need escaping again."""
    return b'"' + body.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'


def page_template() -> str:
    return resources.files("gpuhunt._internal.site").joinpath("page.html").read_text("utf-8")


def write_site(
    out: str | os.PathLike[str],
    raw: sources.RawCatalog,
    *,
    now: dt.datetime | None = None,
    with_history: bool = True,
) -> Written:
    """Write the page of catalog `raw` into folder `out` (created if missing)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    # The providers' tables as they are: the page is the one of their joined table (what a
    # `Catalog` holds), and joining a million rows would cost more than the page itself.
    tables = tables_of(raw)
    doc = data.table_document(
        tables,
        facts.library_facts(),
        version=raw.version,
        manifest=raw.manifest,
        history=history_of(raw) if with_history else None,
        now=now,
    )
    doc["marks"] = marks.offer_marks_from_table(
        tables, raw.manifest, availability_of(raw, with_history)
    )
    # The side files are found as a `Catalog` finds them for the same catalog (`reader_of`
    # reads only the source, url, version and manifest a `RawCatalog` has too).
    doc["costs"] = usage.page_costs(doc, Sides(reader_of(cast(Loaded, raw), None)).terms)
    body = arrays.json_bytes(doc)  # what json.dumps writes, the offers' columns from numpy
    digest = hashlib.sha256(body).hexdigest()[:12]
    _write(folder / "offers.json", body)
    # JSON.parse of a string literal: browsers parse that much faster than the same document
    # written as an object literal (a full JavaScript parse), which matters at a million offers.
    literal = _string_literal(body)
    _write(folder / "offers.js", b"window.GPUHUNT_SITE=JSON.parse(" + literal + b");\n")
    # The data's hash in its URL: a browser or CDN holding yesterday's offers.js never shows
    # it under today's page.
    page = page_template().replace("__DATA_URL__", f"offers.js?v={digest}")
    _write(folder / "index.html", page.encode())
    return Written(
        folder,
        raw.version,
        sum(len(t) for t in tables),
        len(doc["shapes"]["instance"]),
        doc["history"] is not None,
        len(body),
    )
