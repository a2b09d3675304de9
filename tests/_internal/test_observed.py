"""`CatalogItem.observed_at` on every offer: from the manifest's `collected_at` for a
published catalog (through the real loader), from the answer time for an online provider;
`provider_data` never touched."""

from __future__ import annotations

import datetime as dt
import os

from gpuhunt import Catalog
from gpuhunt._internal import observed, offer_spec
from gpuhunt._internal.formats.csv import write_csv_file
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, QueryFilter
from gpuhunt._internal.query import online
from gpuhunt.providers.base import AbstractProvider
from tests._internal.pipeline import build


def _item(**kw: object) -> CatalogItem:
    base: dict[str, object] = dict(
        provider="lambdalabs",
        instance_name="gpu_1x_h100_sxm5",
        location="us-east-1",
        price=2.99,
        cpu=26,
        memory=225.0,
        gpu_count=1,
        gpu_name="H100",
        gpu_memory=80.0,
        spot=False,
        disk_size=2750.0,
        gpu_vendor=AcceleratorVendor.NVIDIA,
    )
    base.update(kw)
    return CatalogItem(**base)  # type: ignore[arg-type]


def test_iso_z_and_parse_round_trip():
    when = dt.datetime(2026, 12, 2, 8, 0, 0, 123, tzinfo=dt.timezone.utc)
    assert offer_spec.iso_z(when) == "2026-12-02T08:00:00Z"
    aware = dt.datetime(2026, 12, 2, 9, 0, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert offer_spec.iso_z(aware) == "2026-12-02T08:00:00Z"
    assert observed.parse("2026-12-02T08:00:00Z") == when.replace(microsecond=0)
    assert observed.parse("2026-12-02T08:00:00+00:00") == when.replace(microsecond=0)
    assert observed.parse("yesterday") is None and observed.parse(None) is None


def test_collected_at_of_a_manifest():
    manifest = {"providers": {"aws": {"collected_at": "2026-11-29T05:00:00+00:00"}, "gcp": {}}}
    assert observed.collected_at(manifest, "aws") == "2026-11-29T05:00:00Z"
    assert observed.collected_at(manifest, "gcp") is None
    assert observed.collected_at(manifest, "azure") is None
    assert observed.collected_at(None, "aws") is None


def test_stamp_text_adds_and_keeps():
    at = "2026-12-02T08:00:00Z"
    when = dt.datetime(2026, 12, 2, 8, tzinfo=dt.timezone.utc)
    for data in ("{}", '{"a": 1}', '{"observed_at": "x"}'):  # provider_data stays as it is
        text = observed.stamp_text(data, at)
        assert offer_spec.provider_text(text) == data
        assert offer_spec.own_value(text, "observed_at") == when
    own = offer_spec.with_cell("{}", "observed_at", "2026-12-01T00:00:00Z")
    assert observed.stamp_text(own, at) == own  # the provider's own reading time wins


OFFERS = [
    _item(location="us-east-1", price=2.99),
    _item(location="us-west-1", price=3.09),
    _item(instance_name="gpu_8x_h100_sxm5", gpu_count=8, price=23.92),
]


def test_a_published_catalog_stamps_every_offer_with_its_collection_time(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    path = folder / "lambdalabs.csv"
    write_csv_file(OFFERS, str(path))
    at = dt.datetime(2026, 11, 29, 5, 0, tzinfo=dt.timezone.utc).timestamp()
    os.utime(path, (at, at))
    build(folder, "20261129-1", tmp_path / "out")

    catalog = Catalog(catalog_url=str(tmp_path / "out"), auto_reload=False)
    catalog.load()
    items = catalog.query(provider=["lambdalabs"])
    assert len(items) == len(OFFERS)
    when = dt.datetime(2026, 11, 29, 5, 0, tzinfo=dt.timezone.utc)
    assert {i.observed_at for i in items} == {when}
    assert all(i.provider_data == {} for i in items)


def test_a_folder_of_plain_csvs_stays_undated(tmp_path):
    write_csv_file(OFFERS, str(tmp_path / "lambdalabs.csv"))
    catalog = Catalog(settings=Settings(catalog_dir=str(tmp_path)), auto_reload=False)
    catalog.load()
    items = catalog.query(provider=["lambdalabs"])
    assert items and all(i.observed_at is None and i.provider_data == {} for i in items)


class _Live(AbstractProvider):
    NAME = "vastai"

    def __init__(self, items: list[CatalogItem]) -> None:
        self.items = items

    def get(self, query_filter=None, balance_resources=True, apply_filter=False):  # type: ignore[no-untyped-def]
        return self.items


def test_online_offers_get_the_answer_time():
    shared: dict[str, object] = {"min_bid": 0.45}
    own = _item(provider="vastai", observed_at="2026-12-01T00:00:00Z")
    fresh = _item(provider="vastai", provider_data=shared)
    before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    good = online.valid_offers(_Live([own, fresh]), [own, fresh])
    after = dt.datetime.now(dt.timezone.utc)
    assert good[0].observed_at == dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
    stamped = good[1].observed_at
    assert stamped is not None and before <= stamped <= after
    assert good[1].provider_data is shared and shared == {"min_bid": 0.45}  # untouched
    assert QueryFilter() is not None


def test_provider_ages_never_call_a_future_collection_fresh():
    import datetime as dt

    from gpuhunt._internal.observed import provider_ages

    now = dt.datetime(2026, 12, 7, 12, tzinfo=dt.timezone.utc)
    manifest = {
        "providers": {
            "aws": {"collected_at": "2026-12-06T12:00:00Z", "source": {"kind": "price list"}},
            "lium": {"collected_at": "2027-01-01T00:00:00Z", "source": "recorded"},
            "seeweb": {"collected_at": None},
        }
    }
    ages = provider_ages(manifest, ["lium", "aws", "seeweb", "mine", "aws"], now)
    assert list(ages) == ["aws", "lium", "mine", "seeweb"]
    assert ages["aws"] == {
        "collected_at": "2026-12-06T12:00:00Z",
        "age_seconds": 86400,
        "source": "price list",
    }
    assert ages["lium"]["age_seconds"] is None  # in the future: unknown, never 0
    assert ages["lium"]["source"] == "recorded"
    assert (
        ages["seeweb"]
        == ages["mine"]
        == {
            "collected_at": None,
            "age_seconds": None,
            "source": None,
        }
    )
