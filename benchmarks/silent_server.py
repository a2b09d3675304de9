"""Wall time of `gpuhunt query` runs against a catalog server on 127.0.0.1 that accepts
connections and never answers (issue 27): the first run falls back to the bundled snapshot at
the first-answer deadline, the next ones remember the failure and ask nothing.

    python benchmarks/silent_server.py [runs]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.faults.server import FaultServer, Reply  # noqa: E402


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory() as cache, FaultServer() as srv:
        srv.serve("/version", default=Reply(hang=True))
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT / "src"),
            "GPUHUNT_CATALOG_URL": srv.url,
            "GPUHUNT_CACHE_DIR": cache,
        }
        for run in range(1, runs + 1):
            t = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-m", "gpuhunt", "query", "--gpu", "H100", "--limit", "3"],
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            took = time.monotonic() - t
            print(
                f"run {run}: {took:.2f} s, exit {done.returncode}, "
                f"requests so far {srv.hits.get('/version', 0)}"
            )
        srv.release()


if __name__ == "__main__":
    main()
