"""The integrity gate: a provider's integrity tests run on a freshly collected CSV, in a
subprocess, before the CSV may be published."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

INTEGRITY_TIMEOUT = 15 * 60


def run_integrity_tests(
    provider: str, data: bytes, tests_dir: str | Path, *, timeout: float = INTEGRITY_TIMEOUT
) -> str | None:
    """Run `integrity_tests/test_<provider>.py` on exactly these bytes, in a subprocess:
    `CATALOG_DIR=<tmp> python -m pytest integrity_tests/test_<provider>.py`.
    Returns why it failed, or None."""
    tests = Path(tests_dir).resolve()
    test_file = tests / f"test_{provider}.py"
    if not test_file.is_file():
        return f"no integrity tests ({test_file.name} is not in {tests})"
    with tempfile.TemporaryDirectory(prefix=f"gpuhunt-{provider}-") as tmp:
        Path(tmp, f"{provider}.csv").write_bytes(data)
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"{tests.name}/{test_file.name}",
        ]
        try:
            proc = subprocess.run(
                cmd,
                cwd=tests.parent,
                env={**os.environ, "CATALOG_DIR": tmp},
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return f"integrity tests timed out after {timeout:g}s"
    if proc.returncode == 0:
        return None
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    # The log keeps pytest's own report; the outcome keeps its summary line.
    sys.stderr.write(proc.stdout[-8000:] + proc.stderr[-2000:])
    summary = lines[-1].strip("= ") if lines else f"exit code {proc.returncode}"
    return f"integrity tests failed ({summary})"
