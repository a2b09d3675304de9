import os
import time

from gpuhunt._internal.load import cache as cache_module
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


# ------------------------------------------------------------ links and odd files (issue 40)


def _outside(tmp_path):
    """A folder outside the cache holding what must survive: a file and a version folder."""
    outside = tmp_path / "outside"
    (outside / "v0").mkdir(parents=True)
    (outside / "keep.columns").write_bytes(b"not the cache's")
    (outside / "v0" / "catalog.zip").write_bytes(b"not the cache's either")
    return outside


def test_pruning_never_deletes_through_a_linked_folder(tmp_path):
    cache = DiskCache("u", tmp_path / "cache")
    cache.dir.mkdir(parents=True)
    outside = _outside(tmp_path)
    (cache.dir / "parsed").symlink_to(outside)
    cache.prune("parsed", set())
    assert (outside / "keep.columns").exists()


def test_keeping_versions_never_removes_folders_through_a_link(tmp_path):
    cache = DiskCache("u", tmp_path / "cache")
    cache.dir.mkdir(parents=True)
    outside = _outside(tmp_path)
    (cache.dir / "archive").symlink_to(outside)
    assert cache.keep_versions("archive", {"v9"}, recent=0) == []
    assert (outside / "v0" / "catalog.zip").exists()


def test_a_linked_version_folder_is_removed_as_a_link_only(tmp_path):
    cache = DiskCache("u", tmp_path / "cache")
    assert cache.put(b"x", "archive", "v2", "catalog.zip")
    outside = _outside(tmp_path)
    (cache.dir / "archive" / "v1").symlink_to(outside / "v0")
    assert cache.keep_versions("archive", {"v2"}, recent=0) == ["v1"]
    assert not (cache.dir / "archive" / "v1").is_symlink()
    assert (outside / "v0" / "catalog.zip").exists()


def test_nothing_is_written_through_a_linked_folder(tmp_path):
    cache = DiskCache("u", tmp_path / "cache")
    cache.dir.mkdir(parents=True)
    outside = _outside(tmp_path)
    (cache.dir / "archive").symlink_to(outside)
    assert not cache.put(b"x", "archive", "v0", "catalog.zip")
    assert (outside / "v0" / "catalog.zip").read_bytes() == b"not the cache's either"


def test_a_linked_file_a_fifo_and_an_oversized_file_read_as_absent(tmp_path, monkeypatch):
    cache = DiskCache("u", tmp_path / "cache")
    assert cache.put(b"sealed", "latest.json")
    target = tmp_path / "big"
    target.write_bytes(seal(b"{}"))
    (cache.dir / "link.json").symlink_to(target)
    assert cache.get("link.json") is None and target.exists()
    os.mkfifo(cache.dir / "fifo.json")
    assert cache.get("fifo.json") is None  # would block forever if opened for a plain read
    monkeypatch.setattr(cache_module, "MAX_FILE_BYTES", 10)
    assert cache.get("latest.json") is None
    monkeypatch.setattr(cache_module, "MAX_FILE_BYTES", 1 << 20)
    assert cache.get("latest.json") == b"sealed"


def test_a_file_is_written_with_its_seal_without_a_second_copy_of_it(tmp_path):
    """Issue 40: the cache writes a load's tables (a table's worth of bytes each) at the
    load's peak; joining the seal to the data made a copy of them."""
    import tracemalloc

    cache = DiskCache("http://example.invalid/catalog", tmp_path)
    data = os.urandom(8 << 20)
    tracemalloc.start()
    try:
        assert cache.put(data, "parsed", "big.columns")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < len(data) // 2
    assert cache.get("parsed", "big.columns") == data
    assert (tmp_path / cache.dir.name / "parsed" / "big.columns").read_bytes() == seal(data)


def test_tail_reads_a_files_last_bytes_and_never_a_fifo_link_or_device(tmp_path, monkeypatch):
    """Issue 50: the warm start reads each archive's seal from its last bytes; that read has
    the cache's checks too. Without O_NOFOLLOW/O_NONBLOCK the type is still checked first."""
    cache = DiskCache("u", tmp_path / "cache")
    assert cache.put(b"sealed", "archive", "v1", "catalog.zip")
    assert cache.tail(8, "archive", "v1", "catalog.zip") == seal(b"sealed")[-8:]
    assert cache.tail(1 << 20, "archive", "v1", "catalog.zip") == seal(b"sealed")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (cache.dir / "archive" / "v2").mkdir()
    (cache.dir / "archive" / "v2" / "catalog.zip").symlink_to(fifo)
    os.mkfifo(cache.dir / "archive" / "v1" / "fifo.zip")
    (cache.dir / "archive" / "v1" / "null.zip").symlink_to("/dev/null")
    monkeypatch.setattr(cache_module, "_NOFOLLOW", 0)
    monkeypatch.setattr(cache_module, "_NONBLOCK", 0)
    for name in (("v2", "catalog.zip"), ("v1", "fifo.zip"), ("v1", "null.zip")):
        assert cache.tail(8, "archive", *name) is None
        assert cache.get("archive", *name) is None
    assert cache.tail(8, "archive", "v3", "catalog.zip") is None
