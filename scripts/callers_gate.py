#!/usr/bin/env python3
"""The callers gate: dstack's own tests that touch gpuhunt, run with the gpuhunt each dstack
release pins and again with this package in its place (docs/callers.md).

    python scripts/callers_gate.py                  # every release in RELEASES
    python scripts/callers_gate.py --release 0.22.5 # one of them
    python scripts/callers_gate.py --keep           # reuse build/callers/ from an earlier run

For each release: a virtualenv of its own under build/callers/ with `dstack[EXTRAS]==X` and the
test dependencies its sdist's pyproject names, the tests taken from that sdist, the selected
tests run once with the pinned gpuhunt (the baseline) and once with this checkout installed over
it. The gate passes iff every test that passes in the baseline passes with ours; tests failing in
the baseline are listed and not held against us. Exit status 1 names each regression; 2 means
the gate could not run (an install or a download failed).

Nothing is kept outside the clone except pip's own cache: the venvs, the sdists, the tests'
HOME and XDG cache all live under build/callers/ (in .gitignore).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "build" / "callers"

# One line per dstack release the gate runs: (dstack version, the gpuhunt it pins). The pin is
# checked against the sdist's pyproject, so a wrong line fails loudly instead of testing nothing.
RELEASES: tuple[tuple[str, str], ...] = (
    ("0.21.2", "0.1.30"),
    ("0.22.5", "0.1.34"),
)

# The backend tests import each cloud's SDK (boto3, google-cloud-*, azure-*, oci, nebius,
# kubernetes); `all` brings every one of them, `server` alone leaves those files uncollectable.
EXTRAS = "all"

# Bounds of the releases' own era: dstack 0.21 and 0.22 call `sentry_sdk.start_transaction`,
# which sentry-sdk 3.0 (published after them) removed; without this bound every server test of
# theirs fails in the baseline too and the gate would compare nothing there.
ERA_BOUNDS = ("sentry-sdk<3",)

# Always run, whether or not the file names gpuhunt: these exercise offers end to end.
REQUIRED = (
    "src/tests/_internal/core/backends",
    "src/tests/_internal/core/models/test_resources.py",
    "src/tests/_internal/server/services/test_offers.py",
    "src/tests/_internal/server/services/runs/test_plan.py",
    "src/tests/_internal/utils/test_gpu.py",
)

# Per pytest run; the whole gate is bounded again by .ci/run.
PYTEST_TIMEOUT = 900
MESSAGE_CHARS = 600  # of a failure's message in the report


@dataclass(frozen=True)
class Outcome:
    status: str  # passed, failed, error, skipped
    message: str = ""


@dataclass
class Comparison:
    baseline_passed: int
    ours_passed: int
    total: int
    regressions: dict[str, Outcome]  # passed in the baseline, not with ours
    baseline_failures: dict[str, Outcome]  # failed or errored with the pinned gpuhunt too
    fixed: list[str]  # failed in the baseline, pass with ours


def pinned_gpuhunt(pyproject: Mapping[str, object]) -> str:
    """The version in the `gpuhunt==X` requirement of a dstack pyproject's dependencies."""
    project = pyproject.get("project")
    deps = project.get("dependencies", []) if isinstance(project, dict) else []
    for dep in deps:
        m = re.fullmatch(r"\s*gpuhunt\s*==\s*([^\s;,]+)\s*(;.*)?", str(dep))
        if m:
            return m.group(1)
    raise ValueError("no `gpuhunt==X` requirement in the pyproject's [project] dependencies")


def test_requirements(pyproject: Mapping[str, object], group: str = "test") -> list[str]:
    """The requirements of a PEP 735 dependency group, `{include-group = ...}` expanded."""
    groups = pyproject.get("dependency-groups")
    if not isinstance(groups, dict) or group not in groups:
        raise ValueError(f"no [dependency-groups] {group!r} in the pyproject")
    out: list[str] = []
    for item in groups[group]:
        if isinstance(item, dict) and "include-group" in item:
            out.extend(test_requirements(pyproject, item["include-group"]))
        else:
            out.append(str(item))
    return out


def select_tests(release_root: Path) -> list[str]:
    """REQUIRED plus every test file under src/tests that names gpuhunt, relative paths, sorted.

    A conftest.py naming gpuhunt is not a test: its fixtures run through the test files under it,
    and taking its whole directory would take most of the server's suite."""
    tests = release_root / "src" / "tests"
    chosen = {p for p in REQUIRED if (release_root / p).exists()}
    for path in tests.rglob("test_*.py"):
        if "gpuhunt" in path.read_text(encoding="utf-8", errors="replace"):
            rel = path.relative_to(release_root).as_posix()
            if not any(rel == r or rel.startswith(r + "/") for r in chosen):
                chosen.add(rel)
    return sorted(chosen)


def read_junit(path: Path) -> dict[str, Outcome]:
    """Test id (file::Class::name) -> outcome, from pytest's --junitxml (junit_family=xunit1)."""
    out: dict[str, Outcome] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        file = case.get("file") or ""
        classname = case.get("classname") or ""
        module = file[: -len(".py")].replace("/", ".") if file.endswith(".py") else ""
        rest = (
            classname[len(module) :].lstrip(".") if module and classname.startswith(module) else ""
        )
        parts = [
            file or classname,
            *([rest.replace(".", "::")] if rest else []),
            case.get("name", ""),
        ]
        test_id = "::".join(parts)
        status, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            el = case.find(tag)
            if el is not None:
                status = {"failure": "failed"}.get(tag, tag)
                # pytest's `E` lines carry the assertion's diff, which the one-line message
                # attribute cuts before it gets to the differing keys.
                e_lines = [ln[1:].strip() for ln in (el.text or "").splitlines() if ln[:2] == "E "]
                message = " ".join(filter(None, e_lines)) or el.get("message") or (el.text or "")
                break
        # A test failing in its call and again in teardown shows twice: the worst outcome wins.
        if test_id not in out or out[test_id].status in ("passed", "skipped"):
            out[test_id] = Outcome(status, " ".join(message.split())[:MESSAGE_CHARS])
    return out


def compare(baseline: Mapping[str, Outcome], ours: Mapping[str, Outcome]) -> Comparison:
    missing = Outcome("missing", "not collected with this package installed")
    regressions = {
        t: ours.get(t, missing)
        for t, o in sorted(baseline.items())
        if o.status == "passed" and ours.get(t, missing).status != "passed"
    }
    failing = {t: o for t, o in sorted(baseline.items()) if o.status in ("failed", "error")}
    fixed = [t for t in failing if ours.get(t, missing).status == "passed"]
    return Comparison(
        baseline_passed=sum(o.status == "passed" for o in baseline.values()),
        ours_passed=sum(o.status == "passed" for o in ours.values()),
        total=len(baseline),
        regressions=regressions,
        baseline_failures=failing,
        fixed=fixed,
    )


def report(version: str, pinned: str, c: Comparison) -> list[str]:
    lines = [
        f"dstack {version}: {c.total} tests; passed {c.baseline_passed} with gpuhunt {pinned}, "
        f"{c.ours_passed} with this package; {len(c.regressions)} regression(s), "
        f"{len(c.baseline_failures)} failing with gpuhunt {pinned} too, {len(c.fixed)} fixed"
    ]
    for t, o in c.regressions.items():
        lines.append(f"  REGRESSION {t}\n    {o.status}: {o.message}")
    for t, o in c.baseline_failures.items():
        lines.append(
            f"  fails with gpuhunt {pinned} too (not held against us): {t}\n    {o.message}"
        )
    return lines


def _run(cmd: Sequence[str | Path], **kwargs: object) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kwargs)  # type: ignore[call-overload]


def _extract_tests(sdist: Path, dest: Path) -> Path:
    """The sdist's src/tests and pyproject.toml (its pytest settings), nothing of src/dstack: the
    tests must import the installed dstack."""
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        wanted = [
            m
            for m in tar.getmembers()
            if m.name == f"{top}/pyproject.toml" or m.name.startswith(f"{top}/src/tests/")
        ]
        tar.extractall(dest, members=wanted, filter="data")
    return dest / top


def _pytest(
    python: Path, release_root: Path, tests: Iterable[str], junit: Path, home: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    home.mkdir(parents=True, exist_ok=True)
    # dstack writes ~/.dstack and gpuhunt its catalog cache: both stay inside the clone.
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PYTHONDONTWRITEBYTECODE="1")
    cmd = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1"]
    cmd += [f"--junitxml={junit}", *tests]
    print("+", " ".join(cmd), flush=True)
    started = time.monotonic()
    # Failing tests are the point: only a pytest that could not run at all (usage or internal
    # error, no junit written) stops the gate.
    proc = subprocess.run(cmd, cwd=release_root, env=env, timeout=PYTEST_TIMEOUT, check=False)
    print(f"  pytest exit {proc.returncode} in {time.monotonic() - started:.0f} s", flush=True)
    if proc.returncode not in (0, 1) or not junit.exists():
        raise RuntimeError(f"pytest could not run the tests (exit {proc.returncode})")


def _freeze(python: Path) -> set[str]:
    out = subprocess.run(
        [str(python), "-m", "pip", "freeze", "--exclude-editable"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(out.splitlines())


def run_release(version: str, pinned: str, keep: bool) -> Comparison:
    work = WORK / f"dstack-{version}"
    venv, python = work / "venv", work / "venv" / "bin" / "python"
    started = time.monotonic()
    if not (keep and python.exists()):
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        _run([sys.executable, "-m", "venv", venv])
        _run([python, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
              "-d", work / "sdist", f"dstack=={version}"])  # fmt: skip
    (sdist,) = (work / "sdist").glob("dstack-*.tar.gz")
    shutil.rmtree(work / "src", ignore_errors=True)
    release_root = _extract_tests(sdist, work / "src")
    pyproject = tomllib.loads((release_root / "pyproject.toml").read_text(encoding="utf-8"))
    if pinned_gpuhunt(pyproject) != pinned:
        raise RuntimeError(
            f"dstack {version} pins gpuhunt {pinned_gpuhunt(pyproject)}, RELEASES says {pinned}"
        )
    if not (keep and (work / "installed").exists()):
        _run([python, "-m", "pip", "install", "-q", f"dstack[{EXTRAS}]=={version}",
              *test_requirements(pyproject), *ERA_BOUNDS])  # fmt: skip
        (work / "installed").touch()
    _run([python, "-m", "pip", "install", "-q", "--no-deps", f"gpuhunt=={pinned}"])
    print(f"  venv ready in {time.monotonic() - started:.0f} s", flush=True)
    tests = select_tests(release_root)
    print(f"  {len(tests)} test paths: {' '.join(tests)}", flush=True)

    _pytest(python, release_root, tests, work / "baseline.xml", work / "home-baseline")
    before = _freeze(python)
    ours = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    _run([python, "-m", "pip", "install", "-q", "--no-deps", ROOT])
    # This package's own runtime requirements the pinned gpuhunt did not bring (only-if-needed:
    # nothing already satisfied moves).
    _run([python, "-m", "pip", "install", "-q", *ours["project"]["dependencies"]])
    after = _freeze(python)
    print(f"  changed by installing this package: {sorted(after - before)}", flush=True)
    _pytest(python, release_root, tests, work / "ours.xml", work / "home-ours")
    try:
        return compare(read_junit(work / "baseline.xml"), read_junit(work / "ours.xml"))
    finally:
        # Leave the clone as it was found: the pinned gpuhunt back for a --keep rerun.
        _run([python, "-m", "pip", "install", "-q", "--no-deps", f"gpuhunt=={pinned}"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", action="append", help="a dstack version from RELEASES")
    parser.add_argument("--keep", action="store_true", help="reuse build/callers/ venvs")
    args = parser.parse_args(argv)
    known = dict(RELEASES)
    chosen = args.release or list(known)
    unknown = [v for v in chosen if v not in known]
    if unknown:
        parser.error(f"not in RELEASES: {', '.join(unknown)} (known: {', '.join(known)})")
    lines: list[str] = []
    failed = False
    for version in chosen:
        started = time.monotonic()
        print(f"== dstack {version} (gpuhunt {known[version]})", flush=True)
        try:
            c = run_release(version, known[version], args.keep)
        except (subprocess.CalledProcessError, RuntimeError, ValueError) as e:
            print(f"callers gate: dstack {version} could not run: {e}", file=sys.stderr)
            return 2
        lines += report(version, known[version], c)
        lines.append(f"  ({time.monotonic() - started:.0f} s)")
        failed = failed or bool(c.regressions)
    print("\n== callers gate\n" + "\n".join(lines))
    print(
        "FAILED: a test that passes with the pinned gpuhunt fails with this package"
        if failed
        else "passed"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
