"""Hot Aisle over recorded answers of `GET /teams/{team}/virtual_machines/available/` and
`GET /teams/{team}/bare_metal/available/` (tests/providers/data/hotaisle, from ../shared/fixtures):
two MI300X VM shapes, a CPU-only VM shape with the `cpus` detail, and an 8x MI300X bare-metal
server (the fixture of gpuhunt 0.1.34's tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import responses

from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor, QueryFilter
from gpuhunt.providers.hotaisle import FLAG_BARE_METAL, FLAG_CPU, HotAisleProvider

DATA = Path(__file__).parent / "data" / "hotaisle"
URL = "https://admin.hotaisle.app/api/teams/my-team/virtual_machines/available/"
BM_URL = "https://admin.hotaisle.app/api/teams/my-team/bare_metal/available/"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def provider() -> HotAisleProvider:
    return HotAisleProvider(api_key="ha-secret", team_handle="my-team")


@responses.activate
def test_request_and_mi300x_offers() -> None:
    answer = load("virtual_machines_available_probe_shim.json")
    responses.get(URL, json=answer)
    responses.get(BM_URL, body="null", content_type="application/json")

    offers = provider().get()

    vm_call, bm_call = responses.calls
    assert vm_call.request.headers["Authorization"] == "Token ha-secret"
    assert bm_call.request.url == BM_URL
    assert bm_call.request.headers["Authorization"] == "Token ha-secret"
    one, two = offers
    assert (one.instance_name, one.price, one.cpu, one.memory, one.disk_size) == (
        "vm-mi300x-1",
        1.99,
        13,
        224.0,
        1024.0,
    )
    assert (two.instance_name, two.price, two.cpu, two.memory) == ("vm-mi300x-2", 5.98, 26, 448.0)
    for offer, shape in ((one, answer[1]), (two, answer[0])):
        assert (offer.gpu_name, offer.gpu_memory, offer.gpu_vendor) == (
            "MI300X",
            192.0,
            AcceleratorVendor.AMD,
        )
        assert offer.location == "us-michigan-1"
        # Exactly the specs (dstack's own test compares backend_data with this dict).
        assert offer.provider_data == {"vm_specs": shape["Specs"]}
        assert offer.available is True
        assert offer.flags == [] and not offer.spot
    assert (one.gpu_count, two.gpu_count) == (1, 2)


@responses.activate
def test_cpu_only_shape_is_a_flagged_cpu_offer() -> None:
    answer = load("virtual_machines_available_cpu_item_testfixture.json")
    responses.get(URL, json=answer)
    responses.get(BM_URL, body="null", content_type="application/json")

    [offer] = provider().get()

    assert (offer.instance_name, offer.price, offer.cpu, offer.memory, offer.disk_size) == (
        "vm-cpu-8",
        3.5,
        8,
        32.0,
        100.0,
    )
    assert (offer.gpu_count, offer.gpu_name, offer.gpu_vendor) == (0, None, None)
    assert offer.flags == [FLAG_CPU]
    assert offer.provider_data["vm_specs"]["cpus"][0]["model"] == "EPYC 9334"


@responses.activate
def test_provider_data_is_a_copy_of_the_cached_answer() -> None:
    responses.get(URL, json=load("virtual_machines_available_probe_shim.json"))
    responses.get(BM_URL, body="null", content_type="application/json")

    first = provider().get()
    first[0].provider_data["vm_specs"]["cpu_cores"] = 999
    second = provider().get()

    assert len(responses.calls) == 2  # one per endpoint; then served from the live cache
    assert second[0].provider_data["vm_specs"]["cpu_cores"] == 13


@responses.activate
def test_nothing_available_is_null() -> None:
    responses.get(URL, body="null", content_type="application/json")
    responses.get(BM_URL, body="null", content_type="application/json")

    assert provider().get() == []


@responses.activate
def test_malformed_and_unknown_shapes() -> None:
    shapes = load("virtual_machines_available_probe_shim.json")
    no_price = {k: v for k, v in shapes[0].items() if k != "OnDemandPrice"}
    future = json.loads(json.dumps(shapes[1]))
    future["Specs"]["gpus"][0]["model"] = "MI400X"
    responses.get(URL, json=[no_price, future, shapes[1]])
    responses.get(BM_URL, body="null", content_type="application/json")
    p = provider()

    offers = p.get()

    assert [(o.instance_name, o.gpu_name, o.gpu_memory) for o in offers] == [
        ("vm-mi300x-1", "MI300X", 192.0),
        ("vm-mi400x-1", "MI400X", None),
    ]
    assert offers[1].gpu_vendor == AcceleratorVendor.AMD
    assert p.last_report.counts == {"malformed": 1}
    assert p.last_report.unknown_gpus.total() == 1


@responses.activate
def test_wrong_shape_is_a_provider_error() -> None:
    responses.get(URL, json={"detail": "paged"})
    responses.get(BM_URL, json={"detail": "paged"})

    with pytest.raises(ProviderError, match="expected a list"):
        provider().get()


@responses.activate
def test_refused_key_names_the_variable() -> None:
    responses.get(URL, status=401, json={"detail": "Invalid token."})
    responses.get(BM_URL, status=401, json={"detail": "Invalid token."})

    with pytest.raises(ProviderError, match="HOTAISLE_API_KEY") as e:
        provider().get()

    assert "ha-secret" not in str(e.value)


@pytest.mark.parametrize("status", [429, 500])
@responses.activate
def test_overload_is_retried_then_a_provider_error(status: int) -> None:
    responses.get(URL, status=status)
    responses.get(BM_URL, status=status)

    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        provider().get()

    assert len(responses.calls) == 2 * 4  # each endpoint: one call and three retries


@responses.activate
def test_invalid_json_is_a_provider_error() -> None:
    responses.get(URL, body="<html>")
    responses.get(BM_URL, body="<html>")

    with pytest.raises(ProviderError, match="invalid JSON"):
        provider().get()


@responses.activate
def test_team_handle_is_quoted_and_spot_needs_no_call() -> None:
    responses.get("https://admin.hotaisle.app/api/teams/a%2Fb/virtual_machines/available/", json=[])
    responses.get("https://admin.hotaisle.app/api/teams/a%2Fb/bare_metal/available/", json=[])

    assert HotAisleProvider(api_key="k", team_handle="a/b").get() == []
    assert HotAisleProvider(api_key="k", team_handle="a/b").get(QueryFilter(spot=True)) == []
    assert len(responses.calls) == 2


def test_credentials_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOTAISLE_API_KEY", raising=False)
    monkeypatch.setenv("HOTAISLE_TEAM_HANDLE", "my-team")
    with pytest.raises(MissingCredsError, match="HOTAISLE_API_KEY"):
        HotAisleProvider.from_env()
    monkeypatch.setenv("HOTAISLE_API_KEY", "ha-secret")
    monkeypatch.delenv("HOTAISLE_TEAM_HANDLE")
    with pytest.raises(MissingCredsError, match="HOTAISLE_TEAM_HANDLE"):
        HotAisleProvider.from_env()
    monkeypatch.setenv("HOTAISLE_TEAM_HANDLE", "my-team")
    p = HotAisleProvider.from_env()
    assert (p.api_key, p.team_handle) == ("ha-secret", "my-team")
    assert "ha-secret" not in repr(p)
    assert HotAisleProvider().team_handle == "my-team"


@responses.activate
def test_bare_metal_offers() -> None:
    """gpuhunt 0.1.34 asks /bare_metal/available/ too; its offers are named bm-<gpu>-<count>,
    flagged hotaisle-bm, with the specs under provider_data["bare_metal_specs"]."""
    bm = load("bare_metal_available_testfixture.json")
    responses.get(URL, json=load("virtual_machines_available_probe_shim.json"))
    responses.get(BM_URL, json=bm)

    offers = provider().get()

    [server] = [o for o in offers if o.instance_name.startswith("bm-")]
    assert (server.instance_name, server.price, server.cpu, server.memory) == (
        "bm-mi300x-8",
        27.12,
        104,
        2048.0,
    )
    assert (server.gpu_count, server.gpu_name, server.gpu_memory, server.gpu_vendor) == (
        8,
        "MI300X",
        192.0,
        AcceleratorVendor.AMD,
    )
    assert server.disk_size == 123839994396672 / 1024**3
    assert server.flags == [FLAG_BARE_METAL] and not server.spot
    assert server.provider_data == {"bare_metal_specs": bm[0]["Specs"]}
    assert server.available is True
    assert {o.instance_name for o in offers} == {"vm-mi300x-1", "vm-mi300x-2", "bm-mi300x-8"}
    assert all(o.flags == [] for o in offers if o.instance_name.startswith("vm-"))


@responses.activate
def test_one_endpoint_failing_keeps_the_other() -> None:
    responses.get(URL, status=500)
    responses.get(BM_URL, json=load("bare_metal_available_testfixture.json"))
    p = provider()

    offers = p.get()

    assert [o.instance_name for o in offers] == ["bm-mi300x-8"]
    [skipped] = p.last_report.skipped
    assert skipped.startswith("the virtual_machines offers: ") and "HTTP 500" in skipped


@responses.activate
def test_a_gpu_count_of_1e999_skips_that_shape_only() -> None:
    """`1e999` decodes to infinity; int() of it raises OverflowError: one shape skipped and
    counted by the shared record guard (issue 27), the other served."""
    answer = load("virtual_machines_available_probe_shim.json")
    answer[0]["Specs"]["gpus"][0]["count"] = "__BIG__"
    body = json.dumps(answer).replace('"__BIG__"', "1e999")
    responses.get(URL, body=body, content_type="application/json")
    responses.get(BM_URL, body="null", content_type="application/json")
    p = provider()

    offers = p.get()

    assert [o.instance_name for o in offers] == ["vm-mi300x-1"]
    assert p.last_report.counts["malformed"] == 1


@responses.activate
def test_availability_listed_shapes_are_available_and_taken_ones_absent() -> None:
    # The VM endpoint lists two free shapes; bare metal answers null: every server is taken.
    responses.get(URL, json=load("virtual_machines_available_probe_shim.json"))
    responses.get(BM_URL, body="null", content_type="application/json")

    offers = provider().get()

    assert [(o.instance_name, o.available) for o in offers] == [
        ("vm-mi300x-1", True),
        ("vm-mi300x-2", True),
    ]
    assert not [o for o in offers if o.instance_name.startswith("bm-")]


@responses.activate
def test_through_a_catalog_provider_data_is_exactly_the_specs(tmp_path) -> None:
    """As dstack 0.22.5's `test_keeps_specs_in_backend_data` sees it: its backend_data is the
    offer's provider_data, which must be `{"vm_specs": ...}` and nothing else, also after
    `Catalog.query` (which stamps when the offer was read, as a field of its own)."""
    from gpuhunt import Catalog
    from gpuhunt._internal.load.settings import Settings

    answer = load("virtual_machines_available_probe_shim.json")
    responses.get(URL, json=answer)
    responses.get(BM_URL, body="null", content_type="application/json")
    catalog = Catalog(settings=Settings(catalog_dir=str(tmp_path)), auto_reload=False)
    catalog.add_provider(provider())
    offers = catalog.query(provider="hotaisle")
    assert sorted(o.instance_name for o in offers) == ["vm-mi300x-1", "vm-mi300x-2"]
    by_name = {o.instance_name: o for o in offers}
    for name, shape in (("vm-mi300x-1", answer[1]), ("vm-mi300x-2", answer[0])):
        assert by_name[name].provider_data == {"vm_specs": shape["Specs"]}
        assert by_name[name].available is True and by_name[name].observed_at is not None
