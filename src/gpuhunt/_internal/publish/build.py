"""The build itself, pure: which CSV each provider publishes in a new version (fresh or carried
over from the previous one) and the objects of both published layouts (see `load.fetch`):

    {version}/catalog.zip + version                      (archive: every CSV + manifest.json)
    {provider}/{version}/catalog.zip + {provider}/version (per provider: what gpuhunt 0.1.x reads)

A fresh CSV is accepted only if its header is exactly the catalog format, it has at least one
offer, no row is malformed, and the integrity check given (the `integrity` module's tests)
passes on it. Then the plausibility gate (`publish/gate.py`, thresholds in the registry)
compares it with the previous CSV: a large drop in offers, a vanished region or GPU model, or a
median price per instance type moved beyond a ratio keeps the previous CSV, unless `accept`
names the provider (`--accept PROVIDER`, `--accept-all`, the accept file; the manifest then keeps
`accepted_despite` and `accepted_by`).

The gate converges: a refused CSV is kept with the version as a *candidate* (`{version}/
candidates.zip`, its collections listed in the entry's `pending`), and the next collection is
compared with it too, not only with the carried-over data. When `confirmations` consecutive
collections (the refused one first) agree with each other, the change is real and the last of
them is published, its entry recording the reason and the collections (`evidence`). A change
beyond the gate's hard limits (a price x10 off, nearly every offer gone) is a broken collection:
confirmations never publish it. Otherwise the provider's CSV from the previous version is carried over
unchanged: status `carried_over`, `reason`, `from_version` and `collected_at` of the version that collected it (both
survive repeated carry-overs). Every provider of the new version gets a per-provider object
under the new version, so a pinned version is complete in both layouts. A provider with neither
is left out; if the previous catalog could not be read and some provider needs carrying over,
the build fails: a partial build must not replace a good one. A version the previous catalog
already has is refused: published versions are immutable (clients cache them by name).

The confirmation bookkeeping lives in `publish/converge.py`; the observations each fresh
provider adds to the open dataset (`observations/date=.../provider=.../part-V.parquet`, and
the entry's `availability`) in `publish/dataset.py`.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuhunt._internal import currency, errors, registry, schema
from gpuhunt._internal.errors import PipelineError, PipelineInputError
from gpuhunt._internal.formats import archive, columns
from gpuhunt._internal.formats.csv import ReadStats, iter_rows
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.history import table as history
from gpuhunt._internal.load import sources
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.publish import converge, dataset, gate
from gpuhunt._internal.publish.converge import CANDIDATES, Collected, pack_candidates
from gpuhunt._version import __version__

logger = logging.getLogger(__name__)

FRESH = "fresh"
CARRIED_OVER = "carried_over"


@dataclass
class Outcome:
    provider: str
    status: str  # fresh, carried_over, or missing (left out of the version)
    rows: int = 0
    reason: str | None = None  # why the fresh CSV was not used


@dataclass
class Build:
    version: str
    manifest: dict[str, Any]
    objects: dict[str, bytes]  # path under the base -> content; immutable, uploaded first
    pointers: dict[str, bytes]  # `version` files, written last (the archive's one at the end)
    outcomes: list[Outcome] = field(default_factory=list)


# One provider's entry in the manifest (rows, sha256, status, from_version, ...; see
# docs/pipeline.md): kept as the JSON object it is, as `verify` reads it back from published
# archives.
Entry = dict[str, Any]


@dataclass(frozen=True)
class Manifest:
    """`manifest.json` of a version: the one place its top-level fields are written, for the
    archive and (with one provider's entry) each per-provider archive."""

    version: str
    built_at: str  # ISO 8601, UTC
    providers: dict[str, Entry]
    history_reset: dict[str, Any] | None = None  # why the price history starts again here
    # The side files (terms, spot bands) by name: sha256 and provider (docs/costs.md)
    sides: dict[str, Entry] = field(default_factory=dict)
    format_version: int = archive.FORMAT_VERSION
    gpuhunt_version: str = __version__

    def to_json(self, *, only: str | None = None) -> dict[str, Any]:
        """The manifest as written (`archive.write_archive` sorts the keys); `only`: the
        per-provider archive's, which lists that provider alone."""
        out: dict[str, Any] = {
            "format_version": self.format_version,
            "version": self.version,
            "gpuhunt_version": self.gpuhunt_version,
            "built_at": self.built_at,
            "providers": self.providers if only is None else {only: self.providers[only]},
        }
        if self.history_reset is not None:
            out["history_reset"] = self.history_reset
        sides = {n: e for n, e in self.sides.items() if only is None or e["provider"] == only}
        if sides:
            out["sides"] = sides
        return out


def check_version(version: str) -> str:
    if not sources.is_version(version):
        raise PipelineInputError(
            f"Not a valid catalog version: {version[:40]!r} (letters, digits, '.', '_', '-'; "
            "e.g. 20261129-1)"
        )
    return version


def check_csv(data: bytes, provider: str) -> tuple[int, str | None]:
    """(rows, reason it is unacceptable or None). Zero tolerance: a collector that wrote one bad
    row has a bug, and its output is not published."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return 0, f"not UTF-8 ({e.reason} at byte {e.start})"
    header = text.split("\n", 1)[0].strip("\r")
    if header.split(",") not in schema.PUBLISHED_HEADERS:
        return 0, f"header is not the catalog format: {header[:120]!r}"
    stats = ReadStats()
    for _ in iter_rows(io.StringIO(text, newline=""), provider=provider, stats=stats, quiet=True):
        pass
    if stats.skipped:
        return stats.rows, f"{stats.skipped} malformed row(s): {'; '.join(stats.errors)}"
    if not stats.rows:
        return 0, "no offers"
    return stats.rows, None


def count_rows(data: bytes, provider: str) -> int:
    stats = ReadStats()
    text = data.decode("utf-8", "replace")
    try:
        for _ in iter_rows(
            io.StringIO(text, newline=""), provider=provider, stats=stats, quiet=True
        ):
            pass
    except errors.MissingColumns:
        return 0
    return stats.rows


def _previous_versions(previous: RawCatalog) -> set[str]:
    return {previous.version, *previous.versions.values()}


def build_catalog(
    version: str,
    collected: dict[str, Collected],
    previous: RawCatalog | None,
    *,
    providers: Sequence[str] | None = None,
    integrity: Callable[[str, bytes], str | None] | None = None,
    previous_error: str | None = None,
    built_at: str | None = None,
    accept: Container[str] = (),
    not_collected: dict[str, str] | None = None,
    previous_history: dict[str, bytes] | None = None,
    accepted_by: dict[str, str] | None = None,
    candidates: dict[str, bytes] | None = None,
    history_reset: dict[str, Any] | None = None,
    extra_objects: dict[str, bytes] | None = None,
) -> Build:
    """Decide each provider's CSV (fresh or carried over) and lay out both published formats.

    `integrity(provider, csv)` returns why the CSV fails its integrity tests, or None.
    `previous_error` says why `--previous` could not be read, if it was given and failed.
    `accept`: providers whose fresh CSV is published although the plausibility gate (`gate.py`)
    finds it implausible next to the previous one (`gate.EVERY_PROVIDER` for all).
    `not_collected`: why a provider without a fresh CSV was not collected (e.g. not due), for
    the manifest; by default "no CSV was collected".
    `previous_history` is the price history published with `previous` (provider -> table,
    see `history`); it is carried forward, and started afresh for providers without one.
    `accepted_by`: who accepted a provider in `accept`, for the manifest (default: `--accept`).
    `candidates`: the refused CSVs published with `previous` (`{version}/candidates.zip`).
    `history_reset`: why the price history starts again with this version (the manifest's
    `history_reset`); `extra_objects` are published with the version (the unreadable history
    kept aside).
    """
    check_version(version)
    _refuse_published(version, previous)
    built_at = built_at or _now()
    before = ((previous.manifest or {}).get("providers") or {}) if previous is not None else {}
    chosen = _Chosen()
    for p in registry.OFFLINE_PROVIDERS if providers is None else providers:
        got = collected.get(p)
        reason: str | None = (not_collected or {}).get(p, "no CSV was collected")
        pending: dict[str, Any] | None = None
        if got is not None:
            reason, pending = _take_fresh(
                chosen,
                p,
                version,
                got,
                previous,
                integrity,
                accept,
                accepted_by or {},
                before.get(p),
                candidates or {},
            )
            if reason is None:
                continue
        _take_carried(
            chosen,
            p,
            version,
            reason,
            pending,
            previous,
            previous_error,
            before.get(p),
            candidates or {},
            not_collected=got is None,
        )
    if not chosen.csvs:
        raise PipelineError(f"Nothing to publish: no provider has a usable CSV for {version}")
    sides = {n: {"sha256": archive.sha256(d), "provider": n.split(".")[0]}
             for n, d in sorted(chosen.sides.items())}  # fmt: skip
    manifest = Manifest(version, built_at, chosen.entries, history_reset, sides)
    packed = {p: column_file(p, data) for p, data in chosen.csvs.items()}
    for p, data in packed.items():
        chosen.entries[p]["columns_sha256"] = archive.sha256(data)
    tables = history.for_build(
        chosen.entries, chosen.csvs, previous_history or {}, before, built_at
    )
    for p, table in tables.items():
        chosen.entries[p]["history_sha256"] = archive.sha256(table)
        chosen.entries[p]["history_rows"] = history.rows_of(table)
    observed = dataset.observe(chosen.entries, chosen.csvs, version, built_at, before)
    extra = {**observed, **(extra_objects or {})}
    objects, pointers = _lay_out(manifest, chosen, packed, tables, extra)
    return Build(version, manifest.to_json(), objects, pointers, chosen.outcomes)


def _refuse_published(version: str, previous: RawCatalog | None) -> None:
    if previous is not None and version in _previous_versions(previous):
        raise PipelineError(
            f"Version {version} is already published under {previous.url}; "
            "published versions never change, pick a new one"
        )


@dataclass
class _Chosen:
    """What `build_catalog` has decided so far: each provider's CSV and manifest entry, the
    outcome for the report, and this version's candidates (the refused CSVs awaiting
    confirmation)."""

    csvs: dict[str, bytes] = field(default_factory=dict)
    entries: dict[str, Entry] = field(default_factory=dict)
    outcomes: list[Outcome] = field(default_factory=list)
    waiting: dict[str, bytes] = field(default_factory=dict)
    sides: dict[str, bytes] = field(default_factory=dict)  # of the providers taken fresh


def _take_fresh(
    chosen: _Chosen,
    p: str,
    version: str,
    got: Collected,
    previous: RawCatalog | None,
    integrity: Callable[[str, bytes], str | None] | None,
    accept: Container[str],
    accepted_by: dict[str, str],
    entry: Entry | None,
    candidates: dict[str, bytes],
) -> tuple[str | None, dict[str, Any] | None]:
    """Publish `p`'s fresh CSV if it passes the checks, the gate, an accept or a confirmation:
    (None, None) when it is taken, else (why not, the unconfirmed change to keep)."""
    rows, reason = check_csv(got.data, p)
    if reason is None and integrity is not None:
        reason = integrity(p, got.data)
    implausible = None
    pending: dict[str, Any] | None = None
    extra: dict[str, Any] = {}
    if reason is None and previous is not None:
        verdict = gate.judge(p, previous.csvs.get(p), got.data)
        implausible = verdict.reason
        if implausible is not None and p in accept:
            extra["accepted_by"] = accepted_by.get(p, "the maintainer (--accept)")
        elif implausible is not None:
            reason, pending, evidence = converge.confirm(
                p, version, got, rows, verdict, entry, candidates
            )
            if evidence is not None:
                needed = registry.spec(p).confirmations
                extra["accepted_by"] = (
                    f"{needed} consecutive collections that agree with each other"
                )
                extra["evidence"] = evidence
            elif pending is not None:
                chosen.waiting[p] = converge.candidate_csv(pending, got.data, entry, candidates, p)
            if reason is None:
                implausible = f"{implausible} (confirmed)"
    if reason is not None:
        return reason, pending
    chosen.csvs[p] = got.data
    chosen.sides.update(got.sides)
    chosen.entries[p] = {
        "rows": rows,
        "sha256": archive.sha256(got.data),
        "collected_at": got.collected_at,
        "status": FRESH,
        "from_version": version,
    }
    if fx := currency.rates_in_csv(got.data):  # the rates a non-USD price list was converted at
        chosen.entries[p]["fx"] = fx
    if implausible is not None:
        # Kept in the manifest, so the override is on record with what it overrode.
        chosen.entries[p]["accepted_despite"] = implausible
        chosen.entries[p].update(extra)
        logger.warning("%s: %s; accepted by %s", p, implausible, extra["accepted_by"])
    chosen.outcomes.append(Outcome(p, FRESH, rows, implausible))
    return None, None


def _take_carried(
    chosen: _Chosen,
    p: str,
    version: str,
    reason: str | None,
    pending: dict[str, Any] | None,
    previous: RawCatalog | None,
    previous_error: str | None,
    entry: Entry | None,
    candidates: dict[str, bytes],
    *,
    not_collected: bool,
) -> None:
    """Carry `p`'s CSV over from the previous version (`reason`: why no fresh one), or leave
    `p` out when there is none; `not_collected`: no fresh CSV came at all (an unconfirmed
    change then keeps waiting)."""
    carried = _carry_over(p, previous, previous_error, reason)
    if carried is None:
        logger.warning("%s is left out of %s: %s, and there is no previous CSV", p, version, reason)
        chosen.outcomes.append(Outcome(p, "missing", 0, reason))
        return
    chosen.csvs[p], chosen.entries[p] = carried
    if pending is None and not_collected:
        # Not collected this time: an unconfirmed change keeps waiting for the next one.
        kept = converge.pending_of(entry, candidates, p)
        if kept is not None:
            pending, chosen.waiting[p] = kept
    if pending is not None:
        chosen.entries[p]["pending"] = pending
    logger.warning(
        "%s: %s; carrying over its CSV from %s", p, reason, chosen.entries[p]["from_version"]
    )
    chosen.outcomes.append(Outcome(p, CARRIED_OVER, chosen.entries[p]["rows"], reason))


def _lay_out(
    manifest: Manifest,
    chosen: _Chosen,
    packed: dict[str, bytes],
    tables: dict[str, bytes],
    extra_objects: dict[str, bytes],
) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(objects, pointers) of both published layouts (the module docstring)."""
    version, csvs = manifest.version, chosen.csvs
    objects = {
        f"{version}/catalog.zip": archive.write_archive(
            csvs, manifest.to_json(), packed, chosen.sides
        )
    }
    pointers: dict[str, bytes] = {}
    for p in sorted(csvs):
        own = {n: d for n, d in chosen.sides.items() if n.split(".")[0] == p}
        objects[f"{p}/{version}/catalog.zip"] = archive.write_archive(
            {p: csvs[p]}, manifest.to_json(only=p), {p: packed[p]}, own
        )
        pointers[f"{p}/version"] = version.encode()
    # Beside the catalogs, so clients that only query never download it.
    objects[f"{version}/{history.OBJECT}"] = history.pack(tables, version)
    for p in sorted(tables):
        objects[f"{p}/{version}/{history.OBJECT}"] = history.pack({p: tables[p]}, version)
    if chosen.waiting:
        objects[f"{version}/{CANDIDATES}"] = pack_candidates(chosen.waiting, version)
    for rel, data in extra_objects.items():
        objects[rel] = data
    pointers["version"] = version.encode()  # last: dicts keep insertion order
    return objects, pointers


def column_file(provider: str, csv: bytes) -> bytes:
    """The parsed form of a provider's CSV that clients load without parsing (`formats.columns`);
    rebuilt from the CSV for carried-over providers too, so it always matches this version's
    reader of the CSV."""
    table = build_table(csv.decode("utf-8"), provider=provider)
    return columns.encode(table, archive.sha256(csv))


def _carry_over(
    provider: str,
    previous: RawCatalog | None,
    previous_error: str | None,
    reason: str | None,
) -> tuple[bytes, dict[str, Any]] | None:
    if previous is None:
        if previous_error is not None:
            raise PipelineError(
                f"{provider} cannot be published fresh ({reason}) and the previous catalog "
                f"could not be read to carry it over: {previous_error}"
            )
        return None
    data = previous.csvs.get(provider)
    if data is None:
        failed = [m for m in previous.problems if m.startswith(f"{provider}:")]
        if failed:
            raise PipelineError(
                f"{provider} cannot be published fresh ({reason}) and its previous catalog "
                f"could not be read: {failed[0]}"
            )
        return None
    given = ((previous.manifest or {}).get("providers") or {}).get(provider) or {}
    from_version = given.get("from_version") or previous.versions.get(provider) or previous.version
    return data, {
        "rows": count_rows(data, provider),
        "sha256": archive.sha256(data),
        "collected_at": given.get("collected_at"),
        "status": CARRIED_OVER,
        "from_version": str(from_version),
        "reason": reason,  # why this version's fresh CSV was not used
    }


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
