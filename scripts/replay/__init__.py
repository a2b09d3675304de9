"""Replays of each offline provider's recorded API answers through its real collector, without
network: `replay_<provider>.collect()` returns the offers the provider's code makes of them.

Used by `scripts/make_snapshot.py` (the bundled snapshot) and by the tests (which import these
modules; this package never imports `tests`). The recordings themselves, and where each one came
from, are in `tests/providers/data/<provider>/`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = ROOT / "tests" / "providers" / "data"


def recordings(provider: str) -> tuple[Path, Callable[[str], Any]]:
    """The folder of a provider's recordings, and a function reading one of its JSON files."""
    folder = RECORDINGS / provider

    def load(name: str) -> Any:
        return json.loads((folder / name).read_text())

    return folder, load
