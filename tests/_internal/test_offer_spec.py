"""The offer spec: one table of the offer's fields that the model, the CSV, the JSON row, the
dataset and the page agree with; offer texts; old catalogs' keys moved out of provider_data."""

import dataclasses
import datetime as dt
import io
import json
import pickle

import pytest

from gpuhunt._internal import offer_spec, rows, schema
from gpuhunt._internal.formats.csv import csv_bytes, load
from gpuhunt._internal.history import observations
from gpuhunt._internal.models import OWN_FIELDS, SHAPE_FIELDS, CatalogItem, fill_offers, new_offers
from tests.helpers import item

UTC = dt.timezone.utc


def test_catalog_item_fields_are_the_spec_in_order():
    declared = [(f.name, f.type) for f in dataclasses.fields(CatalogItem)]
    assert [name for name, _ in declared] == [f.name for f in offer_spec.FIELDS]
    for (_, annotation), f in zip(declared, offer_spec.FIELDS):
        assert annotation.replace("dt.datetime", "datetime") == f.type
    assert list(OWN_FIELDS) == list(offer_spec.OWN_NAMES)
    # Each own field after provider_data, with a default: 0.1.x construction is unchanged.
    own = [f for f in dataclasses.fields(CatalogItem) if f.name in OWN_FIELDS]
    assert all(f.default is None for f in own)


def test_csv_columns_json_keys_and_dataset_columns_come_from_the_spec():
    assert [f.csv for f in offer_spec.FIELDS if f.csv] == schema.FIELDS
    # gpuhunt 0.1.x's fourteen columns first and in its order.
    assert schema.FIELDS[:14] == [
        "instance_name", "location", "price", "cpu", "memory", "gpu_count", "gpu_name",
        "gpu_memory", "spot", "disk_size", "gpu_vendor", "flags", "cpu_arch", "provider_data",
    ]  # fmt: skip
    assert set(rows.keys()) >= {f.json for f in offer_spec.FIELDS}
    assert set(rows.keys()) == set(rows.JSON_TYPES)
    assert set(rows.offer_row(item())) == set(rows.keys())
    dataset = {f.name: f.dataset.arrow for f in offer_spec.FIELDS if f.dataset}
    assert {k: v for k, v in observations.COLUMNS.items() if k != "version"} == dataset
    places = sorted(f.dataset.at for f in offer_spec.FIELDS if f.dataset)
    assert sorted([*places, observations.VERSION_COLUMN.at]) == list(range(len(dataset) + 1))


def test_a_shape_fills_every_field():
    offer = item(available=True, observed_at="2026-12-02T08:00:00Z", cuda_version="12.8")
    shape = tuple(getattr(offer, f) for f in (*SHAPE_FIELDS, *OWN_FIELDS))
    (made,) = new_offers(1)
    fill_offers([made], [shape], [offer.location], [offer.price])
    assert made == offer


def test_observed_at_text_is_read_as_an_aware_datetime():
    offer = item(observed_at="2026-12-02T09:00:00+01:00")
    assert offer.observed_at == dt.datetime(2026, 12, 2, 8, tzinfo=UTC)
    with pytest.raises(ValueError, match="observed_at"):
        item(observed_at="yesterday")


def test_pickles_round_trip_with_the_own_fields():
    offer = item(provider_data={"k": 1}, available=False, fx_rate=1.17, currency="EUR")
    again = pickle.loads(pickle.dumps(offer))
    assert again == offer and again.provider_data == {"k": 1} and again.available is False
    # A pickle of the 15-field constructor call (before these fields) still loads.
    fields15 = tuple(getattr(offer, f.name) for f in offer_spec.FIELDS[:15])
    old = pickle.loads(pickle.dumps(CatalogItem(*fields15)))
    assert old.available is None and old.provider_data == {"k": 1}


def test_offer_text_joins_and_splits():
    cells = offer_spec.item_cells(item(available=True, resold_from="lambdalabs"))
    text = offer_spec.join('{"k": 1}', cells)
    assert offer_spec.provider_text(text) == '{"k": 1}'
    values = dict(zip(offer_spec.OWN_NAMES, offer_spec.own_values(text)))
    assert values["available"] is True and values["resold_from"] == "lambdalabs"
    assert offer_spec.join('{"k": 1}', [""] * len(offer_spec.OWN)) == '{"k": 1}'
    assert offer_spec.own_values('{"k": 1}') == offer_spec.NO_OWN


def test_a_bad_cell_is_named():
    with pytest.raises(ValueError, match="available"):
        offer_spec.check_cell("available", "maybe")
    with pytest.raises(ValueError, match="control"):
        offer_spec.check_cell("resold_from", "a\x1fb")


def test_old_keys_move_out_and_the_rest_is_written_as_before():
    old = json.dumps(
        {"vm_specs": {"cpu": 2}, "available": True, "observed_at": "2026-12-02T08:00:00Z"},
        sort_keys=True,
    )
    text = offer_spec.migrate(old)
    assert offer_spec.provider_text(text) == json.dumps({"vm_specs": {"cpu": 2}}, sort_keys=True)
    assert offer_spec.own_value(text, "available") is True
    assert offer_spec.own_value(text, "observed_at") == dt.datetime(2026, 12, 2, 8, tzinfo=UTC)
    # A value of the wrong type is the provider's own: it stays.
    odd = json.dumps({"available": "yes"})
    assert offer_spec.migrate(odd) == odd
    # Nothing to move, in the provider's own spacing: the text is kept byte for byte.
    for text in ('{"available":"yes"}', '{"a":{"observed_at":"2026-12-02T08:00:00Z"}}'):
        assert offer_spec.migrate(text) == text


def test_csv_round_trip_keeps_provider_data_exactly():
    offer = item(provider_data={"k": 1}, observed_at="2026-12-02T08:00:00Z", available=True)
    (back,) = load(io.StringIO(csv_bytes([offer]).decode()), provider="aws")
    assert back.provider_data == {"k": 1}
    assert back.observed_at == dt.datetime(2026, 12, 2, 8, tzinfo=UTC)
    assert back == offer


def test_what_kind_of_fact_an_offer_is_round_trips_through_the_csv():
    offer = item(gpu_fraction=1 / 6, location_source="enumerated", momentary=True)
    (back,) = load(io.StringIO(csv_bytes([offer]).decode()), provider="aws")
    assert (back.gpu_fraction, back.location_source, back.momentary) == (1 / 6, "enumerated", True)
    assert back == offer and back.provider_data == {}


def test_the_new_cells_are_checked_and_never_taken_from_provider_data():
    with pytest.raises(ValueError, match="gpu_fraction"):
        offer_spec.check_cell("gpu_fraction", "1.5")  # more than one GPU is no share of one
    with pytest.raises(ValueError, match="location_source"):
        offer_spec.check_cell("location_source", "guessed")
    with pytest.raises(ValueError, match="momentary"):
        offer_spec.check_cell("momentary", "often")
    # A provider's own key of a later field's name is the provider's: never moved out.
    own = json.dumps({"momentary": True, "location_source": "x"}, sort_keys=True)
    assert offer_spec.migrate(own) == own


def test_an_offer_text_of_an_older_version_has_the_later_cells_empty():
    # A column file written when the offer had eight own fields.
    cells = ["2026-12-02T08:00:00Z", "true"] + [""] * 6
    text = offer_spec.SEP.join(['{"k": 1}', *cells])
    assert offer_spec.check_text(text, lambda t: t) == text
    values = dict(zip(offer_spec.OWN_NAMES, offer_spec.own_values(text)))
    assert values["available"] is True and values["momentary"] is None
    assert len(offer_spec.own_values(text)) == len(offer_spec.OWN)
    assert offer_spec.own_value(offer_spec.with_cell(text, "momentary", "true"), "momentary")
