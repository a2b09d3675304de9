import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuhunt._internal.load import livecache, transport


@pytest.fixture(autouse=True)
def _fast_http(monkeypatch):
    """Retries keep their real policy (count, statuses) but do not sleep between tries, and no
    answer cached by one test leaks into the next."""
    monkeypatch.setattr(transport, "_shared", transport.new_session(backoff_factor=0))
    monkeypatch.setattr(transport, "MAX_RETRY_AFTER", 0.0)
    livecache.LIVE_CACHE.clear()
    yield
    livecache.LIVE_CACHE.clear()


@pytest.fixture(scope="session")
def gpuhunt_0130(tmp_path_factory) -> Path:
    """A virtualenv with gpuhunt 0.1.30 from PyPI, made once per test session."""
    venv = tmp_path_factory.mktemp("gpuhunt-0.1.30") / "venv"
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
                "gpuhunt==0.1.30",
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.CalledProcessError as e:
        pytest.skip(f"could not install gpuhunt 0.1.30 in a venv: {(e.stderr or '')[-300:]}")
    except (subprocess.TimeoutExpired, OSError) as e:
        pytest.skip(f"could not create a venv with gpuhunt 0.1.30: {e}")
    return python
