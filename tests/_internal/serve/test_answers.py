"""`Service`: answers from one catalog version even across a reload, JSON-ready values, the
ETag and how long a cache may keep an answer."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import math

import pytest

from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.query import top
from gpuhunt._internal.query.table import combine
from gpuhunt._internal.serve import parameters
from gpuhunt._internal.serve.answers import Service, Unavailable, jsonable


@pytest.fixture
def catalog(published, tmp_path):
    with Catalog(catalog_url=str(published), settings=Settings(cache_dir=tmp_path)) as c:
        Service(c).ready()
        yield c


def swap_in(catalog: Catalog, version: str) -> None:
    """What a reload does: a new table (here the same offers) swapped in by one assignment."""
    loader = catalog._loader
    loaded = loader.loaded
    table = combine([loaded.table.part(p) for p in loaded.table.providers])
    loader.loaded = dataclasses.replace(loaded, table=table, version=version)


def test_an_answer_computed_across_a_reload_is_computed_again(catalog, monkeypatch):
    real = top.top
    calls = []

    def choose(*args, **kw):
        calls.append(kw)
        answer = real(*args, **kw)
        if len(calls) == 1:  # a reload lands while the first answer is chosen
            swap_in(catalog, "20261130-1")
        return answer

    monkeypatch.setattr(top, "top", choose)
    service = Service(catalog)
    request = parameters.parse([("gpu", "H100")])
    reply = service.offers(request)
    assert len(calls) == 2
    assert reply.body["catalog"]["version"] == "20261130-1"
    assert reply.etag == service.current_etag("offers", request)


def test_a_catalog_that_never_holds_still_is_unavailable(catalog, monkeypatch):
    real = top.top
    n = iter(range(100))

    def choose(*args, **kw):
        answer = real(*args, **kw)
        swap_in(catalog, f"20261130-{next(n)}")
        return answer

    monkeypatch.setattr(top, "top", choose)
    with pytest.raises(Unavailable):
        Service(catalog).offers(parameters.parse([]))


def test_the_etag_names_version_and_query(catalog):
    service = Service(catalog)
    a = parameters.parse([("gpu", "H100")])
    tag = service.offers(a).etag
    assert tag == service.current_etag("offers", a) != service.current_etag("explain", a)
    swap_in(catalog, "20261201-1")
    assert service.current_etag("offers", a) != tag


def test_max_age_is_what_is_left_of_the_reload_interval(catalog):
    service = Service(catalog)
    loaded = catalog._loaded
    catalog.reload_interval = 600
    assert 590 <= service.max_age(loaded) <= 600
    catalog.reload_interval = 0
    assert service.max_age(loaded) == 0
    assert service.max_age(dataclasses.replace(loaded, degraded=True)) == 0


class Colour(enum.Enum):
    RED = "red"


def test_jsonable():
    when = dt.datetime(2026, 12, 2, 8, tzinfo=dt.timezone.utc)
    value = {
        "a": (1, Colour.RED),
        "b": {3, 1},
        "c": when,
        "d": math.inf,
        "e": dt.timedelta(minutes=1),
    }
    assert jsonable(value) == {
        "a": [1, "red"],
        "b": [1, 3],
        "c": "2026-12-02T08:00:00+00:00",
        "d": None,
        "e": 60.0,
    }


def test_status_etag_holds_while_only_the_ages_move(catalog):
    service = Service(catalog)
    first = service.status()
    assert first.etag.startswith("W/") and first.max_age is None
    assert service.status().etag == first.etag
    swap_in(catalog, "20261201-2")
    assert service.status().etag != first.etag


def test_costs_are_row_keys_when_asked(tmp_path):
    # A catalog folder with the Azure sample's real 1-year reservation beside its CSV.
    from gpuhunt._internal.costs.terms import Term
    from gpuhunt._internal.formats.csv import csv_bytes
    from gpuhunt._internal.formats.terms import write_terms
    from tests.helpers import item

    offer = item("azure", instance_name="Standard_D8_v4", location="westeurope", price=0.46)
    (tmp_path / "azure.csv").write_bytes(csv_bytes([offer]))
    term = Term("azure", "Standard_D8_v4", "westeurope", "1y", "all", "", 0.0, 2377.0, "s", None)
    (tmp_path / "azure.terms").write_bytes(write_terms([term]))
    with Catalog(settings=Settings(catalog_dir=str(tmp_path)), auto_reload=False) as c:
        c.load()
        plain = Service(c).offers(parameters.parse([]))
        assert "pay" not in plain.body["offers"][0]
        pairs = [("hours_per_month", "431"), ("months", "12")]
        (row,) = Service(c).offers(parameters.parse(pairs)).body["offers"]
        assert row["pay"] == "1y all upfront"
        assert row["break_even_hours"] == pytest.approx(2377 / 12 / 0.46, abs=1e-6)
        with pytest.raises(parameters.ParameterError, match="job_hours"):
            parameters.parse([("egress_gb", "10")])
