#!/usr/bin/env python3
"""Regenerate the catalog snapshot bundled in the package (`src/gpuhunt/resources/catalog.zip`).

    python scripts/make_snapshot.py                 # from recorded responses (the default)
    python scripts/make_snapshot.py --from URL_OR_DIR   # from a published catalog version

The default runs every offline provider's real collector over its recorded API responses
(`scripts/replay/replay_<provider>.py`), so the snapshot is exactly what the project's own code
makes of real data - never edited by hand. Each provider's `collected_at` in the manifest is the
date its recording was made, which is what the "snapshot is N days old" warning reports.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from gpuhunt._internal import registry  # noqa: E402
from gpuhunt._internal.formats.archive import FORMAT_VERSION, sha256, write_archive  # noqa: E402
from gpuhunt._internal.formats.csv import csv_bytes  # noqa: E402
from gpuhunt._internal.load.sources import fetch  # noqa: E402
from gpuhunt._internal.publish.build import column_file  # noqa: E402
from gpuhunt._version import __version__  # noqa: E402

OUT = ROOT / "src" / "gpuhunt" / "resources" / "catalog.zip"


def from_recordings() -> tuple[dict[str, bytes], dict[str, dict]]:
    csvs: dict[str, bytes] = {}
    entries: dict[str, dict] = {}
    for name in registry.OFFLINE_PROVIDERS:
        try:
            replay = importlib.import_module(f"scripts.replay.replay_{name}")
        except ImportError as e:
            print(f"skip {name}: no replay module ({e})", file=sys.stderr)
            continue
        items = sorted(replay.collect(), key=lambda i: i.price)
        data = csv_bytes(items)
        csvs[name] = data
        entries[name] = {
            "rows": len(items),
            "sha256": sha256(data),
            "collected_at": replay.RECORDED_AT,
            "status": "recorded",
        }
        print(f"{name}: {len(items)} offers (recorded {replay.RECORDED_AT})")
    return csvs, entries


def from_published(url: str) -> tuple[dict[str, bytes], dict[str, dict], str]:
    raw = fetch(
        url, registry.OFFLINE_PROVIDERS, version=None, cache=None, timeout=(5, 60), retries=2
    )
    entries = {}
    for name, data in raw.csvs.items():
        given = ((raw.manifest or {}).get("providers") or {}).get(name) or {}
        entries[name] = {
            "rows": data.count(b"\n") - 1,
            "sha256": sha256(data),
            "collected_at": given.get("collected_at") or raw.versions.get(name, raw.version)[:8],
            "status": "published",
        }
    return raw.csvs, entries, raw.version


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--from", dest="source", help="a published catalog (URL or folder) instead of recordings"
    )
    parser.add_argument("--output", default=str(OUT))
    args = parser.parse_args()
    if args.source:
        csvs, entries, version = from_published(args.source)
        version = f"snapshot-{version}"
    else:
        csvs, entries = from_recordings()
        newest = max((e["collected_at"] for e in entries.values()), default="unknown")
        version = f"snapshot-{newest.replace('-', '')}"
    if not csvs:
        print("no providers collected; snapshot unchanged", file=sys.stderr)
        return 1
    packed = {p: column_file(p, data) for p, data in csvs.items()}
    for p, data in packed.items():
        entries[p]["columns_sha256"] = sha256(data)
    manifest = {
        "format_version": FORMAT_VERSION,
        "version": version,
        "gpuhunt_version": __version__,
        "built_at": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        "providers": entries,
    }
    Path(args.output).write_bytes(write_archive(csvs, manifest, packed))
    print(
        f"wrote {args.output}: {sum(e['rows'] for e in entries.values())} offers, {len(csvs)} providers"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
