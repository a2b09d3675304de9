"""A query that names its providers, all online, none of which answered, raises (issue #23).

dstack asks one backend's catalog at a time (`provider=["vastai"]`); an empty answer there is
cached for minutes as "this backend has no offers", so 0.1.x's exception is what it needs. A
query where some provider answered keeps returning what it got, the rest in `status()`.
"""

from __future__ import annotations

import pytest
import responses

import gpuhunt
from gpuhunt import Catalog, GPUHuntError, OnlineProvidersFailedError, ProviderError
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt.providers.base import AbstractProvider
from gpuhunt.providers.vastai import BUNDLES_URL, VastAIProvider
from tests.helpers import item, publish_archive

AWS = csv_bytes([item(price=1.0, instance_name="g5")])


class Broken(AbstractProvider):
    NAME = "vultr"

    def get(self, query_filter=None, balance_resources=True, apply_filter=False):
        raise RuntimeError("boom")


class Empty(AbstractProvider):
    NAME = "lium"

    def get(self, query_filter=None, balance_resources=True, apply_filter=False):
        return []


class Fine(AbstractProvider):
    NAME = "cloudrift"

    def get(self, query_filter=None, balance_resources=True, apply_filter=False):
        return [item("cloudrift", price=0.5)]


def _catalog(tmp_path, *providers: AbstractProvider) -> Catalog:
    publish_archive(tmp_path / "bucket", "v1", {"aws": AWS})
    c = Catalog(catalog_url=str(tmp_path / "bucket"), online_timeout=5)
    for p in providers:
        c.add_provider(p)
    return c


@responses.activate
def test_the_one_named_provider_failing_raises_naming_it_and_why(tmp_path):
    # The real Vast.ai request code against an answer of 500 on every try.
    responses.post(BUNDLES_URL, status=500, json={"error": "internal"})
    c = _catalog(tmp_path, VastAIProvider())

    with pytest.raises(OnlineProvidersFailedError) as raised:
        c.query(provider=["vastai"])

    assert set(raised.value.errors) == {"vastai"}
    assert "500" in raised.value.errors["vastai"]
    assert "vastai: " in str(raised.value) and "500" in str(raised.value)
    assert isinstance(raised.value, ProviderError) and isinstance(raised.value, GPUHuntError)
    assert len(responses.calls) >= 1  # it was really asked
    assert "vastai" in c.status().online_errors


def test_every_named_provider_failing_names_each(tmp_path):
    c = _catalog(tmp_path, Broken(), Fine())
    c.add_provider(type("AlsoBroken", (Broken,), {"NAME": "seeweb"})())

    with pytest.raises(OnlineProvidersFailedError) as raised:
        c.query(provider=["vultr", "seeweb"])

    assert sorted(raised.value.errors) == ["seeweb", "vultr"]
    assert all("RuntimeError: boom" in why for why in raised.value.errors.values())


def test_a_provider_in_its_backoff_still_counts_as_failed(tmp_path):
    c = _catalog(tmp_path, Broken())
    with pytest.raises(OnlineProvidersFailedError):
        c.query(provider="vultr")
    # Not asked again for 30 s: the second query does not wait for it, and still raises.
    with pytest.raises(OnlineProvidersFailedError) as raised:
        c.query(provider="vultr")
    assert "boom" in raised.value.errors["vultr"] and "next try in" in raised.value.errors["vultr"]


def test_some_answered_returns_their_offers_and_reports_the_rest(tmp_path):
    c = _catalog(tmp_path, Broken(), Fine())
    offers = c.query(provider=["vultr", "cloudrift"])
    assert [(o.provider, o.price) for o in offers] == [("cloudrift", 0.5)]
    assert "boom" in c.status().online_errors["vultr"]


def test_a_provider_answering_nothing_is_an_answer(tmp_path):
    c = _catalog(tmp_path, Empty())
    assert c.query(provider=["lium"]) == []


def test_an_offline_provider_among_the_named_keeps_the_answer(tmp_path):
    c = _catalog(tmp_path, Broken())
    offers = c.query(provider=["vultr", "aws"])
    assert [o.instance_name for o in offers] == ["g5"]
    assert "boom" in c.status().online_errors["vultr"]


def test_no_provider_named_never_raises(tmp_path):
    c = _catalog(tmp_path, Broken())
    assert [o.instance_name for o in c.query()] == ["g5"]


def test_named_but_not_added_is_reported_not_raised(tmp_path):
    # Nothing was asked, so nothing failed: as before, [] and the reason in status().
    c = _catalog(tmp_path)
    assert c.query(provider=["vastai"]) == []
    assert "not added" in c.status().online_errors["vastai"]


def test_module_level_query_raises_too(tmp_path, monkeypatch):
    from gpuhunt._internal import default

    c = _catalog(tmp_path, Broken())
    monkeypatch.setattr(default, "_catalog", c)
    with pytest.raises(OnlineProvidersFailedError):
        gpuhunt.query(provider="vultr")
