"""Replays of each offline provider's recorded API answers through its real collector, without
network: `replay_<provider>.collect()` returns the offers the provider's code makes of them.

Used by `scripts/make_snapshot.py` (the bundled snapshot) and by the tests (which import these
modules; this package never imports `tests`). The recordings themselves, and where each one came
from, are in `tests/providers/data/<provider>/`.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "tests" / "providers" / "data"
