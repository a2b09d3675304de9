"""Rules of the test suite itself, each checked: cost markers that are true (tests/markers.py),
test modules that do not import each other."""

from __future__ import annotations

import ast
from pathlib import Path

import platformdirs
import pytest

from tests import markers

TESTS = Path(__file__).resolve().parent


# ------------------------------------------------------------------------------ markers


def test_pyproject_registers_exactly_the_markers_the_plugin_checks(pytestconfig):
    assert set(markers.MARKERS) <= markers.registered(pytestconfig)
    assert set(markers.FIXTURE_MARKERS.values()) <= set(markers.MARKERS)
    ours = {
        line.split(":", 1)[0].strip()
        for line in pytestconfig.getini("markers")
        if line.split(":", 1)[1].strip() in markers.MARKERS.values()
    }
    assert ours == set(markers.MARKERS)
    assert "--strict-markers" in pytestconfig.getini("addopts")


INNER_CONFTEST = """
import platformdirs
import pytest

pytest_plugins = ["tests.markers"]


@pytest.fixture(scope="session")
def gpuhunt_0130():
    return "a virtualenv"
"""


@pytest.fixture
def inner(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytest run of its own with the suite's marker plugin and markers."""
    lines = "\n".join(f"    {name}: {what}" for name, what in markers.MARKERS.items())
    pytester.makeini(
        f"[pytest]\naddopts = --strict-markers -p no:cacheprovider\nmarkers =\n{lines}\n"
    )
    pytester.makeconftest(INNER_CONFTEST)
    return pytester


@pytest.mark.subprocess  # the inner run's marked tests start processes
@pytest.mark.slow  # a pytest run of its own
def test_a_test_starting_a_process_needs_the_marker(inner):
    inner.makepyfile(
        test_procs="""
import os, subprocess, sys
import platformdirs
import pytest

def test_unmarked_run():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_unmarked_fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)

def test_unmarked_swallowed():
    try:
        subprocess.run([sys.executable, "-c", "pass"])
    except BaseException:
        pass

@pytest.mark.subprocess
def test_marked():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

@pytest.mark.build
def test_implied():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_no_process():
    assert True
"""
    )
    result = inner.runpytest()
    result.assert_outcomes(passed=4, failed=2, errors=1)  # the swallowed one errs at teardown
    result.stdout.fnmatch_lines(
        [
            "*test_unmarked_run started a process (python*) without @pytest.mark.subprocess*",
            "*test_unmarked_fork forked (os.fork) without @pytest.mark.subprocess*",
        ]
    )
    assert "ERROR at teardown of test_unmarked_swallowed" in result.stdout.str()


@pytest.mark.slow  # a pytest run of its own
def test_a_test_using_a_costly_fixture_needs_its_marker(inner):
    inner.makepyfile(
        test_fixtures="""
import platformdirs
import pytest

def test_unmarked(gpuhunt_0130):
    pass

@pytest.mark.pypi
def test_marked(gpuhunt_0130, request):
    # pypi implies subprocess and slow, so `-m "not subprocess"` leaves it out too
    assert {"pypi", "subprocess", "slow"} <= {m.name for m in request.node.iter_markers()}
"""
    )
    result = inner.runpytest()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*test_unmarked: uses fixture 'gpuhunt_0130': mark it @pytest.mark.pypi*"]
    )
    selected = inner.runpytest("-m", "not subprocess")
    selected.assert_outcomes(errors=1, deselected=1)


@pytest.mark.slow  # a pytest run of its own
def test_unmarked_tests_get_the_short_timeout_and_marked_ones_keep_the_long(inner):
    inner.makepyfile(
        test_timeouts=f"""
import platformdirs
import pytest

def test_plain(request):
    assert request.node.get_closest_marker("timeout").args == ({markers.UNMARKED_TIMEOUT},)

@pytest.mark.slow
def test_slow(request):
    assert request.node.get_closest_marker("timeout") is None

@pytest.mark.timeout(5)
def test_own(request):
    assert request.node.get_closest_marker("timeout").args == (5,)
"""
    )
    inner.runpytest().assert_outcomes(passed=3)


@pytest.mark.slow  # a pytest run of its own
def test_an_unregistered_marker_is_an_error(inner):
    inner.makepyfile(
        test_typo="""
import platformdirs
import pytest

@pytest.mark.slwo
def test_x():
    pass
"""
    )
    result = inner.runpytest()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*'slwo' not found in `markers` configuration option*"])


# ------------------------------------------------------------------------------ imports


def imported_test_modules(path: Path) -> list[str]:
    """The test modules (`test_*`) that `path` imports, as written."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names = [base] + [f"{base}.{a.name}" if base else a.name for a in node.names]
        found += [n for n in names if any(p.startswith("test_") for p in n.split("."))]
    return sorted(set(found))


def test_the_import_scan_sees_each_way_of_writing_it(tmp_path):
    f = tmp_path / "test_x.py"
    f.write_text(
        "import tests.faults.test_faults\n"
        "from tests.faults.test_round2 import cli\n"
        "from .test_table import D1\n"
        "from tests._internal.publish import test_pipeline\n"
        "from tests.helpers import item\n"
    )
    assert imported_test_modules(f) == [
        "test_table",
        "test_table.D1",
        "tests._internal.publish.test_pipeline",
        "tests.faults.test_faults",
        "tests.faults.test_round2",
        "tests.faults.test_round2.cli",
    ]


def test_no_test_module_imports_another():
    """Shared pieces live in conftest.py fixtures or in modules not named test_* (helpers.py,
    faults/common.py, _internal/pipeline.py, ...): a test module's helpers are its own, and
    running one test file never depends on another's collection."""
    offenders = {
        str(p.relative_to(TESTS)): imported_test_modules(p)
        for p in sorted(TESTS.rglob("*.py"))
        if "data" not in p.relative_to(TESTS).parts and p.name != "test_suite_rules.py"
    }
    assert {k: v for k, v in offenders.items() if v} == {}


# ------------------------------------------------------------------------------ the user cache


def test_a_query_caches_in_the_tests_own_dir_and_not_the_users(tmp_path):
    from gpuhunt import Catalog
    from gpuhunt._internal.formats.csv import csv_bytes
    from tests.helpers import item, publish_archive, serve_directory

    user_cache = Path(platformdirs.user_cache_dir("gpuhunt"))
    assert user_cache.is_relative_to(tmp_path)  # the suite's fixture moved it
    assert not user_cache.is_relative_to(Path.home())
    publish_archive(tmp_path / "b", "v1", {"aws": csv_bytes([item()])})
    with serve_directory(tmp_path / "b") as (url, _), Catalog(catalog_url=url) as c:
        assert len(c.query()) == 1 and c.status().source == "network"
    assert [p.name for p in (tmp_path / "cache").rglob("catalog.zip")] == ["catalog.zip"]
    assert not user_cache.exists()


def test_a_settings_without_cache_dir_would_write_to_the_user_cache(tmp_path):
    """What the fixture's check catches: `Settings()` made by hand has no cache dir, so the
    catalog uses the user's; here that is the test's stand-in, which the fixture would fail
    the test for (it is emptied before the fixture looks)."""
    import shutil

    from gpuhunt import Catalog
    from gpuhunt._internal.formats.csv import csv_bytes
    from gpuhunt._internal.load.settings import Settings
    from tests.helpers import item, publish_archive, serve_directory

    user_cache = Path(platformdirs.user_cache_dir("gpuhunt"))
    publish_archive(tmp_path / "b", "v1", {"aws": csv_bytes([item()])})
    with (
        serve_directory(tmp_path / "b") as (url, _),
        Catalog(settings=Settings(catalog_url=url)) as c,
    ):
        assert len(c.query()) == 1 and c.status().source == "network"
    try:
        assert [p.name for p in user_cache.rglob("catalog.zip")] == ["catalog.zip"]
        assert not (tmp_path / "cache").exists()
    finally:
        shutil.rmtree(user_cache)
