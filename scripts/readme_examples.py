"""Re-run the examples of the README and of the pages in docs/ that read the bundled snapshot
and write their real output back (`python scripts/readme_examples.py [--check]`).

A block is a fenced code block whose lines starting with `$ gpuhunt query` (optionally after
`COLUMNS=80`) are commands; each command's output, up to the next command or the fence, is
replaced by what the command prints now, run offline (an unreachable catalog URL and an empty
disk cache, so the snapshot bundled in the package answers, as on a machine without network).
`--check` exits 1, naming the files, when one is out of date instead of writing it.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
COMMAND = re.compile(r"^\$ (?:(COLUMNS=\d+) )?(gpuhunt query .*)$")


def run(command: str, columns: str | None) -> list[str]:
    # Each in a new, empty disk cache: a first run on a machine without network, not one that
    # remembers the previous command's failed check.
    with tempfile.TemporaryDirectory() as cache:
        return _run(command, columns, cache)


def _run(command: str, columns: str | None, cache: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUHUNT_")}
    # The public bucket's URL as the default, unreachable here: the footer names it as users
    # without network see it.
    env.update(GPUHUNT_CACHE_DIR=cache, GPUHUNT_LOAD_TIMEOUT="2")
    env.pop("COLUMNS", None)
    if columns:
        env["COLUMNS"] = columns.split("=")[1]
    args = shlex.split(command)[1:]
    out = subprocess.run(
        [sys.executable, "-m", "gpuhunt", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = (out.stdout + out.stderr).rstrip("\n").splitlines()
    return [line.rstrip() for line in lines if not line.startswith("WARNING ")]


def update(text: str) -> str:
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = COMMAND.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        out.append(lines[i])
        i += 1
        while i < len(lines) and lines[i] != "```" and not COMMAND.match(lines[i]):
            i += 1
        out.extend(run(m.group(2), m.group(1)))
        if i < len(lines) and COMMAND.match(lines[i]):
            out.append("")
    return "\n".join(out) + "\n"


def files() -> list[Path]:
    """Every Markdown file an example may be in: the README and the docs pages."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def main() -> int:
    stale = []
    for path in files():
        text = path.read_text()
        if not any(COMMAND.match(line) for line in text.splitlines()):
            continue
        new = update(text)
        if new == text:
            continue
        stale.append(path.relative_to(ROOT).as_posix())
        if "--check" not in sys.argv:
            path.write_text(new)
    if "--check" in sys.argv and stale:
        print("out of date:", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
