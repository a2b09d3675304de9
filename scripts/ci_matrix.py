#!/usr/bin/env python3
"""Print the catalog build's job matrix as JSON, from the provider registry.

    python scripts/ci_matrix.py
    {"include":[{"provider":"aws","extra":"aws","cred_1":"AWS_ACCESS_KEY_ID",...},...]}
    python scripts/ci_matrix.py --due https://BUCKET.s3.REGION.amazonaws.com/v3

One job per offline provider; with `--due URL`, only for the providers due for collection by
their registry cadence, judged from the recording times in the manifest of the catalog
published under URL (`freshness.due`; all of them if it cannot be read). `extra` is the pip extra holding its SDK ("" if none);
`cred_1`..`cred_6` name the environment variables it reads its credentials from ("" when
unused), and `alias_N` the reference gpuhunt workflow's secret for the same credential when its
name differs ("" otherwise). The workflow passes `secrets[cred_N] || secrets[alias_N]` under the
name cred_N to that job only, so a job sees its own provider's credentials and no other's, and
a deployment moving from the reference keeps its secrets.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from gpuhunt._internal import freshness, registry  # noqa: E402
from gpuhunt._internal.publish import files  # noqa: E402

MAX_CREDENTIALS = 6  # the workflow's collect step maps this many; raise both together
# The reference workflow's secret where its name is not the registry's environment variable
# (dstackai/gpuhunt .github/workflows/catalogs.yml, read 2026-12-01): it keeps the Nebius key's
# content in NEBIUS_PRIVATE_KEY and writes it to the file NEBIUS_PRIVATE_KEY_FILE names.
REFERENCE_SECRETS = {"NEBIUS_PRIVATE_KEY_FILE": "NEBIUS_PRIVATE_KEY"}


def matrix(providers: Sequence[str] | None = None) -> dict[str, Any]:
    include = []
    for spec in registry.PROVIDERS:
        if spec.online or (providers is not None and spec.name not in providers):
            continue
        if len(spec.env) > MAX_CREDENTIALS:
            raise SystemExit(
                f"{spec.name} reads {len(spec.env)} credentials; the catalogs workflow maps "
                f"{MAX_CREDENTIALS}: raise MAX_CREDENTIALS here and add CRED_* lines there"
            )
        creds = list(spec.env) + [""] * (MAX_CREDENTIALS - len(spec.env))
        job = {"provider": spec.name, "extra": spec.extra or ""}
        job.update({f"cred_{i + 1}": name for i, name in enumerate(creds)})
        job.update({f"alias_{i + 1}": REFERENCE_SECRETS.get(n, "") for i, n in enumerate(creds)})
        include.append(job)
    return {"include": include}


def due_providers(url: str, now: dt.datetime | None = None) -> list[str]:
    previous, error = files.load_previous(url)
    if previous is None:
        print(f"previous catalog unreadable ({error}); collecting every provider", file=sys.stderr)
    now = now or dt.datetime.now(dt.timezone.utc)
    names = freshness.due(previous.manifest if previous else None, now)
    print(f"due: {' '.join(names) or 'none'}", file=sys.stderr)
    return names


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--due", metavar="URL", help="only the providers due for collection")
    args = parser.parse_args(argv)
    print(json.dumps(matrix(due_providers(args.due) if args.due else None), separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
