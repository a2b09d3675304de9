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


# ------------------------------------------------------------------------------ the map

SRC = TESTS.parent / "src" / "gpuhunt"

# Modules of _internal and providers without a test file named for them, each with the file
# that tests its behaviour and why there is no file of its own. A module that gets its own test
# file leaves this list (the test below fails on a stale entry).
NOT_MIRRORED: dict[str, tuple[str, str]] = {
    "_internal/load/mock.py": (
        "_internal/load/test_transport.py",
        "the tests' transport, used and tested with the HTTP layer it stands in for",
    ),
    "_internal/cli/differs.py": (
        "_internal/test_distinct.py",
        "the DIFFERS column, tested beside what tells rows apart (`distinct`)",
    ),
    # declarations: tables and types, no behaviour of their own
    "_internal/accelerators.py": (
        "_internal/test_gpu_specs.py",
        "KNOWN_* tables, read by lookups tested there",
    ),
    "_internal/models.py": (
        "_internal/test_schema.py",
        "CatalogItem and QueryFilter: the schema's tests",
    ),
    "providers/_oci_schema.py": (
        "providers/test_oci.py",
        "OCI's answer types, read by the OCI parser",
    ),
    # glue whose behaviour is its package's, tested end to end there
    "_internal/default.py": (
        "test_arguments.py",
        "default_catalog() and query(): the public entries",
    ),
    "_internal/validate.py": (
        "test_arguments.py",
        "the one argument check, tried through every entry",
    ),
    # the command line: one module per command, each driven through `gpuhunt ...` there
    "_internal/cli/catalog_build.py": (
        "_internal/publish/test_simulation.py",
        "`catalog build`, driven by weeks of builds",
    ),
    "_internal/cli/catalog_publish.py": (
        "_internal/publish/test_pipeline.py",
        "`catalog publish` against moto",
    ),
    "_internal/cli/catalog_verify.py": (
        "_internal/publish/test_pipeline.py",
        "`catalog verify` after publish, and tampered objects",
    ),
    "_internal/cli/catalog_report.py": ("test_workflows.py", "`catalog report`, as CI runs it"),
    "_internal/cli/catalog_diff.py": (
        "_internal/history/test_remote.py",
        "`catalog diff` between published versions",
    ),
    "_internal/cli/catalog_site.py": ("_internal/site/test_publish.py", "`catalog site`"),
    "_internal/cli/catalog_publish_site.py": (
        "_internal/site/test_publish.py",
        "`catalog publish-site` against moto",
    ),
    "_internal/cli/catalog_status.py": (
        "_internal/cli/test_main.py",
        "`catalog status`, with the other commands",
    ),
    "_internal/cli/history.py": ("_internal/history/test_remote.py", "`gpuhunt history`"),
    "_internal/cli/providers.py": ("_internal/cli/test_pinned_output.py", "`gpuhunt providers`"),
    "_internal/publish/run.py": (
        "_internal/publish/test_simulation.py",
        "the build run, driven by weeks of builds",
    ),
    "_internal/history/api.py": (
        "_internal/history/test_remote.py",
        "the two sides of a diff, over HTTP",
    ),
    "_internal/publish/files.py": (
        "_internal/publish/test_pipeline.py",
        "the build's file I/O, in the pipeline",
    ),
    "_internal/publish/s3.py": (
        "_internal/publish/test_pipeline.py",
        "upload order and checks, against moto",
    ),
    "_internal/publish/verify.py": (
        "_internal/publish/test_pipeline.py",
        "verify after publish, and tampered objects",
    ),
    "_internal/publish/integrity.py": (
        "_internal/publish/test_pipeline.py",
        "integrity tests refusing a build",
    ),
    "_internal/publish/accept.py": (
        "_internal/publish/test_gate.py",
        "the gate's override, tested with the gate",
    ),
    "_internal/site/marks.py": (
        "_internal/site/test_data.py",
        "the page's marks, tested beside the page's document they go into",
    ),
    "_internal/site/facts.py": (
        "_internal/site/test_browser.py",
        "the page's facts equal the library's",
    ),
    "_internal/load/sources.py": (
        "_internal/test_catalog.py",
        "folders, file URLs, the bundled snapshot",
    ),
    "_internal/load/download.py": (
        "faults/test_round2.py",
        "a late download kept for the next query",
    ),
    "_internal/load/livecache.py": (
        "providers/test_vastai.py",
        "TTL and single flight as providers use it",
    ),
    "_internal/load/unreachable.py": (
        "faults/test_round3.py",
        "the back-off window across processes",
    ),
    "_internal/forks.py": ("faults/test_round3.py", "a forked child's query"),
    "_internal/formats/table_builder.py": (
        "_internal/formats/test_csv_table.py",
        "typed columns, by every CSV strategy",
    ),
    "providers/_keyed.py": (
        "providers/test_fluidstack.py",
        "the keyed-provider base, through its providers",
    ),
    "providers/_report.py": ("providers/test_contract.py", "ParseReport, kept by every provider"),
}


def mirror(module: str) -> str:
    """The test file named for a module: `_internal/x/y.py` -> `_internal/x/test_y.py`,
    `providers/_y.py` -> `providers/test_y.py` (a leading underscore dropped)."""
    folder, _, name = module.rpartition("/")
    return f"{folder}/test_{name.lstrip('_')}"


def modules() -> list[str]:
    return sorted(
        str(p.relative_to(SRC))
        for top in ("_internal", "providers")
        for p in (SRC / top).rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    )


def test_every_module_has_its_test_file_or_a_reason():
    missing = [m for m in modules() if not (TESTS / mirror(m)).exists()]
    unexplained = sorted(set(missing) - set(NOT_MIRRORED))
    assert not unexplained, f"modules without tests/{{path}}/test_{{name}}.py: {unexplained}"
    stale = sorted(set(NOT_MIRRORED) - set(missing))
    assert not stale, f"NOT_MIRRORED entries that have a test file now, or are gone: {stale}"
    gone = sorted(f for f, _ in NOT_MIRRORED.values() if not (TESTS / f).exists())
    assert not gone, f"NOT_MIRRORED names test files that do not exist: {gone}"


def test_the_modules_named_in_issue_31_have_their_own_test_files():
    for module in ("load/loader.py", "load/fetch.py", "load/transport.py", "query/online.py"):
        assert (TESTS / mirror(f"_internal/{module}")).exists()
        assert f"_internal/{module}" not in NOT_MIRRORED
