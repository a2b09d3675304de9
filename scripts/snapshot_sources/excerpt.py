"""What this folder's excerpt scripts share (`spot_advisor`, `vantage_aws_terms`,
`cyclenerd_gcp_terms`): each cuts the excerpt stored in `data/` out of one whole file of a
recorded commit, refusing any other file, for the offers of the bundled snapshot."""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "src" / "gpuhunt" / "resources" / "catalog.zip"


def read_whole(
    doc: str | None, path: str, commit: str, sha256: str, stored: Path
) -> tuple[bytes, Path, Path] | None:
    """The command line of an excerpt script: (the whole file's bytes, the snapshot archive,
    the output path); None, said on stderr, when the file is not the recorded commit's."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("whole", help=f"the whole {path} at {commit}")
    parser.add_argument("--snapshot", default=str(SNAPSHOT))
    parser.add_argument("--output", default=str(stored))
    args = parser.parse_args()
    whole = Path(args.whole).read_bytes()
    if hashlib.sha256(whole).hexdigest() != sha256:
        print(f"{args.whole}: not the file of {commit} (sha256 differs)", file=sys.stderr)
        return None
    return whole, Path(args.snapshot), Path(args.output)


def snapshot_rows(snapshot: Path, provider: str) -> list[dict[str, str]]:
    """The CSV rows of `provider` in a snapshot archive, as the library reads the archive."""
    sys.path.insert(0, str(ROOT / "src"))
    from gpuhunt._internal.formats.archive import read_archive

    archive = read_archive(snapshot.read_bytes())
    return list(csv.DictReader(io.StringIO(archive.csvs[provider].decode())))


def write_csv(output: Path, columns: Iterable[str], rows: Iterable[Iterable[Any]]) -> None:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([list(columns), *rows])
    output.write_text(out.getvalue(), encoding="utf-8")
