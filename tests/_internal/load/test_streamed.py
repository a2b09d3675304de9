"""A large CSV-only provider read into shapes a part at a time gives the offers a whole read
gives (issue 50's streaming load)."""

from __future__ import annotations

from gpuhunt import QueryFilter
from gpuhunt._internal.formats import csv_stream
from gpuhunt._internal.formats.archive import read_archive, write_archive
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.formats.table_builder import TableBuilder
from gpuhunt._internal.load import streamed, tables
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.query import answers
from tests.helpers import item


def _raw(csv: bytes, manifest: dict | None = None) -> RawCatalog:
    return RawCatalog.of(read_archive(write_archive({"aws": csv}, manifest or {})), "v1", "n", "u")


def _offers(part: streamed.Shaped):
    table = tables.combine_shaped([part])
    return answers.items(table, table.select(QueryFilter()))


def _csv(n: int = 700, bad: bool = False) -> bytes:
    rows = [
        item(
            "aws",
            price=float(1 + (k * 37) % 50),  # equal prices in many parts: their order is kept
            instance_name=f"t{k % 9}",
            location=f"r{k % 4}",
            gpu_count=(0, 1, 8)[k % 3],
            flags=["f"] if k % 5 == 0 else [],
        )
        for k in range(n)
    ]
    text = csv_bytes(rows)
    if bad:
        lines = text.split(b"\r\n")
        for k in (5, 300, 650):
            lines[k] = lines[k].replace(b",False,", b",nope,")
        text = b"\r\n".join(lines)
    return text


def test_parts_read_into_shapes_give_what_the_whole_table_gives(monkeypatch):
    monkeypatch.setattr(streamed, "MIN_BYTES", 0)
    monkeypatch.setattr(csv_stream, "BLOCK", 2000)
    monkeypatch.setattr(csv_stream, "PART_ROWS", 50)
    taken: list[int] = []
    real = TableBuilder.take

    def counting(self, capacity):
        taken.append(self.rows)
        return real(self, capacity)

    monkeypatch.setattr(TableBuilder, "take", counting)
    stamped = {"providers": {"aws": {"collected_at": "2026-12-01T00:00:00Z"}}}
    for csv, manifest in ((_csv(), None), (_csv(bad=True), None), (_csv(), stamped)):
        taken.clear()
        part = streamed.read_in_parts(_raw(csv, manifest), "aws")
        assert part is not None and len(taken) > 5 and max(taken) < 100  # in parts indeed
        whole = streamed.shaped(build_table(csv, provider="aws"))
        if manifest:
            from gpuhunt._internal import observed

            observed.stamp_loaded(whole.shapes, manifest, "aws")
        assert _offers(part) == _offers(whole)
        assert len(part.shapes) == len(whole.shapes)  # a shape met in several parts, once
        assert part.shapes.skipped == whole.shapes.skipped


def test_a_file_that_needs_its_whole_text_is_read_whole_and_the_parts_dropped(monkeypatch):
    monkeypatch.setattr(streamed, "MIN_BYTES", 0)
    monkeypatch.setattr(csv_stream, "BLOCK", 2000)
    monkeypatch.setattr(csv_stream, "PART_ROWS", 50)
    csv = _csv()
    late = csv.rfind(b"t3,")  # a NUL byte far into the file, after several parts were given
    csv = csv[:late] + b"\x00" + csv[late + 1 :]
    part = streamed.read_in_parts(_raw(csv), "aws")
    assert part is not None
    assert _offers(part) == _offers(streamed.shaped(build_table(csv, provider="aws")))


def test_small_csvs_and_column_files_keep_the_whole_read(monkeypatch):
    assert streamed.read_in_parts(_raw(_csv()), "aws") is None  # under MIN_BYTES
    monkeypatch.setattr(streamed, "MIN_BYTES", 0)
    raw = _raw(_csv())
    raw.csvs["aws"]  # inflated already: nothing to stream
    assert streamed.read_in_parts(raw, "aws") is None
