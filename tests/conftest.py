import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuhunt._internal.load import livecache, transport

# Cost markers and the checks that keep them true; pytester for the checks' own tests.
pytest_plugins = ["tests.markers", "pytester"]


@pytest.fixture(autouse=True)
def _fast_http(monkeypatch):
    """Retries keep their real policy (count, statuses) but do not sleep between tries, and no
    answer cached by one test leaks into the next."""
    monkeypatch.setattr(transport, "_shared", transport.new_session(backoff_factor=0))
    monkeypatch.setattr(transport, "MAX_RETRY_AFTER", 0.0)
    livecache.LIVE_CACHE.clear()
    yield
    livecache.LIVE_CACHE.clear()


def reference_venv(tmp_path_factory: pytest.TempPathFactory, version: str) -> Path:
    """The python of a virtualenv with gpuhunt `version` from PyPI (skips when it cannot be
    made: no index reachable)."""
    venv = tmp_path_factory.mktemp(f"gpuhunt-{version}") / "venv"
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    try:
        subprocess.run(
            [sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120
        )
        subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                f"gpuhunt=={version}",
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.CalledProcessError as e:
        pytest.skip(f"could not install gpuhunt {version} in a venv: {(e.stderr or '')[-300:]}")
    except (subprocess.TimeoutExpired, OSError) as e:
        pytest.skip(f"could not create a venv with gpuhunt {version}: {e}")
    return python


@pytest.fixture(scope="session")
def gpuhunt_0130(tmp_path_factory) -> Path:
    """A virtualenv with gpuhunt 0.1.30 from PyPI, made once per test session."""
    return reference_venv(tmp_path_factory, "0.1.30")


@pytest.fixture(scope="session")
def gpuhunt_0134(tmp_path_factory) -> Path:
    """A virtualenv with gpuhunt 0.1.34 (what dstack 0.22.5 pins), made once per session."""
    return reference_venv(tmp_path_factory, "0.1.34")
