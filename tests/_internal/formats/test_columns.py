"""Column files: the same offers as parsing the CSV, or a ValueError, never anything else."""

import json
import random
import struct

import numpy as np
import pytest

from gpuhunt import AcceleratorVendor, CPUArchitecture, QueryFilter
from gpuhunt._internal.formats import columns
from gpuhunt._internal.formats.archive import sha256
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.query import answers
from gpuhunt._internal.query.masks import VENDORS
from gpuhunt._internal.query.table import STORED_COLUMNS, STRING_LISTS, Table
from tests.helpers import item

EVERYTHING = QueryFilter()


def random_catalog(rnd: random.Random, n: int) -> bytes:
    gpus = [("A100", 80.0), ("H100", 80.0), ("MI300X", 192.0), ("v5p", None)]
    items = []
    for k in range(n):
        count = rnd.choice([0, 1, 8])
        name, mem = rnd.choice(gpus)
        vendor = (
            AcceleratorVendor.AMD
            if name.startswith("MI")
            else AcceleratorVendor.GOOGLE
            if name.startswith("v5")
            else AcceleratorVendor.NVIDIA
        )
        items.append(
            item(
                instance_name=f"type-{k % 7}",
                location=rnd.choice(["us-east-1", "eu-west-1", 'odd,"name"']),
                price=round(rnd.uniform(0.01, 40), 4),
                cpu=rnd.choice([2, 8, 96]),
                memory=rnd.choice([4.0, 32.5]),
                gpu_count=count,
                gpu_name=name if count else None,
                gpu_memory=mem if count else None,
                gpu_vendor=vendor if count else None,
                spot=rnd.random() < 0.5,
                disk_size=rnd.choice([None, 100.0]),
                flags=rnd.choice([[], ["oci-spot"], ["a", "b"]]),
                cpu_arch=rnd.choice(list(CPUArchitecture)),
                provider_data=rnd.choice([{}, {"fabrics": ["f1"]}, {"k": "v,w"}]),
            )
        )
    return csv_bytes(items)


def test_round_trip_gives_the_offers_the_csv_parses_to():
    rnd = random.Random(3)
    for n in (0, 1, 5, 300):
        csv = random_catalog(rnd, n)
        parsed = build_table(csv.decode(), provider="aws")
        packed = columns.encode(parsed, sha256(csv))
        loaded = columns.decode(packed, provider="aws", csv_sha256=sha256(csv))
        assert answers.items(loaded, loaded.select(EVERYTHING)) == answers.items(
            parsed, parsed.select(EVERYTHING)
        )
        q = QueryFilter(min_gpu_count=1, max_price=20, gpu_vendor=AcceleratorVendor.NVIDIA)
        assert answers.items(loaded, loaded.select(q)) == answers.items(parsed, parsed.select(q))
        assert columns.encode(parsed, sha256(csv)) == packed  # deterministic


def test_skipped_rows_are_remembered():
    csv = csv_bytes([item(), item(price=2.0)]) + b"bad,row\n"
    parsed = build_table(csv.decode(), provider="aws")
    loaded = columns.decode(
        columns.encode(parsed, sha256(csv)), provider="aws", csv_sha256=sha256(csv)
    )
    assert len(loaded) == 2 and loaded.skipped == {"aws": 1}


def _packed() -> tuple[bytes, str]:
    csv = random_catalog(random.Random(1), 50)
    sha = sha256(csv)
    return columns.encode(build_table(csv.decode(), provider="aws"), sha), sha


def _with_header(packed: bytes, change) -> bytes:
    (size,) = struct.unpack_from("<I", packed, 16)
    header = json.loads(packed[20 : 20 + size])
    change(header)
    head = json.dumps(header).encode()
    head += b" " * (-(20 + len(head)) % 8)
    return packed[:16] + struct.pack("<I", len(head)) + head + packed[20 + size :]


def _set_column(name, value):
    def change(header):
        header["columns"][name] = value

    return change


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda h: h.update(format=99), "unknown column file format"),
        (lambda h: h.update(provider="gcp"), "not 'aws'"),
        (lambda h: h.update(csv_sha256="0" * 64), "another CSV"),
        (lambda h: h.update(rows=10**6), "runs past the end"),
        (lambda h: h["strings"].update(locations=[]), "codes outside its list"),
        (lambda h: h["strings"].update(gpu_names=[1, 2]), "not strings"),
        (lambda h: h["strings"].update(provider_datas=["[1]"]), "JSON object"),
        (lambda h: h.update(vendors=["nvidia", "quantum"]), "does not know"),
        (lambda h: h.update(skipped=-1), "skipped"),
        (lambda h: h.update(columns="x"), "no column layout"),
        (lambda h: h.update(strings=[]), "no string lists"),
        (_set_column("price", {"dtype": "<f4", "offset": 0}), "dtype"),
        (_set_column("price", {"dtype": "<f8", "offset": 10**9}), "runs past the end"),
        (_set_column("cpu", None), "column cpu is missing"),
    ],
)
def test_a_bad_header_is_a_value_error_naming_it(change, message):
    packed, sha = _packed()
    with pytest.raises(ValueError, match=message):
        columns.decode(_with_header(packed, change), provider="aws", csv_sha256=sha)


def test_bad_column_values_are_refused():
    packed, sha = _packed()
    table = columns.decode(packed, provider="aws", csv_sha256=sha)
    for name, value, message in [
        ("price", np.inf, "finite"),
        ("gpu_count", -1, "negative"),
        ("gpu_memory", -np.inf, "infinite"),
    ]:
        broken = Table(
            **{
                k: getattr(table, k).copy()
                for k in ["providers", "provider", *STORED_COLUMNS, *STRING_LISTS.values()]
                if k != "providers"
            },
            providers=["aws"],
        )
        getattr(broken, name)[-1] = value
        with pytest.raises(ValueError, match=message):
            columns.decode(columns.encode(broken, sha), provider="aws", csv_sha256=sha)
    shuffled = bytearray(packed)
    start = packed.index(b"GPUHUNT-COLUMNS\n") + 20 + struct.unpack_from("<I", packed, 16)[0]
    offset = json.loads(packed[20:start])["columns"]["price"]["offset"]
    first = packed[start + offset : start + offset + 8]
    shuffled[start + offset : start + offset + 8] = struct.pack("<d", 1e9)  # cheapest is dearest
    assert first != shuffled[start + offset : start + offset + 8]
    with pytest.raises(ValueError, match="price order"):
        columns.decode(bytes(shuffled), provider="aws", csv_sha256=sha)


def test_codes_are_mapped_by_vendor_name_not_position():
    packed, sha = _packed()
    table = columns.decode(packed, provider="aws", csv_sha256=sha)
    reordered = _with_header(packed, lambda h: h.update(vendors=list(reversed(h["vendors"]))))
    swapped = columns.decode(reordered, provider="aws", csv_sha256=sha)
    names = [v.value for v in VENDORS]
    for a, b in zip(
        answers.items(table, table.select(EVERYTHING)),
        answers.items(swapped, swapped.select(EVERYTHING)),
    ):
        if a.gpu_vendor is None:
            assert b.gpu_vendor is None
        else:
            assert b.gpu_vendor.value == names[len(names) - 1 - names.index(a.gpu_vendor.value)]


def test_random_damage_is_only_ever_a_value_error_or_a_valid_table():
    packed, sha = _packed()
    rnd = random.Random(11)
    for _ in range(2000):
        damaged = bytearray(packed)
        how = rnd.random()
        if how < 0.3:
            del damaged[rnd.randrange(len(damaged)) :]
        else:
            for _ in range(rnd.randint(1, 4)):
                damaged[rnd.randrange(len(damaged))] = rnd.randrange(256)
        try:
            table = columns.decode(bytes(damaged), provider="aws", csv_sha256=sha)
        except ValueError:
            continue
        # Survived the checks: then every offer must build and be a well-formed offer.
        for offer in answers.items(table, table.select(EVERYTHING)):
            assert offer.price == offer.price and offer.gpu_count >= 0


def test_a_column_file_written_in_pieces_is_the_packed_one():
    """The loader writes parsed tables from their own columns (`encode_pieces`, no packed copy
    at a load's peak); joined, the pieces are `encode`'s bytes, whatever the column sizes."""
    from gpuhunt._internal.formats.columns import encode, encode_pieces
    from gpuhunt._internal.formats.csv import csv_bytes
    from gpuhunt._internal.formats.csv_table import build_table
    from tests.helpers import item

    for n in (1, 2, 3, 7):
        table = build_table(
            csv_bytes([item(price=float(k + 1), instance_name=f"i{k}") for k in range(n)]),
            provider="aws",
        )
        pieces = encode_pieces(table, "a" * 64)
        assert b"".join(bytes(p) for p in pieces) == bytes(encode(table, "a" * 64))


def test_a_format_1_file_has_the_librarys_keys_moved_out_of_provider_data():
    # Column files published before the own columns held provider_data texts that may carry the
    # library's keys; in a format-2 file the same text is the provider's own and stays.
    data = csv_bytes([item(provider_data={"vm_specs": {}, "available": True})])
    sha = sha256(data)
    packed = columns.encode(build_table(data, provider="aws"), sha)
    (own,) = answers.items(columns.decode(packed, provider="aws", csv_sha256=sha), np.arange(1))
    assert own.provider_data == {"vm_specs": {}, "available": True} and own.available is None
    old = _with_header(packed, lambda h: h.update(format=1))
    (moved,) = answers.items(columns.decode(old, provider="aws", csv_sha256=sha), np.arange(1))
    assert moved.provider_data == {"vm_specs": {}} and moved.available is True
