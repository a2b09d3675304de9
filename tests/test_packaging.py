"""The wheel must carry the bundled snapshot (without it a fresh offline install has no data),
the catalog page and `py.typed`; the sdist must carry what its tests need to run."""

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.build
def test_wheel_contains_package_data(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    (wheel,) = tmp_path.glob("gpuhunt-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "gpuhunt/resources/catalog.zip" in names
    assert "gpuhunt/_internal/catalog.py" in names and "gpuhunt/providers/base.py" in names
    # Type checkers of callers (dstack) read our hints only with the marker (PEP 561).
    assert "gpuhunt/py.typed" in names and "gpuhunt/_internal/__init__.py" in names
    assert not [n for n in names if n.startswith("tests/")]


@pytest.mark.build
def test_sdist_runs_its_own_provider_tests(tmp_path):
    """An sdist unpacked elsewhere runs a provider test that replays through `scripts/`."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--sdist",
            "--no-isolation",
            "-o",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    (sdist,) = tmp_path.glob("gpuhunt-*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    (root,) = (tmp_path / "unpacked").iterdir()
    assert (root / "scripts" / "replay").is_dir() and (root / "CHANGELOG.md").is_file()
    assert (root / "docs" / "settings.md").is_file() and (root / ".ci" / "run").is_file()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/providers/test_lambdalabs.py",
        ],
        cwd=root,
        # The sdist's own package, not the one installed in this environment.
        env={**os.environ, "PYTHONPATH": str(root / "src")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert " passed" in run.stdout
    probe = subprocess.run(
        [sys.executable, "-c", "import gpuhunt; print(gpuhunt.__file__)"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root / "src")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout.strip().startswith(str(root / "src"))
