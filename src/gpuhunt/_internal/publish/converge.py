"""The converging gate's bookkeeping for `publish.build`: a fresh CSV the plausibility gate
refused is kept as a *candidate* (`{version}/candidates.zip`, its collections listed in the
manifest entry's `pending`), and the next collections are compared with it; when enough
consecutive collections agree with each other the change is published (`build`'s docstring
tells the whole rule). Pure: manifests and bytes in, decisions out.

Only offers, regions, GPU models and prices take part (`gate.summarize`): a flip of an offer's
availability reading (its `available` column) changes the CSV's bytes but is never a
change for the gate, so a type selling out can never hold a provider's prices back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpuhunt._internal import registry
from gpuhunt._internal.formats import archive
from gpuhunt._internal.publish import gate

CANDIDATES = "candidates.zip"  # {version}/candidates.zip: the refused CSVs awaiting confirmation


@dataclass
class Collected:
    """A freshly collected provider CSV (`publish.build` builds a version of them)."""

    data: bytes
    collected_at: str  # ISO 8601, UTC
    # The files the collector wrote beside the CSV, by name (`aws.terms`, `aws.interruption`:
    # docs/costs.md); published with the CSV when it is taken fresh.
    sides: dict[str, bytes] = field(default_factory=dict)


def collection(version: str, got: Collected, rows: int) -> dict[str, Any]:
    return {
        "version": version,
        "collected_at": got.collected_at,
        "sha256": archive.sha256(got.data),
        "rows": rows,
    }


def pending_of(
    entry: dict[str, Any] | None, candidates: dict[str, bytes], provider: str
) -> tuple[dict[str, Any], bytes] | None:
    """The previous version's unconfirmed change of `provider` and its last collection's CSV,
    when both are there and match (else the chain starts again)."""
    pending = (entry or {}).get("pending")
    data = candidates.get(provider)
    if not isinstance(pending, dict) or data is None:
        return None
    collections = pending.get("collections")
    if not isinstance(collections, list) or not collections:
        return None
    last = collections[-1]
    if not isinstance(last, dict) or last.get("sha256") != archive.sha256(data):
        return None
    return pending, data


def confirm(
    provider: str,
    version: str,
    got: Collected,
    rows: int,
    verdict: gate.Verdict,
    entry: dict[str, Any] | None,
    candidates: dict[str, bytes],
) -> tuple[str | None, dict[str, Any] | None, list[dict[str, Any]] | None]:
    """A fresh CSV the gate refused next to the published one: (why it is not published, or
    None; the unconfirmed change to keep in the manifest; the agreeing collections that
    confirm it, when they do)."""
    assert verdict.reason is not None
    this = collection(version, got, rows)
    known = pending_of(entry, candidates, provider)
    if verdict.broken is not None:
        # Never confirmed, and it neither extends nor breaks a chain of good collections.
        why = (
            f"{verdict.reason}; beyond the hard limits ({verdict.broken}): a broken "
            "collection, published only if an operator accepts it"
        )
        return why, known[0] if known else None, None
    chain: list[dict[str, Any]] = [this]
    first = verdict.reason
    if known is not None:
        pending, candidate = known
        agrees = gate.judge(provider, candidate, got.data, against="the last collection")
        if agrees.reason is None:
            chain = [*pending["collections"], this]
            first = str(pending.get("reason") or first)
    needed = registry.spec(provider).confirmations
    if len(chain) >= needed:
        return None, None, chain
    pending = {"reason": first, "collections": chain, "confirmations": needed}
    why = (
        f"{verdict.reason} (collection {len(chain)} of the {needed} in a row that must agree "
        "with each other to publish it)"
    )
    return why, pending, None


def candidate_csv(
    pending: dict[str, Any],
    fresh: bytes,
    entry: dict[str, Any] | None,
    candidates: dict[str, bytes],
    provider: str,
) -> bytes:
    """The CSV of the pending change's last collection: this one, or (when this one was broken
    and left the change as it was) the previous version's candidate."""
    if pending["collections"][-1]["sha256"] == archive.sha256(fresh):
        return fresh
    known = pending_of(entry, candidates, provider)
    assert known is not None and known[0] is pending
    return known[1]


def pack_candidates(csvs: dict[str, bytes], version: str) -> bytes:
    """`{version}/candidates.zip`: the refused CSVs the next build compares with."""
    manifest = {
        "kind": "candidates",
        "version": version,
        "providers": {p: {"sha256": archive.sha256(d)} for p, d in csvs.items()},
    }
    return archive.write_archive(csvs, manifest)
