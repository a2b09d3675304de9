"""The accept file: an operator's committed, time-limited override of the plausibility gate for
the scheduled workflow, which cannot pass `--accept` (docs/pipeline.md).

    {"accept": [{"provider": "gcp", "until": "2026-12-08", "why": "GCP cut spot prices"}]}

`until` is a date (the override lasts through that day, UTC) or an ISO datetime; an expired
entry is ignored, so a forgotten override cannot let a later broken collection through. A
malformed file is an error naming the entry: it is committed, so CI shows the mistake.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuhunt._internal import registry
from gpuhunt._internal.errors import PipelineError, UnknownProviderError

logger = logging.getLogger(__name__)

DEFAULT_PATH = ".github/catalog-accept.json"


@dataclass(frozen=True)
class Acceptance:
    provider: str
    until: dt.datetime
    why: str

    def note(self, path: str) -> str:
        return f"{path} (until {self.until.isoformat()}): {self.why}"


def _until(value: Any, where: str) -> dt.datetime:
    text = str(value or "").strip()
    try:
        if len(text) == 10:
            day = dt.date.fromisoformat(text)
            return dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), dt.timezone.utc)
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise PipelineError(
            f"{where}: until {text[:40]!r} is not a date (YYYY-MM-DD) or an ISO datetime"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def parse(data: bytes, where: str) -> list[Acceptance]:
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise PipelineError(f"{where} is not valid JSON: {e}") from None
    entries = doc.get("accept") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise PipelineError(f'{where}: expected {{"accept": [...]}}')
    out = []
    for n, entry in enumerate(entries, start=1):
        at = f"{where}: entry {n}"
        if not isinstance(entry, dict):
            raise PipelineError(f"{at} is not an object")
        unknown = sorted(set(entry) - {"provider", "until", "why"})
        if unknown:
            raise PipelineError(f"{at}: unknown key {unknown[0]!r} (provider, until, why)")
        name = str(entry.get("provider") or "")
        try:
            spec = registry.spec(name)
        except UnknownProviderError as e:
            raise PipelineError(f"{at}: {e}") from None
        if spec.online:
            raise PipelineError(f"{at}: {spec.name} is not an offline provider")
        why = str(entry.get("why") or "").strip()
        if not why:
            raise PipelineError(f"{at}: say why in 'why' (it goes into the manifest)")
        out.append(Acceptance(spec.name, _until(entry.get("until"), at), why))
    return out


def active(path: str | Path, now: dt.datetime) -> dict[str, str]:
    """provider -> the manifest's `accepted_by` note, for the entries of `path` in force at
    `now`. A missing file accepts nothing."""
    file = Path(path)
    if not file.exists():
        return {}
    out: dict[str, str] = {}
    for a in parse(file.read_bytes(), str(path)):
        if now >= a.until:
            logger.warning("%s: the acceptance of %s expired at %s", path, a.provider, a.until)
            continue
        out[a.provider] = a.note(str(path))
    return out
