import os
import time

from gpuhunt._internal.load.cache import DiskCache, seal, unseal


def test_sealed_round_trip_and_any_flip_reads_as_absent(tmp_path):
    cache = DiskCache("https://example.com/v3", tmp_path)
    assert cache.put(b"hello catalog", "archive", "v1", "catalog.zip")
    assert cache.get("archive", "v1", "catalog.zip") == b"hello catalog"
    path = cache.dir / "archive" / "v1" / "catalog.zip"
    raw = path.read_bytes()
    for bit in range(0, len(raw) * 8, 5):
        bad = bytearray(raw)
        bad[bit // 8] ^= 1 << (bit % 8)
        assert unseal(bytes(bad)) is None, bit
    path.write_bytes(raw[:-1])
    assert cache.get("archive", "v1", "catalog.zip") is None and not path.exists()
    assert unseal(seal(b"")) == b""


def test_unsealed_files_of_older_versions_read_as_absent(tmp_path):
    cache = DiskCache("u", tmp_path)
    cache.dir.mkdir(parents=True)
    (cache.dir / "latest.json").write_text('{"layout": "archive", "version": "v1"}')
    assert cache.get_json("latest.json") is None


def test_put_reports_failure_and_removes_old_orphans_only(tmp_path):
    cache = DiskCache("u", tmp_path)
    assert cache.put(b"x", "a")
    old, fresh = cache.dir / ".tmp-old", cache.dir / ".tmp-new"
    old.write_bytes(b"1")
    fresh.write_bytes(b"2")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    assert cache.put(b"y", "b")
    assert not old.exists() and fresh.exists()
    assert not cache.put(b"z", "..", "x")  # unsafe name: refused, not raised
    (cache.dir / "blocked").write_bytes(b"a file where a folder should be")
    assert not cache.put(b"z", "blocked", "x")
