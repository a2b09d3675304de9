"""Reading a CSV into a `Table` must give exactly what the row-by-row reader gives, bad rows
skipped one by one, whichever way the text is cut."""

import csv
import io

import pytest

from gpuhunt import AcceleratorVendor, CPUArchitecture, QueryFilter
from gpuhunt._internal.formats.csv import ReadStats, csv_bytes, load
from gpuhunt._internal.formats.csv_table import build_table, read, split_lines
from gpuhunt._internal.query import answers
from tests.helpers import item


def test_bad_rows_in_a_large_file_cost_only_themselves():
    good = [item(price=float(k % 50) + 1, instance_name=f"n{k}") for k in range(3000)]
    lines = csv_bytes(good).decode().splitlines()
    for k in range(1, len(lines), 10):
        lines[k] = "garbage,row,NaN?,x"
    stats = ReadStats()
    t = build_table(io.StringIO("\n".join(lines)).read(), provider="aws", stats=stats)
    assert stats.skipped == 300 and len(t) == 2700 and t.skipped == {"aws": 300}


def test_fast_line_splitting_reads_like_csv_reader():
    """Awkward values (commas, quotes, JSON, newlines inside quoted fields, LF or CRLF) read the
    same through the table builder's split-based fast path as through csv.reader."""
    import random

    rnd = random.Random(5)
    values = ["a", "a,b", 'say "hi"', " lead", 'x"y', '{"k": "v,w"}', "{}", "multi\nline"]
    for _ in range(300):
        items = [
            item(
                instance_name=rnd.choice(values),
                location=rnd.choice(values),
                provider_data=rnd.choice([{}, {"a": rnd.choice(values)}, {"b": [1, 2]}]),
                flags=rnd.choice([[], ["f"], ["a", "b"]]),
                price=float(rnd.randint(1, 5)),
            )
            for _ in range(rnd.randint(1, 30))
        ]
        text = csv_bytes(items).decode()
        if rnd.random() < 0.3:
            text = text.replace("\r\n", "\n")
        table = build_table(text, provider="aws")
        expected = sorted(
            load(io.StringIO(text, newline=""), provider="aws"), key=lambda i: i.price
        )
        assert answers.items(table, table.select(QueryFilter())) == expected


def test_rows_sharing_their_attributes_read_like_row_by_row_parsing():
    """The loader converts each distinct tail of a line (everything after the price) once;
    rows that share tails, awkward quoted tails and bad tails must read exactly as the
    row-by-row reader reads them, bad rows skipped one by one."""
    import random

    rnd = random.Random(8)
    tails = [
        dict(gpu_count=0, gpu_name=None, gpu_vendor=None, gpu_memory=None),
        dict(gpu_count=8, gpu_name="H100", gpu_memory=80.0),
        dict(gpu_count=1, gpu_name="MI300X", gpu_vendor=AcceleratorVendor.AMD, gpu_memory=192.0),
        dict(provider_data={"fabrics": ["a,b", 'q"q']}, flags=["x", "y"]),
        dict(cpu_arch=CPUArchitecture.ARM, disk_size=100.0),
    ]
    damaged = 0
    for round_ in range(60):
        items = [
            item(
                instance_name=f"t{rnd.randint(0, 5)}",
                location=rnd.choice(["us-east-1", "eu-west-1"]),
                price=round(rnd.uniform(0.1, 9), 3),
                spot=rnd.random() < 0.5,
                **rnd.choice(tails),
            )
            for _ in range(rnd.randint(1, 60))
        ]
        lines = csv_bytes(items).decode().split("\r\n")
        for _ in range(rnd.randint(0, 3)):  # damage some tails
            k = rnd.randrange(1, len(lines) - 1)
            lines[k] = lines[k].replace(",False,", ",maybe,").replace(",True,", ",-1,", 1)
        text = ("\r\n" if round_ % 2 else "\n").join(lines)
        stats = ReadStats()
        table = build_table(text, provider="aws", stats=stats)
        reference_stats = ReadStats()
        expected = sorted(
            load(io.StringIO(text, newline=""), provider="aws", stats=reference_stats),
            key=lambda i: i.price,
        )
        assert answers.items(table, table.select(QueryFilter())) == expected
        assert stats.skipped == reference_stats.skipped
        damaged += stats.skipped
    assert damaged > 10  # the damage did make bad rows


@pytest.mark.parametrize("strategy", ["lines", "chunks", "careful"])
def test_each_strategy_reads_like_the_row_by_row_reader(strategy):
    """Every way of cutting the text, forced on the same awkward files, bad rows included."""
    import random

    rnd = random.Random(11)
    values = ["a", "a,b", 'say "hi"', "{}", "x y"]
    for round_ in range(40):
        items = [
            item(
                instance_name=rnd.choice(values),
                location=rnd.choice(["r1", "r2,b"]),
                price=float(rnd.randint(1, 9)),
                gpu_count=rnd.choice([0, 1, 8]),
                provider_data=rnd.choice([{}, {"k": rnd.choice(values)}]),
                flags=rnd.choice([[], ["f"], ["a", "b"]]),
            )
            for _ in range(rnd.randint(1, 40))
        ]
        lines = csv_bytes(items).decode().split("\r\n")
        for _ in range(rnd.randint(0, 2)):
            k = rnd.randrange(1, len(lines) - 1)
            lines[k] = lines[k].replace(",False,", ",nope,")
        text = ("\n" if round_ % 2 else "\r\n").join(lines)
        if strategy == "lines":
            assert split_lines(text) is not None
        stats, reference_stats = ReadStats(), ReadStats()
        table = read(text, "aws", stats, strategy=strategy)
        expected = sorted(
            load(io.StringIO(text, newline=""), provider="aws", stats=reference_stats),
            key=lambda i: i.price,
        )
        assert answers.items(table, table.select(QueryFilter())) == expected
        assert (stats.rows, stats.skipped) == (reference_stats.rows, reference_stats.skipped)


def test_text_with_a_line_break_inside_a_field_is_not_split_into_lines():
    text = csv_bytes([item(instance_name="two\nlines"), item(price=2.0)]).decode()
    assert split_lines(text) is None
    table = build_table(text, provider="aws")
    assert [i.instance_name for i in answers.items(table, table.select(QueryFilter()))] == [
        "two\nlines",
        "x1",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a",
        "a\n",
        "a\nb",
        "a\r\nb\r\n",
        "\n\n",
        "a\rb\nc",
        "\r\r\n\n\r",
        'x,"y\nz"\n',
        "é\n\x00\n",
    ],
)
def test_lines_are_cut_as_stringio_cuts_them(text):
    """The csv reader is fed `_lines` instead of `io.StringIO` (which copies the whole text);
    line numbers in skip reports depend on both cutting the same way."""
    from gpuhunt._internal.formats.csv_table import _lines

    assert list(_lines(text)) == list(io.StringIO(text, newline=""))


def test_mixed_line_endings_are_read_as_the_row_reader_reads_them():
    lines = csv_bytes([item(price=1.0), item(price=2.0), item(price=3.0)]).decode().split("\r\n")
    for text in (
        "\r\n".join(lines[:2]) + "\n" + "\n".join(lines[2:]),  # CRLF, then LF
        "\n".join(lines[:2]) + "\r\n" + "\r\n".join(lines[2:]),  # LF header, CRLF rows
        "\r\n".join(lines[:3]) + "\r" + "\r\n".join(lines[3:]),  # a lone CR: not by lines
    ):
        split = split_lines(text)
        assert (split is None) == ("\r" in text.replace("\r\n", ""))
        table = build_table(text, provider="aws")
        expected = sorted(
            load(io.StringIO(text, newline=""), provider="aws"), key=lambda i: i.price
        )
        assert answers.items(table, table.select(QueryFilter())) == expected


# ------------------------------------------------------- one bad line costs one row (issue 40)


def _with_stray_quote(n: int = 2000, at: int = 150) -> str:
    text = csv_bytes([item(price=float(i + 1), instance_name=f"i{i}") for i in range(n)]).decode()
    lines = text.split("\r\n")
    lines[at] = '"' + lines[at]  # a quote opening the row's first field, never closed
    return "\r\n".join(lines)


@pytest.mark.parametrize("reader", ["table", "rows"])
def test_a_stray_quote_costs_one_counted_row(reader):
    text = _with_stray_quote()
    stats = ReadStats()
    if reader == "table":
        kept = len(build_table(text, provider="aws", stats=stats).price)
    else:
        kept = len(list(load(io.StringIO(text, newline=""), provider="aws", stats=stats)))
    assert (kept, stats.rows, stats.skipped) == (1999, 1999, 1)
    assert stats.errors[0].startswith("line 151: ")


def test_a_stray_quote_in_a_file_with_rows_over_several_lines_costs_one_row():
    rows = [item(price=float(i + 1), instance_name=f"i{i}") for i in range(50)]
    text = csv_bytes(rows).decode()
    text = text.replace("\r\ni10,", '\r\n"i10\nx",')  # a quoted field over two lines: good
    text = text.replace("\r\ni30,", '\r\n"i30,')  # a stray quote: bad
    stats = ReadStats()
    table = build_table(text, provider="aws", stats=stats)
    assert (len(table.price), stats.skipped) == (49, 1)
    assert len(list(load(io.StringIO(text, newline=""), provider="aws"))) == 49


@pytest.mark.parametrize("reader", ["table", "rows"])
def test_a_utf8_byte_order_mark_is_accepted(reader):
    text = "\ufeff" + csv_bytes([item(price=1.0), item(price=2.0)]).decode()
    stats = ReadStats()
    if reader == "table":
        assert len(build_table(text, provider="aws", stats=stats).price) == 2
    else:
        assert len(list(load(io.StringIO(text, newline=""), provider="aws", stats=stats))) == 2
    assert stats.skipped == 0


# ----------------------------------- read a block of lines at a time (issue 40's memory target)


def _awkward_files():
    """Files of every shape the readers distinguish: LF, CRLF and mixed endings, quoted and
    multi-line fields, bad rows, a stray quote, a byte-order mark, the published order or not."""
    import random

    rnd = random.Random(3)
    values = ["a", "a,b", 'say "hi"', "{}", "x y"]
    for round_ in range(24):
        items = [
            item(
                instance_name=rnd.choice(values if round_ % 3 == 0 else ["t1", "t2", "t3"]),
                location=rnd.choice(["r1", "r2"]),
                price=float(rnd.randint(1, 90)),
                gpu_count=rnd.choice([0, 1, 8]),
                gpu_name=rnd.choice(["H100", "A100", "L4"]),
                flags=rnd.choice([[], ["f"]]),
            )
            for _ in range(rnd.randint(30, 80))
        ]
        lines = csv_bytes(items).decode().split("\r\n")
        for _ in range(rnd.randint(0, 3)):
            k = rnd.randrange(1, len(lines) - 1)
            lines[k] = lines[k].replace(",False,", ",nope,")
        if round_ % 4 == 1:
            header = lines[0].split(",")  # not the published order: no factoring
            lines = [
                ",".join(reversed(next(csv.reader([line])))) if line else line for line in lines
            ]
            assert lines[0] == ",".join(reversed(header))
        text = ("\n", "\r\n")[round_ % 2].join(lines)
        if round_ % 6 == 2:
            text = text.replace("\r\n", "\n", 7)  # mixed endings
        if round_ % 5 == 3:
            text = "\ufeff" + text
        yield text
    yield _with_stray_quote(300, 40)
    good = csv_bytes([item(price=float(p), instance_name=f"é{p}") for p in range(1, 30)]).decode()
    yield good  # UTF-8 beyond ASCII
    yield good.replace("é3,", "\udcff3,")  # a byte that is not UTF-8 (as surrogateescape reads it)
    yield good.replace("é5,", "\x005,")  # a NUL byte
    yield good.replace("instance_name,", '"instance_name",', 1)  # a quoted header
    yield csv_bytes([item(instance_name="two\nlines"), *[item(price=float(p)) for p in range(40)]])


def test_reading_a_block_of_lines_at_a_time_gives_the_whole_file_reading(monkeypatch):
    """A file read a few lines at a time gives the same offers, the same rows counted, and
    the same bad rows skipped (with the same line numbers) as read in one block."""
    from gpuhunt._internal.formats import csv_table

    def read_all(text):
        stats = ReadStats()
        table = build_table(text, provider="aws", stats=stats)
        return answers.items(table, table.select(QueryFilter())), (
            stats.rows,
            stats.skipped,
            stats.errors,
        )

    files = [t.decode() if isinstance(t, bytes) else t for t in _awkward_files()]
    whole = [read_all(text) for text in files]
    monkeypatch.setattr(csv_table, "_CHUNK", 3)
    blocks = [read_all(text) for text in files]
    # ... and from the bytes, decoded a block at a time (the loader's way):
    as_bytes = [read_all(text.encode("utf-8", "surrogateescape")) for text in files]
    assert sum(counts[1] for _, counts in whole) > 5  # bad rows were there to count
    for one, other, third in zip(whole, blocks, as_bytes):
        assert one == other == third
    # ... read from the bytes indeed (most files; a few need the whole text):
    read_as_bytes = [csv_table._read_bytes(t.encode(), "aws", ReadStats()) for t in files[:12]]
    assert sum(table is not None for table in read_as_bytes) >= 6
    # ... and in several blocks indeed:
    assert len(list(csv_table.body_lines(files[0].replace("\r\n", "\n")))) > 10


def test_columns_filled_in_place_build_what_joined_chunks_build():
    """A builder told how many rows to expect fills one array a column; more rows than that
    (a miscount) carry on in chunks. The table is the same either way."""
    import numpy as np

    from gpuhunt._internal.formats.table_builder import TableBuilder
    from gpuhunt._internal.query.table import COLUMNS

    text = csv_bytes(
        [item(price=float(p), instance_name=f"i{p % 2}", gpu_count=p % 3) for p in (5, 1, 4, 2, 3)]
    ).decode()
    header, *rows = list(csv.reader(text.splitlines()))

    def columns(part):
        return {name: [r[i] for r in part] for i, name in enumerate(header)}

    built = []
    for capacity in (0, 2, 4, 5, 100):
        builder = TableBuilder("aws", capacity)
        builder.add_fast(columns(rows[:3]), 3)
        builder.add_fast(columns(rows[3:]), 2)
        built.append(builder.build())
    for table in built[1:]:
        for name in COLUMNS:
            got, want = getattr(table, name), getattr(built[0], name)
            assert np.array_equal(got, want, equal_nan=True) and got.dtype == want.dtype, name
    assert built[0].price.tolist() == [1, 2, 3, 4, 5]


# ---------------------------------- parsed as it is inflated (issue 50, `formats.csv_stream`)


def _read(table, stats):
    return answers.items(table, table.select(QueryFilter())), (
        stats.rows,
        stats.skipped,
        stats.errors,
    )


def _pieces(data: bytes, size: int):
    for at in range(0, len(data), size):
        yield data[at : at + size]


@pytest.mark.parametrize("block, piece", [(64, 7), (200, 50), (1 << 20, 1 << 16)])
def test_a_file_read_a_block_at_a_time_from_pieces_reads_as_the_whole_bytes(
    monkeypatch, block, piece
):
    """The same offers, rows counted and bad rows skipped (with the same line numbers), for
    every shape of file the readers tell apart: the rarer ones by the whole file's reading."""
    from gpuhunt._internal.formats import csv_stream
    from gpuhunt._internal.formats.csv_stream import build_table_streamed

    files = [
        t if isinstance(t, bytes) else t.encode("utf-8", "surrogateescape")
        for t in _awkward_files()
    ]
    monkeypatch.setattr(csv_stream, "BLOCK", block)
    wholes = 0
    for data in files:
        stats = ReadStats()
        whole = _read(build_table(data, provider="aws", stats=stats), stats)
        asked: list[int] = []

        def again(data=data, asked=asked):
            asked.append(1)
            return data

        stats = ReadStats()
        table = build_table_streamed(
            _pieces(data, piece), provider="aws", size=len(data), whole=again, stats=stats
        )
        assert _read(table, stats) == whole
        wholes += bool(asked)
    # Most files are read as a stream; the rarer ones (a NUL, bytes not UTF-8, a quoted header,
    # a field over a line break) by the whole file.
    assert 4 <= wholes <= len(files) // 2
