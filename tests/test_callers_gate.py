"""scripts/callers_gate.py's pure parts: what it reads from a dstack sdist (the gpuhunt pin, the
test dependency group, the test files to run), how it reads pytest's junit report, and the
comparison that decides the gate. The gate itself installs dstack and runs in .ci/run."""

from __future__ import annotations

from pathlib import Path

import pytest
from scripts import callers_gate as gate
from scripts.callers_gate import Outcome

PYPROJECT = {
    "project": {"dependencies": ["requests", "gpuhunt==0.1.34", "pydantic>=2"]},
    "dependency-groups": {
        "dev": ["ruff", {"include-group": "test"}],
        "test": ["pytest~=8.0", {"include-group": "extra"}],
        "extra": ["pytest-socket>=0.7.0"],
    },
}


def test_reads_the_gpuhunt_pin_and_the_test_group_with_its_includes():
    assert gate.pinned_gpuhunt(PYPROJECT) == "0.1.34"
    assert (
        gate.pinned_gpuhunt(
            {"project": {"dependencies": ["gpuhunt == 0.1.30 ; python_version>'3'"]}}
        )
        == "0.1.30"
    )
    assert gate.test_requirements(PYPROJECT) == ["pytest~=8.0", "pytest-socket>=0.7.0"]
    assert gate.test_requirements(PYPROJECT, "dev") == [
        "ruff",
        "pytest~=8.0",
        "pytest-socket>=0.7.0",
    ]


def test_a_pyproject_without_the_pin_or_the_group_is_an_error_naming_it():
    with pytest.raises(ValueError, match="gpuhunt==X"):
        gate.pinned_gpuhunt({"project": {"dependencies": ["gpuhunt>=0.1"]}})
    with pytest.raises(ValueError, match="'test'"):
        gate.test_requirements({"dependency-groups": {}})


def test_every_release_line_is_a_version_pair():
    assert gate.RELEASES and all(len(r) == 2 for r in gate.RELEASES)
    assert len({v for v, _ in gate.RELEASES}) == len(gate.RELEASES)


def test_selects_the_required_paths_and_every_test_file_naming_gpuhunt(tmp_path: Path):
    def put(rel: str, text: str) -> None:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)

    put("src/tests/_internal/core/backends/x/test_compute.py", "import gpuhunt\n")
    put("src/tests/_internal/utils/test_gpu.py", "x = 1\n")
    put("src/tests/_internal/server/services/test_instances.py", "from gpuhunt import X\n")
    put("src/tests/_internal/server/services/test_other.py", "x = 1\n")
    put("src/tests/_internal/server/conftest.py", "import gpuhunt\n")  # not a test file
    assert gate.select_tests(tmp_path) == [
        "src/tests/_internal/core/backends",
        "src/tests/_internal/server/services/test_instances.py",
        "src/tests/_internal/utils/test_gpu.py",
    ]


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="src.tests.a.test_x.TestK" file="src/tests/a/test_x.py" line="3" name="test_ok" time="0.1"/>
<testcase classname="src.tests.a.test_x.TestK" file="src/tests/a/test_x.py" line="9" name="test_bad[p1]" time="0.1"><failure message="assert {'a': 1, 'available': True} == {'a': 1}">long text</failure></testcase>
<testcase classname="src.tests.a.test_x" file="src/tests/a/test_x.py" line="20" name="test_skip" time="0"><skipped message="no docker"/></testcase>
<testcase classname="src.tests.a.test_x" file="src/tests/a/test_x.py" line="30" name="test_teardown" time="0"/>
<testcase classname="src.tests.a.test_x" file="src/tests/a/test_x.py" line="30" name="test_teardown" time="0"><error message="teardown boom"/></testcase>
<testcase classname="src.tests.a.test_x" file="src/tests/a/test_x.py" line="40" name="test_diff" time="0"><failure message="AssertionError: assert [{'a'...}] == [...]">    def test_diff():
&gt;       assert got == want
E       AssertionError: assert [{'a'...}] == [...]
E
E         At index 0 diff: {'a': 1, 'available': True} != {'a': 1}
</failure></testcase>
</testsuite></testsuites>"""


def test_reads_junit_into_test_ids_and_outcomes(tmp_path: Path):
    path = tmp_path / "j.xml"
    path.write_text(JUNIT)
    assert gate.read_junit(path) == {
        "src/tests/a/test_x.py::TestK::test_ok": Outcome("passed"),
        "src/tests/a/test_x.py::TestK::test_bad[p1]": Outcome(
            "failed", "assert {'a': 1, 'available': True} == {'a': 1}"
        ),
        "src/tests/a/test_x.py::test_skip": Outcome("skipped", "no docker"),
        # a pass in the call and an error in teardown is an error
        "src/tests/a/test_x.py::test_teardown": Outcome("error", "teardown boom"),
        # the assertion's diff, from pytest's E lines
        "src/tests/a/test_x.py::test_diff": Outcome(
            "failed",
            "AssertionError: assert [{'a'...}] == [...] "
            "At index 0 diff: {'a': 1, 'available': True} != {'a': 1}",
        ),
    }


def test_a_regression_is_a_baseline_pass_that_does_not_pass_with_ours():
    baseline = {
        "t::kept": Outcome("passed"),
        "t::broken": Outcome("passed"),
        "t::skipped_now": Outcome("passed"),
        "t::gone": Outcome("passed"),
        "t::always_fails": Outcome("failed", "old bug"),
        "t::fixed": Outcome("error", "old error"),
        "t::skipped": Outcome("skipped"),
    }
    ours = {
        "t::kept": Outcome("passed"),
        "t::broken": Outcome("failed", "boom"),
        "t::skipped_now": Outcome("skipped", "why"),
        "t::always_fails": Outcome("failed", "old bug"),
        "t::fixed": Outcome("passed"),
        "t::skipped": Outcome("skipped"),
        "t::new": Outcome("failed", "not in the baseline"),
    }
    c = gate.compare(baseline, ours)
    assert list(c.regressions) == ["t::broken", "t::gone", "t::skipped_now"]
    assert c.regressions["t::gone"].status == "missing"
    assert list(c.baseline_failures) == ["t::always_fails", "t::fixed"]
    assert c.fixed == ["t::fixed"]
    assert (c.baseline_passed, c.ours_passed, c.total) == (4, 2, 7)
    text = "\n".join(gate.report("9.9", "0.1.34", c))
    assert "3 regression(s)" in text and "REGRESSION t::broken" in text and "boom" in text
    assert "not held against us" in text
    assert gate.compare(baseline, dict(baseline)).regressions == {}


def test_an_unknown_release_is_refused_before_anything_installs(capsys):
    with pytest.raises(SystemExit):
        gate.main(["--release", "0.0.1"])
    assert "not in RELEASES: 0.0.1" in capsys.readouterr().err
