#!/usr/bin/env python3
"""Print the nightly catalog build's job matrix as JSON, from the provider registry.

    python scripts/ci_matrix.py
    {"include":[{"provider":"aws","extra":"aws","cred_1":"AWS_ACCESS_KEY_ID",...},...]}

One job per offline provider. `extra` is the pip extra holding its SDK ("" if none);
`cred_1`..`cred_6` name the environment variables it reads its credentials from ("" when
unused). The workflow passes `secrets[cred_N]` under that name to that job only, so a job sees
its own provider's credentials and no other's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from gpuhunt._internal import registry  # noqa: E402

MAX_CREDENTIALS = 6  # the workflow's collect step maps this many; raise both together


def matrix() -> dict[str, Any]:
    include = []
    for spec in registry.PROVIDERS:
        if spec.online:
            continue
        if len(spec.env) > MAX_CREDENTIALS:
            raise SystemExit(
                f"{spec.name} reads {len(spec.env)} credentials; the catalogs workflow maps "
                f"{MAX_CREDENTIALS}: raise MAX_CREDENTIALS here and add CRED_* lines there"
            )
        creds = list(spec.env) + [""] * (MAX_CREDENTIALS - len(spec.env))
        job = {"provider": spec.name, "extra": spec.extra or ""}
        job.update({f"cred_{i + 1}": name for i, name in enumerate(creds)})
        include.append(job)
    return {"include": include}


if __name__ == "__main__":
    print(json.dumps(matrix(), separators=(",", ":")))
