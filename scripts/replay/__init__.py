"""Recorded provider answers replayed through the real collectors (`replay_<provider>.collect()`),
for the tests and for `scripts/make_snapshot.py`. The recordings live in `tests/providers/data/`,
beside the tests that read them too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).resolve().parents[2] / "tests" / "providers" / "data"


def recordings(provider: str) -> tuple[Path, Callable[[str], Any]]:
    """The folder of a provider's recordings, and a function reading one of its JSON files."""
    folder = RECORDINGS / provider

    def load(name: str) -> Any:
        return json.loads((folder / name).read_text())

    return folder, load
