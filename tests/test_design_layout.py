"""docs/design.md's "Layout" block names every file under src/gpuhunt, and nothing that is not
there: the map a reader starts from cannot drift from the tree.

Rules of the block (written here, as the test reads them): one entry per line, its path first,
indented two spaces per level below the directory line above it (a line ending in `/`); lines
indented further are the description's continuation. A directory listed without entries below
it (`gpuhunt/providers/`, `gpuhunt/resources/`) is described as a whole, its files not listed.
A package's `__init__.py` need not be listed (the top one is). When files move, edit the block:
this test needs no change."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
DESIGN = ROOT / "docs" / "design.md"

# An entry's path, at most this many spaces in; descriptions sit further right.
_ENTRY = re.compile(r"^(?P<indent> {0,12})(?P<path>[\w.]+(?:/[\w.]+)*/?)(?:\s|$)")


def layout_block(text: str) -> list[str]:
    """The lines of the first fenced block under `## Layout`."""
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1].splitlines()[1:]


def layout_entries(lines: list[str]) -> tuple[set[str], set[str]]:
    """(files, directories described as a whole), as paths relative to src/."""
    files: set[str] = set()
    dirs: list[tuple[int, str]] = []  # the open directories: (indent, path)
    listed_dirs: list[str] = []
    has_children: set[str] = set()
    for line in lines:
        m = _ENTRY.match(line)
        if not m:
            continue
        indent, path = len(m["indent"]), m["path"]
        while dirs and dirs[-1][0] >= indent:
            dirs.pop()
        if dirs:
            has_children.add(dirs[-1][1])
            path = dirs[-1][1] + path
        if path.endswith("/"):
            dirs.append((indent, path))
            listed_dirs.append(path)
        else:
            files.add(path)
    return files, {d for d in listed_dirs if d not in has_children}


def tree_files() -> set[str]:
    return {
        str(p.relative_to(SRC))
        for p in (SRC / "gpuhunt").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def test_the_block_is_read_as_the_rules_say():
    lines = [
        "gpuhunt/__init__.py        re-exports",
        "gpuhunt/resources/         data",
        "gpuhunt/_internal/",
        "  a.py                     first line",
        "                           a.py continued: not/an/entry.py",
        "  sub/                     a package",
        "    b.py                   in sub",
        "  c.py                     back one level",
    ]
    files, whole = layout_entries(lines)
    assert files == {
        "gpuhunt/__init__.py",
        "gpuhunt/_internal/a.py",
        "gpuhunt/_internal/sub/b.py",
        "gpuhunt/_internal/c.py",
    }
    assert whole == {"gpuhunt/resources/"}


def test_design_layout_matches_the_tree():
    files, whole = layout_entries(layout_block(DESIGN.read_text(encoding="utf-8")))
    tree = tree_files()
    listed_missing = sorted(f for f in files if f not in tree)
    assert not listed_missing, (
        f"docs/design.md's Layout names files that do not exist: {listed_missing}"
    )
    assert not sorted(d for d in whole if not (SRC / d).is_dir())
    unlisted = sorted(
        f
        for f in tree - files
        if not any(f.startswith(d) for d in whole)
        and not (f.endswith("/__init__.py") and f != "gpuhunt/__init__.py")
    )
    assert not unlisted, f"files missing from docs/design.md's Layout: {unlisted}"
