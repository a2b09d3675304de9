import threading
import time

import numpy as np

from gpuhunt._internal.formats.archive import sha256
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.load.cache import DiskCache
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.load.tables import PARSED, SideWork, provider_table
from tests.helpers import item


def _raw(**csvs: bytes) -> RawCatalog:
    return RawCatalog(dict(csvs), "v1", "network", "http://example.invalid/catalog")


class _Reads(dict):
    """A provider -> CSV mapping that records which CSVs were read (a `Members` inflates a CSV
    when it is read)."""

    def __init__(self, **csvs: bytes) -> None:
        super().__init__(csvs)
        self.read: list[str] = []

    def __getitem__(self, key):
        self.read.append(key)
        return super().__getitem__(key)


def test_a_csv_is_hashed_beside_its_own_parse_and_no_other_csv_is_read_meanwhile(tmp_path):
    """Issue 40: reading a CSV inflates it; hashing ahead of the load held another provider's
    CSV beside the one parsed (every provider's, when all were hashed ahead). A CSV with no
    table parsed earlier is hashed on the side thread while it is parsed, and the parsed
    table is kept under that hash."""
    cache = DiskCache("http://example.invalid/catalog", tmp_path)
    aws, gcp = csv_bytes([item("aws", price=1.0)]), csv_bytes([item("gcp", price=2.0)])
    csvs = _Reads(aws=aws, gcp=gcp)
    raw = RawCatalog(csvs, "v1", "network", "http://example.invalid/catalog")
    side = SideWork()
    hashed_on = []
    real = side._pool.submit

    def submit(fn, *args):
        hashed_on.append(getattr(args[0], "__name__", ""))
        return real(fn, *args)

    side._pool.submit = submit  # type: ignore[method-assign]
    cached: set[str] = set()
    assert len(provider_table(raw, "aws", cache, cached, side, consume=True)) == 1
    assert set(csvs.read) == {"aws"} and hashed_on[0] == "sha256"  # gcp: not yet
    side.finish()
    assert cached == {f"aws-{sha256(aws)[:32]}.columns"}
    assert cache.get(PARSED, f"aws-{sha256(aws)[:32]}.columns") is not None


def test_a_csv_with_a_table_parsed_earlier_is_hashed_first_to_find_it(tmp_path, monkeypatch):
    from gpuhunt._internal.load import tables

    cache = DiskCache("http://example.invalid/catalog", tmp_path)
    aws = csv_bytes([item("aws", price=1.0), item("aws", price=2.0)])
    side = SideWork()
    provider_table(_raw(aws=aws), "aws", cache, set(), side)
    side.finish()
    parsed = []
    monkeypatch.setattr(tables, "_parsed", lambda *a: parsed.append(a))
    side = SideWork()
    assert len(provider_table(_raw(aws=aws), "aws", cache, set(), side)) == 2
    side.finish()
    assert parsed == []  # read back, not parsed


def test_a_load_has_written_its_parsed_tables_when_it_returns(tmp_path, monkeypatch):
    """The cache writes run beside the parse, and `finish` waits for them: the next process
    finds the parsed table even if the write was slow."""
    cache = DiskCache("http://example.invalid/catalog", tmp_path)
    real_put = DiskCache.put
    threads_used = set()

    def slow_put(self, data, *parts):
        threads_used.add(threading.current_thread().name)
        time.sleep(0.3)
        return real_put(self, data, *parts)

    monkeypatch.setattr(DiskCache, "put", slow_put)
    raw = _raw(aws=csv_bytes([item(price=1.0), item(price=2.0)]))
    side = SideWork()
    cached: set[str] = set()
    table = provider_table(raw, "aws", cache, cached, side)
    assert len(table) == 2
    side.finish()
    (name,) = cached
    assert cache.get(PARSED, name) is not None
    assert [n.startswith("gpuhunt-load-side") for n in threads_used] == [True]  # not the loader


def test_combine_freeing_is_combine_and_lets_go_of_each_column():
    from gpuhunt._internal.load.tables import combine_freeing
    from gpuhunt._internal.query.table import COLUMNS, combine

    def tables():
        raw = _raw(
            aws=csv_bytes(
                [
                    item("aws", price=p, location=f"r{p}", gpu_name=g)
                    for p, g in [(3, "A100"), (1, "H100"), (2, "L4")]
                ]
            ),
            gcp=csv_bytes([item("gcp", price=p, gpu_name="H100", flags=["x"]) for p in (2, 0.5)]),
            runpod=csv_bytes(
                [item("runpod", price=2, gpu_count=0, gpu_name=None, gpu_vendor=None)]
            ),
        )
        return [provider_table(raw, p, None, set()) for p in ("aws", "gcp", "runpod")]

    expected = combine(tables())
    parts = tables()
    got = combine_freeing(parts)
    for name in [*COLUMNS, "gpu_memory_eff", "total_gpu_memory"]:
        assert np.array_equal(getattr(got, name), getattr(expected, name), equal_nan=True), name
        assert getattr(got, name).dtype == getattr(expected, name).dtype
    for name in ("providers", "gpu_names", "flag_sets", "instance_names", "locations"):
        assert getattr(got, name) == getattr(expected, name)
    assert got.price.tolist() == [0.5, 1, 2, 2, 2, 3]
    assert all("price" not in t.__dict__ and "gpu_memory_eff" not in t.__dict__ for t in parts)


def test_a_load_lets_go_of_each_providers_bytes_once_its_table_is_built(tmp_path):
    from gpuhunt._internal.load.loader import Loader
    from gpuhunt._internal.load.settings import Settings

    raw = _raw(
        aws=csv_bytes([item("aws", price=1.0), item("aws", price=2.0)]),
        gcp=csv_bytes([item("gcp", price=0.5)]),
    )
    loader = Loader(
        "https://catalog.example/v3",
        Settings(cache_dir=tmp_path / "cache"),
        reload_interval=3600,
        auto_reload=False,
        timeout=(1, 1),
        retries=0,
        load_timeout=1,
    )
    loader._install(raw)
    assert loader.loaded is not None and loader.loaded.table.counts() == {"aws": 2, "gcp": 1}
    assert raw.csvs == {"aws": b"", "gcp": b""} and raw.columns == {}


def test_a_refused_providers_bytes_are_let_go_too(tmp_path):
    """A provider whose CSV is refused (no header) costs the load its bytes no longer than one
    that was read."""
    raw = _raw(aws=b"", gcp=csv_bytes([item("gcp", price=0.5)]))
    raw.csvs["aws"] = b"not,a,catalog\n1,2,3\n"
    loader = _loader(tmp_path)
    loader._install(raw)
    assert loader.loaded is not None and loader.loaded.table.counts() == {"gcp": 1}
    assert raw.problems and raw.csvs == {"aws": b"", "gcp": b""}


def test_a_consuming_parse_lets_go_of_the_bytes_before_it_parses(monkeypatch):
    from gpuhunt._internal.formats import csv_table

    raw = _raw(aws=csv_bytes([item("aws", price=1.0)]))
    seen = []
    real = csv_table.build_table

    def spy(text, **kwargs):
        seen.append(raw.csvs["aws"])
        return real(text, **kwargs)

    monkeypatch.setattr(csv_table, "build_table", spy)
    assert len(provider_table(raw, "aws", None, set(), consume=True)) == 1
    assert seen == [b""]


def _loader(tmp_path):
    from gpuhunt._internal.load.loader import Loader
    from gpuhunt._internal.load.settings import Settings

    return Loader(
        "https://catalog.example/v3",
        Settings(cache_dir=tmp_path / "cache"),
        reload_interval=3600,
        auto_reload=False,
        timeout=(1, 1),
        retries=0,
        load_timeout=1,
    )


def _archived(csvs: dict[str, bytes], packed_from: dict[str, bytes], **members: bytes):
    """What reads a `RawCatalog` from a published-style archive: each provider's manifest entry
    names its CSV's sha256 and the sha256 of a column file built from `packed_from[p]`; a CSV
    member may be replaced by `members[p]` (what a tampered archive would hold)."""
    from gpuhunt._internal.formats.archive import read_archive, write_archive
    from gpuhunt._internal.publish.build import column_file

    packed = {p: column_file(p, packed_from[p]) for p in packed_from}
    entries = {
        p: {"sha256": sha256(csv), **({"columns_sha256": sha256(packed[p])} if p in packed else {})}
        for p, csv in csvs.items()
    }
    data = write_archive({**csvs, **members}, {"version": "v1", "providers": entries}, packed)
    return lambda: RawCatalog.of(read_archive(data, source="v1/catalog.zip"), "v1", "network", "x")


def _count_inflates(monkeypatch) -> list[str]:
    from gpuhunt._internal.formats import archive

    seen: list[str] = []
    real = archive._inflate

    def counting(z, info, source):
        seen.append(info.filename)
        return real(z, info, source)

    monkeypatch.setattr(archive, "_inflate", counting)
    streamed = archive._pieces

    def counting_pieces(item):  # inflated as a stream (issue 50): read all the same
        seen.append(item.info.filename)
        return streamed(item)

    monkeypatch.setattr(archive, "_pieces", counting_pieces)
    return seen


def test_a_catalog_with_column_files_loads_without_inflating_its_csvs(tmp_path, monkeypatch):
    """Issue 42: a column file the manifest vouches for is the provider's offers; the CSV
    beside it is neither inflated nor hashed."""
    aws = csv_bytes([item("aws", price=1.0), item("aws", price=2.0)])
    gcp = csv_bytes([item("gcp", price=0.5)])
    read = _archived({"aws": aws, "gcp": gcp}, {"aws": aws, "gcp": gcp})
    seen = _count_inflates(monkeypatch)
    hashed = []
    monkeypatch.setattr(
        "gpuhunt._internal.formats.archive.sha256", lambda d: hashed.append(d) or sha256(d)
    )
    raw = read()
    loader = _loader(tmp_path)
    loader._install(raw)
    assert loader.loaded is not None and loader.loaded.table.counts() == {"aws": 2, "gcp": 1}
    assert not [n for n in seen if n.endswith(".csv")] and aws not in hashed and gcp not in hashed


def test_a_column_file_that_does_not_match_falls_back_to_the_csv(tmp_path, monkeypatch):
    seen = _count_inflates(monkeypatch)
    aws = csv_bytes([item("aws", price=1.0), item("aws", price=2.0)])
    # Vouched for by the manifest, but built from another CSV: its header names that one.
    raw = _archived({"aws": aws}, {"aws": csv_bytes([item("aws", price=9.0)])})()
    assert "aws.csv" not in seen
    loader = _loader(tmp_path)
    loader._install(raw)
    assert loader.loaded is not None and loader.loaded.table.counts() == {"aws": 2}
    assert sorted(loader.loaded.table.price.tolist()) == [1.0, 2.0] and "aws.csv" in seen


def test_a_csv_not_matching_its_manifest_is_refused_when_it_is_used(tmp_path):
    aws = csv_bytes([item("aws", price=1.0)])
    gcp = csv_bytes([item("gcp", price=0.5)])
    tampered = csv_bytes([item("aws", price=0.01)])
    raw = _archived(
        {"aws": aws, "gcp": gcp}, {"aws": csv_bytes([item("aws", price=9.0)])}, aws=tampered
    )()
    loader = _loader(tmp_path)
    loader._install(raw)
    assert loader.loaded is not None and loader.loaded.table.counts() == {"gcp": 1}
    assert any("aws.csv does not match the sha256" in p for p in raw.problems)


def _provider_tables(seed: int):
    import random

    rnd = random.Random(seed)
    raw = _raw(
        **{
            p: csv_bytes(
                [
                    item(
                        p,
                        instance_name=rnd.choice(["a", "b", "c"]),
                        location=rnd.choice(["r1", "r2", f"{p}-only"]),
                        price=rnd.choice([0.5, 1.0, 2.0, 3.5, 7.0]),
                        spot=rnd.random() < 0.4,
                        gpu_name=rnd.choice(["H100", "L4", None]),
                        gpu_count=rnd.choice([0, 1, 8]),
                        flags=rnd.choice([[], ["x"]]),
                    )
                    for _ in range(rnd.randint(0, 40))
                ]
            )
            for p in ("aws", "gcp", "runpod")
        }
    )
    return [provider_table(raw, p, None, set()) for p in ("aws", "gcp", "runpod")]


def test_combining_shaped_tables_answers_as_the_combined_table_does():
    """Issue 40: a load combines each provider's shapes and per-row price, location and shape
    number instead of every column of every offer; every answer is the same, in the same
    order, as from the tables combined whole and compacted."""
    from gpuhunt import QueryFilter
    from gpuhunt._internal.load.streamed import shaped
    from gpuhunt._internal.load.tables import combine_freeing, combine_shaped
    from gpuhunt._internal.query import answers

    filters = [
        QueryFilter(),
        QueryFilter(gpu_name=["H100"]),
        QueryFilter(max_price=2.0),
        QueryFilter(spot=True),
        QueryFilter(provider=["gcp"]),
        QueryFilter(min_gpu_count=1, spot=False),
    ]
    for seed in range(12):
        expected = combine_freeing(_provider_tables(seed))
        answers.prepare(expected)
        got = combine_shaped([shaped(t) for t in _provider_tables(seed)])
        answers.prepare(got)
        assert len(got) == len(expected) and got.counts() == expected.counts()
        for f in filters:
            assert answers.items(got, got.select(f)) == answers.items(expected, expected.select(f))


def test_a_shaped_table_keeps_nothing_of_a_column_files_buffer():
    from gpuhunt._internal.formats import columns
    from gpuhunt._internal.load.streamed import shaped

    (aws, *_) = _provider_tables(1)
    packed = bytes(columns.encode(aws, "0" * 64))
    decoded = columns.decode(packed, provider="aws", csv_sha256="0" * 64)
    part = shaped(decoded)
    buffer = np.frombuffer(packed, dtype=np.uint8)
    for array in (part.price, part.location, part.shape_of_row):
        assert not np.shares_memory(array, buffer)
    assert part.price.tolist() == decoded.price.tolist()


def test_a_large_provider_is_let_go_of_before_the_memory_it_freed_is_handed_back(
    tmp_path, monkeypatch
):
    """The trim after a large provider (`load.memory`) comes after its bytes are let go: a
    column file's table is a view on its bytes, which were otherwise still held then."""
    from gpuhunt._internal.load import memory, tables

    aws = csv_bytes([item("aws", price=1.0), item("aws", price=2.0)])
    read = _archived({"aws": aws}, {"aws": aws})
    raw = read()
    seen = []
    monkeypatch.setattr(tables, "TRIM_AFTER_ROWS", 2)
    monkeypatch.setattr(
        memory, "release_free_memory", lambda: seen.append((raw.csvs["aws"], "aws" in raw.columns))
    )
    side = SideWork()
    part = tables.read_shaped(raw, "aws", None, set(), side)
    side.finish()
    assert len(part.price) == 2 and seen == [(b"", False)]


def test_the_side_thread_keeps_no_csv_nor_table_once_its_job_is_done(tmp_path):
    """A worker thread keeps its last task until it takes the next: the CSV it hashed (or the
    table it wrote) must not live on in it, beside the next provider's read."""
    import sys

    side = SideWork()
    data = bytes(bytearray(b"a,b\n" * 1000))
    before = sys.getrefcount(data)
    assert side.hash_beside(data).result() == sha256(data)
    assert sys.getrefcount(data) == before
    piece = bytes(bytearray(b"x" * 100))
    before = sys.getrefcount(piece)
    side.put(DiskCache("http://example.invalid/catalog", tmp_path), [piece], "parsed", "t")
    side.settle()
    assert sys.getrefcount(piece) == before
    side.finish()


def test_a_csv_only_archive_is_parsed_as_it_is_inflated(tmp_path, monkeypatch):
    """Issue 50: a cold load of a CSV-only archive (0.1.x's layout) held the provider's whole
    CSV beside the table being built; it is read a piece at a time, hashed beside, and the
    table kept in the disk cache is the one a whole read gives."""
    from gpuhunt._internal.formats import archive, csv_stream
    from gpuhunt._internal.formats.archive import read_archive, write_archive

    monkeypatch.setattr(csv_stream, "BLOCK", 256)  # many blocks
    aws = csv_bytes([item("aws", price=float(p), instance_name=f"i{p}") for p in range(1, 300)])
    whole: list[str] = []
    real = archive._inflate
    monkeypatch.setattr(
        archive,
        "_inflate",
        lambda z, info, source: whole.append(info.filename) or real(z, info, source),
    )
    for _ in range(2):  # cold, then with the table parsed before in the disk cache
        raw = RawCatalog.of(read_archive(write_archive({"aws": aws}, {})), "v1", "network", "u")
        loader = _loader(tmp_path)
        loader._install(raw)
        assert loader.loaded is not None and loader.loaded.table.counts() == {"aws": 299}
        assert sorted(loader.loaded.table.price.tolist()) == [float(p) for p in range(1, 300)]
    assert "aws.csv" not in whole
    assert list((tmp_path / "cache").rglob(f"aws-{sha256(aws)[:32]}.columns"))
