#!/usr/bin/env python3
"""Run gpuhunt 0.1.34's own integrity tests on catalog CSVs, as its nightly job runs them.

    python integrity_tests/run_upstream.py CATALOG_DIR [PROVIDER ...]
    python integrity_tests/run_upstream.py --bundled [PROVIDER ...]   # the bundled snapshot

The tests are gpuhunt 0.1.34's own `src/integrity_tests/`, run unmodified and never copied into
this repository: each run downloads the 0.1.34 sdist from PyPI (`pip download`), checks it
against the sha256 below, and extracts that folder into a temporary folder. They import two names our package does not have at that path (`gpuhunt._internal.storage`'s
`CATALOG_V2_FIELDS` and `item_from_row`, 0.1.34's CSV columns and row reader); a `conftest.py`
written beside them provides both from our own CSV reader (`formats.csv`), so the files read
our CSVs the way our users' code does. Each run happens in a temporary folder, in a child
Python with a minimal pytest configuration (not this project's).

Exit status 0 when every test of every named provider passes; the per-test results are printed
(`--json` prints them as JSON: `{provider: {test id: "passed" | "failed: ..."}}`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VERSION = "0.1.34"
# The sdist `gpuhunt-0.1.34.tar.gz` on PyPI, as downloaded with pip on 2026-12-02.
SDIST_SHA256 = "054e24eaa52536e439ec2c528a796ec24ba13d210afda0b7b1163a2c47d1f42d"
# The files of its `src/integrity_tests/` that the six providers' tests need.
UPSTREAM_FILES = ("__init__.py", "base.py", "conftest.py") + tuple(
    f"test_{p}.py" for p in ("aws", "azure", "gcp", "lambdalabs", "oci", "runpod")
)
# The providers whose catalog 0.1.34's nightly job publishes and tests offline.
PROVIDERS = ("aws", "azure", "gcp", "lambdalabs", "oci", "runpod")

SHIM = '''\
"""Written by integrity_tests/run_upstream.py: gpuhunt 0.1.34's `gpuhunt._internal.storage`
names, from this gpuhunt's own CSV reader, so the upstream files run unmodified."""
import csv
import io
import sys
import types

from gpuhunt._internal.formats.csv import ReadStats, load
from gpuhunt._internal.schema import CONTRACT_FIELDS, FIELDS


def item_from_row(row, *, provider):
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=FIELDS, extrasaction="ignore")
    writer.writeheader()
    writer.writerow({k: (v if v is not None else "") for k, v in row.items()})
    stats = ReadStats()
    items = list(load(io.StringIO(text.getvalue()), provider=provider, stats=stats))
    if stats.skipped or len(items) != 1:
        raise ValueError(f"malformed row: {row!r} ({stats.errors})")
    return items[0]


storage = types.ModuleType("gpuhunt._internal.storage")
# 0.1.34's own columns (ours add the library's own after them, which 0.1.34 ignores).
storage.CATALOG_V2_FIELDS = list(CONTRACT_FIELDS)
storage.item_from_row = item_from_row
sys.modules["gpuhunt._internal.storage"] = storage

# 0.1.34's RunPod test asks `gpuhunt.providers.runpod.get_gpu_map()` for RunPod's GPU types
# (0.1.34 asks RunPod's public GraphQL API). Ours has no such function: the same question,
# answered from a recorded `gpuTypes` answer when UPSTREAM_RUNPOD_GPU_TYPES names one (tests,
# offline), else asked live as 0.1.34 does (the nightly job).
import json
import os

import gpuhunt.providers.runpod as _runpod

if not hasattr(_runpod, "get_gpu_map"):
    def get_gpu_map():
        from gpuhunt._internal.gpu_names import resolve_gpu

        path = os.environ.get("UPSTREAM_RUNPOD_GPU_TYPES")
        if path:
            with open(path) as f:
                answer = json.load(f)
        else:
            answer = _runpod.post_graphql(
                "query GpuTypes { gpuTypes { id manufacturer displayName memoryInGb } }"
            )
        answer = answer.get("data", answer)
        out = {}
        for t in answer["gpuTypes"]:
            gpu = resolve_gpu(t.get("displayName") or "", t.get("memoryInGb"))
            if gpu is not None:
                out[t["id"]] = (gpu.vendor, gpu.name)
        return out

    _runpod.get_gpu_map = get_gpu_map
'''


def bundled_csvs(folder: Path) -> Path:
    """The bundled snapshot's CSVs written to `folder`."""
    from importlib import resources

    from gpuhunt._internal.formats.archive import read_archive

    data = resources.files("gpuhunt.resources").joinpath("catalog.zip").read_bytes()
    folder.mkdir(parents=True, exist_ok=True)
    for name, csv_data in read_archive(data).csvs.items():
        (folder / f"{name}.csv").write_bytes(csv_data)
    return folder


def fetch_upstream(dest: Path) -> Path:
    """gpuhunt 0.1.34's `src/integrity_tests/` extracted into `dest/integrity_tests` from its
    sdist, downloaded from PyPI and checked against `SDIST_SHA256`."""
    download = dest / "sdist"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        + [f"gpuhunt=={VERSION}", "-d", str(download)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    (sdist,) = download.glob(f"gpuhunt-{VERSION}.tar.gz")
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        raise RuntimeError(f"{sdist.name}: sha256 {digest}, expected {SDIST_SHA256}")
    out = dest / "integrity_tests"
    out.mkdir(parents=True)
    with tarfile.open(sdist) as tar:
        for name in UPSTREAM_FILES:
            member = tar.getmember(f"gpuhunt-{VERSION}/src/integrity_tests/{name}")
            data = tar.extractfile(member)
            assert data is not None
            (out / name).write_bytes(data.read())
    return out


def run(
    catalog_dir: Path,
    providers: tuple[str, ...] = PROVIDERS,
    runpod_gpu_types: Path | None = None,
) -> dict[str, dict[str, str]]:
    """{provider: {test id: "passed" | "failed: <first line>"}} of 0.1.34's tests on the CSVs.
    `runpod_gpu_types`: a recorded RunPod `gpuTypes` answer for the RunPod test's GPU list
    (default: the UPSTREAM_RUNPOD_GPU_TYPES variable, else RunPod's API is asked)."""
    results: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="gpuhunt-upstream-integrity-") as tmp:
        work = Path(tmp)
        fetch_upstream(work)
        (work / "conftest.py").write_text(SHIM)
        (work / "pytest.ini").write_text("[pytest]\n")
        env = dict(os.environ)
        env["CATALOG_DIR"] = str(catalog_dir.resolve())
        env["PYTHONPATH"] = os.pathsep.join(
            [str(work), str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])]
        )
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        gpu_types = runpod_gpu_types or env.get("UPSTREAM_RUNPOD_GPU_TYPES")
        if gpu_types:  # the child runs elsewhere: an absolute path
            env["UPSTREAM_RUNPOD_GPU_TYPES"] = str(Path(gpu_types).resolve())
        for provider in providers:
            report = work / f"{provider}.xml"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "-c",
                    str(work / "pytest.ini"),
                    "--rootdir",
                    str(work),
                    f"--junitxml={report}",
                    str(work / "integrity_tests" / f"test_{provider}.py"),
                ],
                cwd=work,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=False,
            )
            results[provider] = _outcomes(report, provider)
    return results


def _outcomes(report: Path, provider: str) -> dict[str, str]:
    if not report.exists():
        return {"<collection>": "failed: pytest wrote no report"}
    out: dict[str, str] = {}
    for case in ET.parse(report).iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is not None:
            message = (bad.get("message") or bad.text or "").strip().splitlines()
            out[name] = f"failed: {message[0][:200] if message else ''}"
        elif case.find("skipped") is not None:
            out[name] = "skipped"
        else:
            out[name] = "passed"
    if not out:
        out["<collection>"] = "failed: no test ran"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("catalog_dir", nargs="?", help="folder of <provider>.csv files")
    parser.add_argument("providers", nargs="*", help=f"default: {' '.join(PROVIDERS)}")
    parser.add_argument("--bundled", action="store_true", help="test the bundled snapshot")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    providers = tuple(args.providers) or PROVIDERS
    if args.bundled:
        if args.catalog_dir:
            providers = (args.catalog_dir, *args.providers)
        with tempfile.TemporaryDirectory() as tmp:
            results = run(bundled_csvs(Path(tmp)), providers)
    elif args.catalog_dir:
        results = run(Path(args.catalog_dir), providers)
    else:
        parser.error("give a CATALOG_DIR or --bundled")
    failed = 0
    if args.json:
        print(json.dumps(results, indent=1, sort_keys=True))
    for provider, tests in results.items():
        bad = {t: r for t, r in tests.items() if r.startswith("failed")}
        failed += len(bad)
        if not args.json:
            print(f"{provider}: {len(tests) - len(bad)} passed, {len(bad)} failed")
            for test, result in sorted(bad.items()):
                print(f"  {test}: {result}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
