"""The fast query path must answer exactly what `matches` answers."""

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuhunt import AcceleratorVendor, CPUArchitecture, QueryFilter, matches
from gpuhunt._internal import index, storage
from tests.helpers import item

GPUS = [
    ("A100", AcceleratorVendor.NVIDIA, 40.0),
    ("A100", AcceleratorVendor.NVIDIA, 80.0),
    ("H100", AcceleratorVendor.NVIDIA, 80.0),
    ("MI300X", AcceleratorVendor.AMD, 192.0),
    ("v5litepod", AcceleratorVendor.GOOGLE, None),
    ("NewGPU", AcceleratorVendor.NVIDIA, 12.0),
    ("T4", AcceleratorVendor.NVIDIA, None),
]


@st.composite
def offers(draw):
    gpu_count = draw(st.sampled_from([0, 0, 1, 2, 8]))
    name, vendor, mem = draw(st.sampled_from(GPUS))
    return item(
        provider=draw(st.sampled_from(["aws", "aws", "gcp", "runpod"])),
        instance_name=draw(st.sampled_from(["a", "b", "c"])),
        location=draw(st.sampled_from(["r1", "r2"])),
        price=draw(st.sampled_from([0.5, 1.0, 1.0, 2.5, 10.0])),
        cpu=draw(st.sampled_from([2, 8, 96])),
        memory=draw(st.sampled_from([4.0, 32.0, 1152.0])),
        gpu_count=gpu_count,
        gpu_name=name if gpu_count else None,
        gpu_vendor=vendor if gpu_count else None,
        gpu_memory=mem if gpu_count else None,
        spot=draw(st.booleans()),
        disk_size=draw(st.sampled_from([None, 50.0, 200.0])),
        flags=draw(st.sampled_from([[], ["oci-spot"], ["a", "b"]])),
        cpu_arch=draw(st.sampled_from(list(CPUArchitecture))),
    )


def opt(values):
    return st.one_of(st.none(), st.sampled_from(values))


filters = st.builds(
    QueryFilter,
    cpu_arch=opt(list(CPUArchitecture)),
    min_cpu=opt([2, 8]),
    max_cpu=opt([8, 96]),
    min_memory=opt([32.0]),
    max_memory=opt([32.0, 100.0]),
    min_gpu_count=opt([0, 1, 2]),
    max_gpu_count=opt([0, 1, 8]),
    gpu_vendor=opt(list(AcceleratorVendor)),
    gpu_name=opt([["a100"], ["H100", "MI300X"], ["newgpu"], []]),
    min_gpu_memory=opt([0, 40, 80]),
    max_gpu_memory=opt([0, 80]),
    min_total_gpu_memory=opt([0, 80, 320]),
    max_total_gpu_memory=opt([80, 640]),
    min_disk_size=opt([100]),
    max_disk_size=opt([100]),
    min_price=opt([1.0]),
    max_price=opt([1.0, 2.5]),
    min_compute_capability=opt([(8, 0), (9, 0)]),
    max_compute_capability=opt([(8, 0), (8, 9)]),
    spot=opt([True, False]),
    allowed_flags=opt([[], ["oci-spot"], ["a", "b", "oci-spot"]]),
)


PROVIDER_ORDER = ["aws", "gcp", "runpod"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(offers(), max_size=40),
    filters,
    st.one_of(st.none(), st.sets(st.sampled_from(PROVIDER_ORDER))),
)
def test_select_equals_matches(items, q, providers):
    """Per-provider tables combined into one answer what `matches` answers, in price order
    with ties in provider order, then file order."""
    tables = [
        index.build_table(storage.dumps([i for i in items if i.provider == p]).decode(), provider=p)
        for p in PROVIDER_ORDER
    ]
    table = index.combine(tables)
    got = table.items(table.select(q, providers))
    expected = sorted(
        (i for i in items if matches(i, q) and (providers is None or i.provider in providers)),
        key=lambda i: (i.price, PROVIDER_ORDER.index(i.provider)),
    )  # stable: file order within a provider
    assert got == expected
    assert list(index.Offers(table, table.select(q, providers))) == expected


def test_offers_sequence_behaves_like_a_list():
    items = [item(price=p, instance_name=f"i{p}") for p in (3.0, 1.0, 2.0)]
    t = index.build_table(storage.dumps(items).decode(), provider="aws")
    offers = index.Offers(t, t.select(QueryFilter()))
    as_list = sorted(items, key=lambda i: i.price)
    assert len(offers) == 3 and list(offers) == as_list and offers == as_list
    assert offers[0].price == 1.0 and offers[-1].price == 3.0 and offers[1:] == as_list[1:]
    assert offers + [items[0]] == as_list + [items[0]]
    assert offers[0] is offers[0]  # built once
    for cut in (slice(None, None, -1), slice(-2, None), slice(2, 0, -1), slice(5, 9)):
        assert offers[cut] == as_list[cut]
        assert index.Offers.from_items(as_list)[cut] == as_list[cut]


def test_combined_tables_order_by_price_then_provider():
    a = index.build_table(
        storage.dumps([item(price=1.0), item(price=3.0)]).decode(), provider="aws"
    )
    g = index.build_table(
        storage.dumps([item("gcp", price=1.0), item("gcp", price=2.0)]).decode(), provider="gcp"
    )
    both = index.combine([a, g])
    result = index.Offers(both, both.select(QueryFilter()))
    assert [(i.provider, i.price) for i in result] == [
        ("aws", 1.0),
        ("gcp", 1.0),
        ("gcp", 2.0),
        ("aws", 3.0),
    ]
    assert [i.provider for i in index.Offers(both, both.select(QueryFilter(), ["gcp"]))] == [
        "gcp",
        "gcp",
    ]
    assert both.counts() == {"aws": 2, "gcp": 2}
    part = both.part("gcp")
    assert part is not None and part.items(part.select(QueryFilter())) == [
        item("gcp", price=1.0),
        item("gcp", price=2.0),
    ]


def test_bad_rows_in_a_large_file_cost_only_themselves():
    good = [item(price=float(k % 50) + 1, instance_name=f"n{k}") for k in range(3000)]
    lines = storage.dumps(good).decode().splitlines()
    for k in range(1, len(lines), 10):
        lines[k] = "garbage,row,NaN?,x"
    stats = storage.ReadStats()
    t = index.build_table(io.StringIO("\n".join(lines)).read(), provider="aws", stats=stats)
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
        text = storage.dumps(items).decode()
        if rnd.random() < 0.3:
            text = text.replace("\r\n", "\n")
        table = index.build_table(text, provider="aws")
        expected = sorted(
            storage.load(io.StringIO(text, newline=""), provider="aws"), key=lambda i: i.price
        )
        assert table.items(table.select(QueryFilter())) == expected


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
        lines = storage.dumps(items).decode().split("\r\n")
        for _ in range(rnd.randint(0, 3)):  # damage some tails
            k = rnd.randrange(1, len(lines) - 1)
            lines[k] = lines[k].replace(",False,", ",maybe,").replace(",True,", ",-1,", 1)
        text = ("\r\n" if round_ % 2 else "\n").join(lines)
        stats = storage.ReadStats()
        table = index.build_table(text, provider="aws", stats=stats)
        reference_stats = storage.ReadStats()
        expected = sorted(
            storage.load(io.StringIO(text, newline=""), provider="aws", stats=reference_stats),
            key=lambda i: i.price,
        )
        assert table.items(table.select(QueryFilter())) == expected
        assert stats.skipped == reference_stats.skipped
        damaged += stats.skipped
    assert damaged > 10  # the damage did make bad rows
