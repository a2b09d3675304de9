"""The suite's cost markers, and the rules that keep them true (a pytest plugin, loaded by
tests/conftest.py; the markers are registered in pyproject.toml).

A test that starts a process, installs from PyPI, starts a moto server, drives Chromium or
builds a wheel says so with a marker, so `pytest -m "not slow"` (or `"not pypi"`, ...) leaves it
out. A marker nobody checks drifts, so:

- a test that uses one of the fixtures in `FIXTURE_MARKERS` without its marker fails at setup,
  before the costly fixture runs;
- a test that starts a process (subprocess, os.fork, multiprocessing) without a marker that
  allows it fails at that call, and again at teardown if the call's error was swallowed;
- a test with none of the cost markers gets the short timeout `UNMARKED_TIMEOUT` instead of the
  suite's 600 s, so a test that quietly became slow or hangs shows itself; `slow` ones keep 600 s.

`slow` itself cannot be checked without timing a test, which tests must not do: the default run's
`--durations` report lists the slowest, and the short timeout catches the worst.
"""

from __future__ import annotations

import multiprocessing.util
import os
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

# marker -> what it means (pyproject.toml registers the same names; a test compares them)
MARKERS = {
    "slow": "takes more than about 2 s on an idle machine",
    "subprocess": "starts a process: a CLI run, a forked child, pip",
    "pypi": "installs gpuhunt 0.1.30 or 0.1.34 from PyPI into a virtualenv",
    "moto": "starts a moto server (S3 or EC2) on 127.0.0.1",
    "browser": "drives a headless Chromium through chromedriver",
    "build": "builds a wheel or an sdist of this project",
}

# A fixture whose use makes a test cost what the marker says (fixture names are matched in
# the test's whole fixture closure, so a fixture built on one of these counts too).
FIXTURE_MARKERS = {
    "gpuhunt_0130": "pypi",
    "gpuhunt_0134": "pypi",
    "moto_url": "moto",
    "browser": "browser",
}

# Markers a test carrying them gets as well: all of these start processes, and take long.
IMPLIES = {
    "pypi": ("subprocess", "slow"),
    "build": ("subprocess", "slow"),
    "browser": ("subprocess", "slow"),
}

# Markers that allow starting a process (after IMPLIES, `subprocess` covers them all).
PROCESS_MARKERS = {"subprocess"}

# Programs the standard library or a dependency may run on its own to probe the system
# (ctypes.util.find_library, platform): not the test's doing, and run once per process.
SYSTEM_PROBES = {
    "ldconfig",
    "gcc",
    "cc",
    "ld",
    "objdump",
    "file",
    "uname",
    "lsb_release",
    "fc-list",  # matplotlib's font cache, built once per process
}

UNMARKED_TIMEOUT = 120  # seconds; the suite's `timeout` (600 s) stays for marked tests

_ERRORS = pytest.StashKey[list[str]]()


def _names(item: pytest.Item) -> set[str]:
    return {m.name for m in item.iter_markers()}


@pytest.hookimpl(tryfirst=True)  # before `-m` selects on the markers added here
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = _names(item)
        for marker, implied in IMPLIES.items():
            if marker in names:
                for extra in implied:
                    if extra not in names:
                        item.add_marker(extra)
        names = _names(item)
        if not names & set(MARKERS) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(UNMARKED_TIMEOUT))


def missing_markers(item: pytest.Item) -> list[str]:
    """What the item's fixtures say it costs that its markers do not."""
    names = _names(item)
    fixtures = set(getattr(item, "fixturenames", ()))
    return [
        f"uses fixture {fixture!r}: mark it @pytest.mark.{marker}"
        for fixture, marker in sorted(FIXTURE_MARKERS.items())
        if fixture in fixtures and marker not in names
    ]


def _program(args: Any) -> str:
    if isinstance(args, (str, bytes, os.PathLike)):
        first = os.fsdecode(args).split()[0] if os.fsdecode(args).split() else ""
    else:
        first = os.fsdecode(args[0]) if args else ""
    return Path(first).name


@contextmanager
def _process_guard(item: pytest.Item) -> Iterator[None]:
    """Starting a process without a marker that allows it fails the test."""
    if _names(item) & PROCESS_MARKERS:
        yield
        return
    errors = item.stash.setdefault(_ERRORS, [])

    def refuse(what: str) -> None:
        errors.append(what)
        pytest.fail(
            f"{item.nodeid} {what} without @pytest.mark.subprocess (tests/markers.py)",
            pytrace=False,
        )

    real_execute = subprocess.Popen._execute_child  # type: ignore[attr-defined]
    real_fork = os.fork
    real_spawnv = multiprocessing.util.spawnv_passfds

    def execute_child(self: subprocess.Popen[Any], args: Any, *rest: Any, **kw: Any) -> Any:
        if _program(args) not in SYSTEM_PROBES:
            refuse(f"started a process ({_program(args)})")
        return real_execute(self, args, *rest, **kw)

    def fork() -> int:
        refuse("forked (os.fork)")
        return real_fork()

    def spawnv_passfds(path: Any, args: Sequence[Any], passfds: Any) -> int:
        refuse("started a process (multiprocessing)")
        return real_spawnv(path, args, passfds)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(subprocess.Popen, "_execute_child", execute_child)
        mp.setattr(os, "fork", fork)
        mp.setattr(multiprocessing.util, "spawnv_passfds", spawnv_passfds)
        yield


def _reported(item: pytest.Item) -> Iterator[None]:
    """The phase's result; a refusal that reached pytest needs no second report at teardown."""
    try:
        return (yield)
    except pytest.fail.Exception:
        item.stash[_ERRORS] = []
        raise


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    problems = missing_markers(item)
    if problems:  # before the costly fixture is made
        pytest.fail(f"{item.nodeid}: " + "; ".join(problems) + " (tests/markers.py)", pytrace=False)
    with _process_guard(item):  # function fixtures start processes too
        return (yield from _reported(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with _process_guard(item):
        return (yield from _reported(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    result = yield
    errors = item.stash.get(_ERRORS, [])
    if errors:  # the test's own `except` may have swallowed the failure raised at the call
        item.stash[_ERRORS] = []
        pytest.fail(
            f"{item.nodeid} {errors[0]} without @pytest.mark.subprocess (tests/markers.py)",
            pytrace=False,
        )
    return result


def registered(config: pytest.Config) -> set[str]:
    """The marker names the configuration registers (pyproject's `markers`)."""
    return {line.split(":", 1)[0].split("(", 1)[0].strip() for line in config.getini("markers")}
