"""The observations of one collection (pure: CSV bytes in, columns out) and their Parquet file."""

from __future__ import annotations

import datetime as dt
import io

from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.history import observations
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem

AT = dt.datetime(2026, 12, 2, 6, 0, tzinfo=dt.timezone.utc)


def _item(location: str, price: float, data: dict[str, object], disk: float = 100.0):
    # A boolean reading is the offer's `available`; anything else stays the provider's own.
    data = dict(data)
    available = data.pop("available") if isinstance(data.get("available"), bool) else None
    return CatalogItem(
        provider="lambdalabs",
        instance_name="gpu_1x_h100_sxm5",
        location=location,
        price=price,
        cpu=26,
        memory=225.0,
        gpu_count=1,
        gpu_name="H100",
        gpu_memory=80.0,
        spot=False,
        disk_size=disk,
        gpu_vendor=AcceleratorVendor.NVIDIA,
        provider_data=data,
        available=available,  # type: ignore[arg-type]
    )


def test_one_observation_per_offer_key_with_its_reading():
    csv = csv_bytes(
        [
            _item("us-east-1", 2.99, {"available": True}),
            _item("us-west-1", 2.99, {"available": False}),
            _item("eu-west-1", 2.99, {}),
            # One key twice (another disk): the cheaper price, available if any row is.
            _item("me-west-1", 3.50, {"available": False}),
            _item("me-west-1", 3.20, {"available": True}, disk=200.0),
            _item("ap-south-1", 2.50, {"available": "yes"}),  # not a bool: no reading
            _item("ap-east-1", 2.00, {"available": True}),  # a True reading is kept
            _item("ap-east-1", 2.10, {"available": False}, disk=200.0),
        ]
    )
    got = observations.readings(csv, "lambdalabs", "20261202-06", AT)
    by_location = dict(zip(got.columns["location"], got.columns["available"]))
    assert by_location == {
        "ap-east-1": True,
        "ap-south-1": None,
        "eu-west-1": None,
        "me-west-1": True,
        "us-east-1": True,
        "us-west-1": False,
    }
    prices = dict(zip(got.columns["location"], got.columns["price"]))
    assert prices["me-west-1"] == 3.20
    assert (got.rows, got.reported, got.available) == (6, 4, 3)
    assert got.path == ("observations/date=2026-12-02/provider=lambdalabs/part-20261202-06.parquet")
    assert set(got.columns) == set(observations.COLUMNS)


def test_the_parquet_file_holds_the_columns_in_the_documented_schema():
    import pyarrow.parquet as pq

    csv = csv_bytes([_item("us-east-1", 2.99, {"available": True}), _item("x", 1.0, {})])
    got = observations.readings(csv, "lambdalabs", "20261202-06", AT)
    table = pq.read_table(io.BytesIO(observations.to_parquet(got)))
    assert table.column_names == list(observations.COLUMNS)
    types = dict(zip(table.column_names, map(str, table.schema.types)))
    # Parquet has no seconds unit: the seconds written come back as milliseconds.
    assert types.pop("observed_at") == "timestamp[ms, tz=UTC]"
    assert types == {k: v for k, v in observations.COLUMNS.items() if k != "observed_at"}
    meta = table.schema.metadata or {}
    assert meta[b"gpuhunt_observations_format"] == str(observations.FORMAT_VERSION).encode()
    assert table.column("available").to_pylist() == [True, None]
    assert table.column("observed_at").to_pylist() == [AT, AT]


def test_only_fresh_collections_of_this_version_are_observations():
    csv = csv_bytes([_item("us-east-1", 2.99, {"available": True})])
    entries = {
        "lambdalabs": {
            "status": "fresh",
            "from_version": "V2",
            "collected_at": "2026-12-02T06:00:00+00:00",
        },
        "aws": {
            "status": "carried_over",
            "from_version": "V1",
            "collected_at": "2026-12-01T00:00:00+00:00",
        },
    }
    got = observations.for_build(
        entries, {"lambdalabs": csv, "aws": csv}, "V2", "2026-12-02T06:10:00+00:00"
    )
    assert list(got) == ["lambdalabs"] and got["lambdalabs"].observed_at == AT


def test_a_provider_that_stops_reporting_is_noted():
    before = {"from_version": "V1", "availability": {"reported": 56}}
    assert "56 offers" in (observations.availability_note("lambdalabs", 0, before) or "")
    assert observations.availability_note("lambdalabs", 3, before) is None
    assert observations.availability_note("aws", 0, {"availability": {"reported": 0}}) is None
    assert observations.availability_note("aws", 0, None) is None
