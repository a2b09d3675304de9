"""`verify`: a published catalog version downloaded through the loader's own code and checked
against its manifest; `read_build`: a build folder, verified the same way before it is uploaded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuhunt._internal import registry
from gpuhunt._internal.errors import CatalogError, CatalogIntegrityError, PipelineError
from gpuhunt._internal.formats import archive, columns
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.history import table as history
from gpuhunt._internal.load import fetch
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.models import QueryFilter
from gpuhunt._internal.publish import dataset
from gpuhunt._internal.publish.build import CARRIED_OVER, FRESH, Build, count_rows
from gpuhunt._internal.publish.converge import CANDIDATES
from gpuhunt._internal.publish.files import DOWNLOAD_TIMEOUT
from gpuhunt._internal.query import answers


@dataclass
class Verified:
    version: str
    manifest: dict[str, Any]
    csvs: dict[str, bytes]
    history_rows: int = 0


def verify(url: str, *, version: str | None = None, allow_http: bool = False) -> Verified:
    """Download a published version (the latest, or `version`) and check it against its
    manifest; raises `CatalogIntegrityError`/`CatalogError` naming the object at fault.
    `allow_http`: the caller's setting (`GPUHUNT_ALLOW_HTTP`, read by the command)."""
    base = url.rstrip("/")
    providers = list(registry.OFFLINE_PROVIDERS)
    raw = fetch.fetch(
        base,
        providers,
        version=version,
        cache=None,
        timeout=DOWNLOAD_TIMEOUT,
        retries=2,
        allow_http=allow_http,
    )
    v = raw.version
    if raw.manifest is None:
        raise CatalogIntegrityError(
            f"{base}/{v}/catalog.zip: missing, or has no manifest.json (not built by "
            "`gpuhunt catalog build`)"
        )
    manifest = raw.manifest
    where = f"{base}/{v}/catalog.zip"
    if manifest.get("version") != v:
        raise CatalogIntegrityError(
            f"{where}: manifest names version {manifest.get('version')!r}, not {v!r}"
        )
    if manifest.get("format_version") != archive.FORMAT_VERSION:
        raise CatalogIntegrityError(
            f"{where}: format_version {manifest.get('format_version')!r} is not "
            f"{archive.FORMAT_VERSION}"
        )
    entries: dict[str, Any] = manifest.get("providers") or {}
    if not entries:
        raise CatalogIntegrityError(f"{where}: the manifest lists no providers")
    extra = sorted(set(raw.csvs) - set(entries))
    if extra:
        raise CatalogIntegrityError(f"{where}: {extra[0]}.csv is not in the manifest")
    for p, entry in entries.items():
        if p not in providers:
            raise CatalogIntegrityError(f"{where}: unknown provider {p!r} in the manifest")
        if entry.get("status") not in (FRESH, CARRIED_OVER):
            raise CatalogIntegrityError(f"{where}: {p} has status {entry.get('status')!r}")
        rows = count_rows(raw.csvs[p], p)
        if rows != entry.get("rows"):
            raise CatalogIntegrityError(
                f"{where}: {p}.csv has {rows} offers, the manifest says {entry.get('rows')}"
            )
        if entry.get("columns_sha256"):
            _verify_column_file(raw, p, where)
    fetcher = fetch.Fetcher(base, DOWNLOAD_TIMEOUT, 2, allow_http=allow_http)
    # The per-provider copies, through the loader's own code (sha256 checked against each
    # copy's manifest), then against the archive's manifest.
    per_provider = fetch.fetch_per_provider(fetcher, list(entries), v, None, "network")
    for p, entry in entries.items():
        if archive.sha256(per_provider.csvs[p]) != entry["sha256"]:
            raise CatalogIntegrityError(
                f"{base}/{p}/{v}/catalog.zip: {p}.csv differs from the archive's manifest"
            )
        if version is None:
            pointer = fetcher.get(f"{p}/version").decode("utf-8", "replace").strip()
            if pointer != v:
                raise CatalogIntegrityError(
                    f"{base}/{p}/version names {pointer[:40]!r}, not the latest version {v}"
                )
    _verify_candidates(fetcher, base, v, entries)
    # The observations this version added to the open dataset (docs/availability.md).
    for rel, digest in dataset.files_of(manifest).items():
        if archive.sha256(fetcher.get(rel)) != digest:
            raise CatalogIntegrityError(f"{base}/{rel}: does not match its sha256 in the manifest")
    kept = kept_aside(manifest)
    if kept is not None:
        fetcher.get(kept)  # the unreadable history, published for inspection
    from gpuhunt._internal.history import remote

    csvs = dict(raw.csvs)  # every CSV read, so each is checked against the manifest
    checked = remote.verify_history(base, v, entries, csvs)
    return Verified(v, manifest, csvs, checked.rows)


def kept_aside(manifest: dict[str, Any]) -> str | None:
    """The object holding the previous history the build could not read, if it kept one."""
    reset = manifest.get("history_reset")
    rel = reset.get("kept_as") if isinstance(reset, dict) else None
    if not rel:
        return None
    v = str(manifest.get("version"))
    name = str(rel).removeprefix(f"{v}/")
    if not str(rel).startswith(f"{v}/") or "/" in name or not name.endswith(".zip"):
        raise CatalogIntegrityError(f"history_reset.kept_as {str(rel)[:80]!r} is not under {v}/")
    return str(rel)


def _verify_candidates(
    fetcher: fetch.Fetcher, base: str, version: str, entries: dict[str, Any]
) -> None:
    """Each unconfirmed change's last collection is in `{version}/candidates.zip`."""
    pending = {p: e["pending"] for p, e in entries.items() if e.get("pending")}
    if not pending:
        return
    where = f"{base}/{version}/{CANDIDATES}"
    got = archive.read_archive(fetcher.get(f"{version}/{CANDIDATES}"), source=where)
    for p, entry in pending.items():
        last = (entry.get("collections") or [{}])[-1]
        data = got.csvs.get(p)
        if data is None or archive.sha256(data) != last.get("sha256"):
            raise CatalogIntegrityError(f"{where}: {p}.csv is not the collection pending review")


def _verify_column_file(raw: RawCatalog, provider: str, where: str) -> None:
    """The column file must be there, load, and hold exactly the offers its CSV parses to."""
    if provider not in raw.columns:
        raise CatalogIntegrityError(
            f"{where}: {provider}{archive.COLUMNS_SUFFIX} is missing or does not match the manifest"
        )
    csv = raw.csvs[provider]
    try:
        packed = columns.decode(
            raw.columns[provider], provider=provider, csv_sha256=archive.sha256(csv)
        )
    except ValueError as e:
        raise CatalogIntegrityError(f"{where}: {provider}{archive.COLUMNS_SUFFIX}: {e}") from None
    parsed = build_table(csv.decode("utf-8", "replace"), provider=provider)
    everything = QueryFilter()
    if answers.items(packed, packed.select(everything)) != answers.items(
        parsed, parsed.select(everything)
    ):
        raise CatalogIntegrityError(
            f"{where}: {provider}{archive.COLUMNS_SUFFIX} holds other offers than {provider}.csv"
        )


def read_build(directory: str | Path) -> Build:
    """A folder written by `build`, checked (with `verify`) before anything is uploaded."""
    folder = Path(directory)
    try:
        checked = verify(str(folder))
    except CatalogError as e:
        raise PipelineError(f"Refusing to publish {folder}: {e}") from e
    v = checked.version
    objects = {f"{v}/catalog.zip": (folder / v / "catalog.zip").read_bytes()}
    pointers: dict[str, bytes] = {}
    for p in sorted(checked.manifest["providers"]):
        objects[f"{p}/{v}/catalog.zip"] = (folder / p / v / "catalog.zip").read_bytes()
        pointers[f"{p}/version"] = v.encode()
    kept = sorted(p for p, e in checked.manifest["providers"].items() if e.get("history_sha256"))
    if kept:  # checked by `verify` above
        for rel in [f"{v}/{history.OBJECT}", *(f"{p}/{v}/{history.OBJECT}" for p in kept)]:
            objects[rel] = (folder / rel).read_bytes()
    if any(e.get("pending") for e in checked.manifest["providers"].values()):
        objects[f"{v}/{CANDIDATES}"] = (folder / v / CANDIDATES).read_bytes()
    for rel in dataset.files_of(checked.manifest):  # checked by `verify` above
        objects[rel] = (folder / rel).read_bytes()
    kept_rel = kept_aside(checked.manifest)
    if kept_rel is not None:
        objects[kept_rel] = (folder / kept_rel).read_bytes()
    pointers["version"] = v.encode()
    return Build(v, checked.manifest, objects, pointers)
