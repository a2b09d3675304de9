"""The wheel must carry the bundled snapshot: without it a fresh offline install has no data."""

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
    assert not [n for n in names if n.startswith("tests/")]
