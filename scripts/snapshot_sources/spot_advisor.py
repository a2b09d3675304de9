"""AWS Spot Instance Advisor bands for the bundled snapshot: the stored copy of the advisor's
`spot-advisor-data.json` (as committed in alexei-led/spotinfo), trimmed to what the snapshot
needs, and how it was trimmed.

The whole document (922,078 bytes: 33 regions, 929 instance types, Linux and Windows) is too
large to ship for the ~150 types the snapshot's AWS part has, so `trim` keeps:

- `ranges` and `global_rate` whole (the parser reads `ranges`; `global_rate` is kept so the
  copy is still a valid document of the same shape),
- `instance_types` and the `Linux` entries of `spot_advisor` for the instance types of the
  snapshot's AWS offers (on-demand and spot alike: a type the snapshot gains a spot price for
  later already has its band), in every region the document has,
- nothing of `Windows` (the catalog's offers are Linux: `interruption.ADVISOR_OS`).

The document order of regions and types is kept, entries are copied verbatim. Run it again
(`python scripts/snapshot_sources/spot_advisor.py WHOLE.json`, WHOLE.json from `git show
COMMIT:PATH` in a copy of the repository) when the snapshot's AWS types change, then
`scripts/make_snapshot.py --sides-only`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parents[2]

if not __package__:  # run as a script: the repository root makes `scripts` importable
    sys.path.insert(0, str(ROOT))
from scripts.snapshot_sources import excerpt  # noqa: E402

REPOSITORY = "alexei-led/spotinfo"
PATH = "internal/spot/data/spot-advisor-data.json"
# The newest commit of the stored repository that changed the file (its HEAD, 05e93313 of
# 2025-07-28, has the same blob 84440056); the document has no date of its own.
COMMIT = "5eedf20a99614443af215f4aaf09bd10805cac72"
DATE = "2025-06-28"
WHOLE_SHA256 = "06d25100fe665ce321f205bd210aceb00184034be46b9b204b9efa7d1bda481b"
STORED = DATA / "spot_advisor_5eedf20a_snapshot_types.json"
OS = "Linux"


def trim(doc: Mapping[str, Any], instance_types: Iterable[str]) -> dict[str, Any]:
    """The document cut to the Linux entries of `instance_types` (every region), with its
    `ranges` and `global_rate`; a document without `ranges` or `spot_advisor` is a ValueError."""
    keep = set(instance_types)
    try:
        ranges, regions = doc["ranges"], doc["spot_advisor"]
    except KeyError as e:
        raise ValueError(f"spot advisor document has no {e.args[0]!r}") from None
    types = doc.get("instance_types") or {}
    out: dict[str, Any] = {
        "instance_types": {t: v for t, v in types.items() if t in keep},
        "ranges": ranges,
        "global_rate": doc.get("global_rate"),
        "spot_advisor": {},
    }
    for region, by_os in regions.items():
        linux = {t: v for t, v in (by_os.get(OS) or {}).items() if t in keep}
        if linux:
            out["spot_advisor"][region] = {OS: linux}
    return out


def snapshot_aws_types(snapshot: Path) -> set[str]:
    """The instance types of the AWS offers of a snapshot archive."""
    return {row["instance_name"] for row in excerpt.snapshot_rows(snapshot, "aws")}


def dumps(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=1) + "\n"


def main() -> int:
    got = excerpt.read_whole(__doc__, PATH, COMMIT, WHOLE_SHA256, STORED)
    if got is None:
        return 1
    whole, snapshot, output = got
    output.write_text(dumps(trim(json.loads(whole), snapshot_aws_types(snapshot))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
