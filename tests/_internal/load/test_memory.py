"""Returning a load's freed memory to the OS: `malloc_trim(0)` where glibc has it, called once
at the end of every load (successful or not), and a no-op where the libc lacks it."""

from __future__ import annotations

import ctypes
import sys

import pytest

from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.load import memory
from tests.helpers import item, publish_archive


@pytest.fixture(autouse=True)
def unresolved(monkeypatch):
    monkeypatch.setattr(memory, "_trim", memory._UNSET)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_trims_where_glibc_is(monkeypatch):
    calls = []
    real = memory._find_trim()
    if real is None:
        pytest.skip("this libc has no malloc_trim")
    monkeypatch.setattr(memory, "_find_trim", lambda: lambda pad: calls.append(pad) or 1)
    assert memory.release_free_memory() is True
    assert calls == [0]


def test_a_libc_without_malloc_trim_is_a_no_op(monkeypatch):
    class NoTrim:  # what ctypes gives for a libc without the symbol (musl)
        def __init__(self, *args, **kwargs):
            pass

        def __getattr__(self, name):
            raise AttributeError(name)

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", NoTrim)
    assert memory._find_trim() is None
    assert memory.release_free_memory() is False
    assert memory._trim is None  # looked up once


def test_no_libc_to_open_is_a_no_op(monkeypatch):
    def missing(*args, **kwargs):
        raise OSError("libc.so.6: cannot open shared object file")

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(ctypes, "CDLL", missing)
    assert memory.release_free_memory() is False


def test_other_platforms_do_not_look(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(ctypes, "CDLL", lambda *a, **k: pytest.fail("opened a libc"))
    assert memory.release_free_memory() is False


def test_a_failing_trim_does_not_fail_the_caller(monkeypatch):
    def broken(pad):
        raise ctypes.ArgumentError("bad")

    monkeypatch.setattr(memory, "_find_trim", lambda: broken)
    assert memory.release_free_memory() is False


def test_every_load_trims_once_even_a_failed_one(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(memory, "release_free_memory", lambda: calls.append(1) or True)
    publish_archive(tmp_path, "v1", {"aws": csv_bytes([item(price=1.0)])})
    c = Catalog(catalog_url=str(tmp_path), auto_reload=False)
    c.load()
    assert calls == [1] and len(c.query()) == 1
    c.load()
    assert calls == [1, 1]
    broken = Catalog(catalog_url=str(tmp_path / "nowhere"), auto_reload=False)
    with pytest.raises(Exception):  # noqa: B017 - any refusal; the trim is what is checked
        broken.load(version="v9")
    assert calls == [1, 1, 1]


def test_a_load_also_trims_after_each_large_provider(tmp_path, monkeypatch):
    """What reading a large provider freed goes back before the next is read, so that the
    allocator's kept memory does not add up across providers (issue 40)."""
    from gpuhunt._internal.load import tables

    calls = []
    monkeypatch.setattr(memory, "release_free_memory", lambda: calls.append(1) or True)
    monkeypatch.setattr(tables, "TRIM_AFTER_ROWS", 2)
    publish_archive(
        tmp_path,
        "v1",
        {
            "aws": csv_bytes([item(price=1.0), item(price=2.0)]),
            "gcp": csv_bytes([item("gcp", price=1.0)]),
        },
    )
    Catalog(catalog_url=str(tmp_path), auto_reload=False).load()
    assert calls == [1, 1]  # after aws (2 offers), none after gcp (1), one at the end
