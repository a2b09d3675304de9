import os
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

from gpuhunt._internal import default
from gpuhunt._internal.load import livecache, settings, transport

# Cost markers and the checks that keep them true; pytester for the checks' own tests.
pytest_plugins = ["tests.markers", "pytester"]


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Every test gets its own disk cache, no GPUHUNT_* setting from the developer's
    environment (a catalog URL or folder, a load timeout), a fresh default catalog and fresh
    warnings. The user cache dir itself (platformdirs, through `XDG_CACHE_HOME`) points into
    the test's tmp_path too, and a test that wrote there fails: that is a code path that ignored
    `GPUHUNT_CACHE_DIR` (say `Settings()` made by hand), which would have written to the
    developer's real cache."""
    for var in [v for v in os.environ if v.startswith("GPUHUNT_")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("GPUHUNT_CACHE_DIR", str(tmp_path / "cache"))
    # Tests of what a load asks the network (faults, fallbacks, 304s) call `load()` moments
    # after another load of the same URL, expecting a request: the window in which `load()`
    # trusts a recent check instead (tests/_internal/load/test_checked_within.py) is off here.
    monkeypatch.setenv("GPUHUNT_LOAD_CHECKED_WITHIN", "0")
    # pip keeps its real cache (a subprocess test may install), everything else moves.
    monkeypatch.setenv("PIP_CACHE_DIR", os.environ.get("PIP_CACHE_DIR") or _real_pip_cache())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    user_cache = Path(platformdirs.user_cache_dir("gpuhunt"))
    monkeypatch.setattr(default, "_catalog", None)
    settings._warned.clear()
    yield
    made = default._catalog
    if made is not None:  # the test's default catalog, with its threads
        made.close()
    settings._warned.clear()
    # (On macOS and Windows platformdirs does not read XDG_CACHE_HOME: no check there.)
    if user_cache.is_relative_to(tmp_path) and user_cache.exists():
        written = sorted(str(p.relative_to(user_cache)) for p in user_cache.rglob("*"))
        pytest.fail(
            f"the test wrote to the user cache dir {user_cache} (GPUHUNT_CACHE_DIR is "
            f"{tmp_path / 'cache'}): {written[:5]}",
            pytrace=False,
        )


def _real_pip_cache() -> str:
    return str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip")


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
