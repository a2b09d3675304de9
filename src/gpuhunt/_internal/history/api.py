"""What `gpuhunt.diff`, `Catalog.history` and the `gpuhunt history` / `gpuhunt catalog diff`
commands call: a user's arguments (a version name, a base URL, a build folder, a folder of CSVs,
a zip; filters and a start day) turned into the catalogs to compare or the price history asked
for. Kept apart from fetching and verifying history objects (`history.remote`), which the
nightly build shares and which has no notion of what a user may type.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuhunt._internal import registry
from gpuhunt._internal.errors import (
    CatalogError,
    HistoryUnavailable,
    InputError,
    UnknownCatalogError,
)
from gpuhunt._internal.formats import archive as storage
from gpuhunt._internal.history import daily
from gpuhunt._internal.history.diff import CatalogDiff, compare
from gpuhunt._internal.history.remote import TIMEOUT, fetch_history
from gpuhunt._internal.load import fetch, sources, urls
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.context import Context
from gpuhunt._internal.load.download import BACKGROUND_FACTOR
from gpuhunt._internal.load.settings import Settings

if TYPE_CHECKING:
    from gpuhunt._internal.history.availability import AvailabilityHistory

# --------------------------------------------------------------------------- diff


def catalog_url_of(catalog_url: str | None, settings: Settings) -> str:
    return (catalog_url or settings.catalog_url).rstrip("/")


def _complete(raw: sources.RawCatalog, what: str) -> dict[str, bytes]:
    # A provider that failed to load would show up as every one of its offers removed.
    if raw.problems:
        raise CatalogError(f"Cannot compare {what}: {'; '.join(raw.problems)}")
    return dict(raw.csvs)  # every CSV is compared: each is read (and checked) here


def load_side(
    spec: str,
    *,
    catalog_url: str | None = None,
    timeout: tuple[float, float] = TIMEOUT,
    retries: int = 1,
    settings: Settings | None = None,
) -> tuple[str, dict[str, bytes]]:
    """One side of a diff: (a name for it, provider -> catalog CSV). `spec` is a local build
    folder, a folder of `{provider}.csv`, a catalog zip, a base URL (its latest version), or a
    version name (or `latest`) at `catalog_url`. `settings`: the caller's (read from the
    environment at the top: `diff()`, the command); default: the default settings."""
    settings = settings if settings is not None else Settings()
    context = Context(settings=settings)
    rules: dict[str, Any] = {
        "allow_http": settings.allow_http,
        "max_bytes": settings.max_download_bytes,
        "context": context,
    }
    providers = list(registry.OFFLINE_PROVIDERS)
    path = Path(spec)
    if "://" not in spec and path.exists():
        if path.is_file():
            archive = storage.read_archive(path.read_bytes(), source=str(path))
            name = str((archive.manifest or {}).get("version") or path.name)
            return f"{name} ({path})", dict(archive.csvs)
        published = (path / "version").is_file() or any(
            (path / p / "version").is_file() for p in providers
        )
        if published:
            raw = fetch.fetch(
                str(path),
                providers,
                version=None,
                cache=None,
                timeout=timeout,
                retries=retries,
                **rules,
            )
            return f"{raw.version} ({path})", _complete(raw, str(path))
        return str(path), dict(sources.from_directory(str(path), providers).csvs)
    if "://" in spec:
        raw = fetch.fetch(
            spec,
            providers,
            version=None,
            cache=DiskCache(spec.rstrip("/"), settings.cache_dir),
            timeout=timeout,
            retries=retries,
            **rules,
        )
        return f"{raw.version} ({urls.safe_url(spec)})", _complete(raw, spec)
    if spec != "latest" and not sources.is_version(spec):
        raise UnknownCatalogError(f"{spec!r} is not a folder, zip file, URL or catalog version")
    base = catalog_url_of(catalog_url, settings)
    try:
        raw = fetch.fetch(
            base,
            providers,
            version=None if spec == "latest" else spec,
            cache=DiskCache(base, settings.cache_dir),
            timeout=timeout,
            retries=retries,
            **rules,
        )
    except CatalogError as e:
        raise CatalogError(f"{e} (and there is no folder or file named {spec!r} here)") from e
    return raw.version, _complete(raw, f"version {spec}")


def diff(
    old: str, new: str, *, catalog_url: str | None = None, settings: Settings | None = None
) -> CatalogDiff:
    """What changed from catalog `old` to `new`: offers added, removed and repriced.

    Each side is a catalog version name (or `"latest"`) published at `catalog_url` (default
    `GPUHUNT_CATALOG_URL` or the public bucket), a base URL (its latest version), a local
    build folder, a folder of `{provider}.csv` files, or a catalog zip. A public entry point:
    the environment is read here (unless `settings` is given), once for both sides."""
    settings = settings if settings is not None else Settings.from_env()
    old_name, old_csvs = load_side(old, catalog_url=catalog_url, settings=settings)
    new_name, new_csvs = load_side(new, catalog_url=catalog_url, settings=settings)
    return compare(old_csvs, new_csvs, old_name=old_name, new_name=new_name)


# --------------------------------------------------------------------------- Catalog.history


def parse_day(text: str | dt.date | None) -> dt.date | None:
    if text is None or isinstance(text, dt.date):
        return text
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise InputError(f"Not a date: {text[:20]!r} (use YYYY-MM-DD)") from None


def _filters(filters: Mapping[str, Any]) -> tuple[Any, Any, Any, Any, Any]:
    """(gpu_name, provider, location, spot, since) of `filters`; a name no history filter has
    is refused."""
    unknown = set(filters) - {"gpu_name", "provider", "location", "spot", "since", "by"}
    if unknown:
        raise InputError(f"not a history filter: {', '.join(sorted(unknown))}")
    names = ("gpu_name", "provider", "location", "spot", "since")
    gpu_name, provider, location, spot, since = (filters.get(n) for n in names)
    return gpu_name, provider, location, spot, since


def _as_list(value: str | list[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def catalog_history(
    url: str,
    filters: Mapping[str, Any],
    *,
    version: str | None = None,
    timeout: tuple[float, float] = TIMEOUT,
    retries: int = 1,
    context: Context | None = None,
    load_timeout: float = 0.0,
    availability: bool = False,
) -> daily.PriceHistory:
    """`Catalog.history` of `filters` (its keywords that filter, named as `spec.HISTORY` names
    them: `gpu_name`, `provider`, `location`, `spot`, `since`, `by`; None or absent: not
    given), by the catalog's rules (`context`: its settings, transport and clock); the whole
    download within `load_timeout` times `BACKGROUND_FACTOR` seconds, as a pinned load gets (a
    history has no fallback to go to), 0 for no limit."""
    gpu_name, provider, location, spot, since = _filters(filters)
    by = filters.get("by", "gpu")
    context = context if context is not None else Context()
    settings = context.settings
    if settings.catalog_dir:
        raise HistoryUnavailable(
            "GPUHUNT_CATALOG_DIR serves plain CSVs, which have no price history"
        )
    if by not in ("gpu", "instance"):
        raise InputError(f"by must be 'gpu' or 'instance', not {by!r}")
    providers = _as_list(provider)
    if providers is not None:
        names = [registry.spec(p).name for p in providers]  # raises on unknown names
        providers = [p for p in names if p in registry.OFFLINE_PROVIDERS]
        if not providers:
            raise HistoryUnavailable(
                f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} queried live, not "
                "kept in the catalog, so there is no price history for it"
            )
    start = parse_day(since)
    local = sources.local_path(url) is not None
    got = fetch_history(
        url,
        version=version,
        cache=None if local else DiskCache(url, settings.cache_dir),
        timeout=timeout,
        retries=retries,
        providers=providers,
        context=context,
        deadline=context.clock() + load_timeout * BACKGROUND_FACTOR if load_timeout > 0 else None,
    )
    result = daily.query(
        got.spans(),
        gpu_name=_as_list(gpu_name),
        provider=providers,
        location=_as_list(location),
        spot=spot,
        since=start,
        by=by,
    )
    result.version, result.url, result.missing = got.version, got.url, got.missing
    if availability:
        result.availability = availability_history(
            url, {**filters, "provider": providers, "since": start}
        )
    return result


def availability_history(
    url: str,
    filters: Mapping[str, Any],
    *,
    s3_endpoint: str | None = None,
    anonymous: bool = True,
) -> AvailabilityHistory:
    """Per offer and location: the observations and the share available over the window, from
    the observations dataset published under `url` (DuckDB; the `dataset` extra), of
    `filters` as `catalog_history` takes them (`by` is not one here)."""
    from gpuhunt._internal.history import availability

    gpu_name, provider, location, spot, since = _filters(filters)

    providers = _as_list(provider)
    if providers is not None:
        providers = [registry.spec(p).name for p in providers]  # raises on unknown names
    return availability.query(
        url,
        gpu_name=_as_list(gpu_name),
        provider=providers,
        location=_as_list(location),
        spot=spot,
        since=parse_day(since),
        s3_endpoint=s3_endpoint,
        anonymous=anonymous,
    )
