"""DigitalOcean over recorded `/v2/sizes` answers (tests/providers/data/digitalocean, from
../shared/fixtures): GPU sizes with `gpu_info`/`disk_info` (sizes_gpu.json) and libcloud's 2015
answer, which has neither."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import responses
from responses import matchers

from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor, QueryFilter
from gpuhunt.providers.digitalocean import DigitalOceanProvider

DATA = Path(__file__).parent / "data" / "digitalocean"
SIZES_URL = "https://api.digitalocean.com/v2/sizes"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def gpu_size(**overrides: Any) -> dict[str, Any]:
    size = load("sizes_gpu.json")["sizes"][1]
    size.update(overrides)
    return size


@responses.activate
def test_request_and_offers() -> None:
    responses.get(SIZES_URL, json=load("sizes_gpu.json"))

    offers = DigitalOceanProvider(api_key="do-secret").get()

    [call] = responses.calls
    assert call.request.headers["Authorization"] == "Bearer do-secret"
    assert parse_qs(urlsplit(call.request.url).query) == {"page": ["1"], "per_page": ["200"]}
    basic = [o for o in offers if o.instance_name == "s-1vcpu-512mb-10gb"]
    assert sorted(o.location for o in basic) == [
        "ams3",
        "fra1",
        "nyc1",
        "nyc2",
        "sfo2",
        "sfo3",
        "sgp1",
        "syd1",
    ]
    assert {(o.price, o.cpu, o.memory, o.disk_size, o.gpu_count) for o in basic} == {
        (0.00595, 1, 0.5, 10.0, 0)
    }
    [h100] = [o for o in offers if o.instance_name == "gpu-h100x8-640gb"]
    assert (h100.location, h100.price, h100.cpu, h100.memory) == ("nyc1", 23.92, 160, 1920.0)
    # 640 GiB of GPU memory over 8 GPUs; the 40960 GiB scratch disk is not persistent
    assert (h100.gpu_name, h100.gpu_count, h100.gpu_memory, h100.gpu_vendor) == (
        "H100",
        8,
        80.0,
        AcceleratorVendor.NVIDIA,
    )
    assert h100.disk_size == 2046.0
    [mi300x] = [o for o in offers if o.instance_name == "gpu-mi300x8-1536gb"]
    assert (mi300x.gpu_name, mi300x.gpu_count, mi300x.gpu_memory, mi300x.gpu_vendor) == (
        "MI300X",
        8,
        192.0,
        AcceleratorVendor.AMD,
    )
    assert [o.price for o in offers] == sorted(o.price for o in offers)
    assert not any(o.spot for o in offers)


@responses.activate
def test_pages_are_followed_on_the_configured_host() -> None:
    first = load("sizes_gpu.json")
    # the API's absolute link names its own host; the token must not follow it elsewhere
    first["links"] = {"pages": {"next": "https://elsewhere.example/v2/sizes?page=2&per_page=200"}}
    base = "https://api-amd.digitalocean.com/v2/sizes"
    responses.get(
        base, json=first, match=[matchers.query_param_matcher({"page": "1", "per_page": "200"})]
    )
    responses.get(
        base,
        json={**load("sizes_libcloud_2015.json"), "links": {"pages": {"prev": "x"}}},
        match=[matchers.query_param_matcher({"page": "2", "per_page": "200"})],
    )

    offers = DigitalOceanProvider(api_key="k", api_url="https://api-amd.digitalocean.com/").get()

    assert len(responses.calls) == 2
    assert all(c.request.url.startswith(base) for c in responses.calls)
    # the 2015 sizes have no disk_info: their `disk` is used
    assert {
        (o.instance_name, o.disk_size) for o in offers if o.instance_name in ("512mb", "1gb")
    } == {
        ("512mb", 20.0),
        ("1gb", 30.0),
    }


@responses.activate
def test_gpu_models_and_unknown_gpus() -> None:
    sizes = [
        gpu_size(
            slug="gpu-6000adax1-48gb",
            gpu_info={
                "count": 1,
                "vram": {"amount": 48, "unit": "gib"},
                "model": "nvidia_rtx6000_ada",
            },
        ),
        gpu_size(
            slug="gpu-l40sx1-48gb",
            gpu_info={"count": 1, "vram": {"amount": 48, "unit": "gib"}, "model": "nvidia_l40s"},
        ),
        gpu_size(
            slug="gpu-x9",
            gpu_info={"count": 2, "vram": {"amount": 64, "unit": "gib"}, "model": "nvidia_x9_pro"},
        ),
        gpu_size(
            slug="gpu-acme",
            gpu_info={"count": 1, "vram": {"amount": 16, "unit": "gib"}, "model": "acme_z1"},
        ),
    ]
    responses.get(SIZES_URL, json={"sizes": sizes, "links": {}, "meta": {"total": 4}})
    provider = DigitalOceanProvider(api_key="k")

    offers = provider.get()

    assert [(o.instance_name, o.gpu_name, o.gpu_memory) for o in offers] == [
        ("gpu-6000adax1-48gb", "RTX6000Ada", 48.0),
        ("gpu-l40sx1-48gb", "L40S", 48.0),
        ("gpu-x9", "X9PRO", 32.0),
    ]
    assert provider.last_report.unknown_gpus.total() == 2
    assert provider.last_report.counts["malformed"] == 1  # no vendor can be told for acme_z1


@responses.activate
def test_malformed_sizes_are_skipped_and_unavailable_ones_marked() -> None:
    no_price = gpu_size(slug="broken")
    del no_price["price_hourly"]
    gone = gpu_size(slug="gone", available=False)
    responses.get(SIZES_URL, json={"sizes": [no_price, gone, gpu_size()], "links": {}})
    provider = DigitalOceanProvider(api_key="k")

    offers = provider.get()

    # A size that cannot be created now is offered as gpuhunt 0.1.34 offered it, marked so.
    assert sorted((o.instance_name, o.available) for o in offers) == [
        ("gone", False),
        ("gpu-h100x8-640gb", True),
    ]
    assert provider.last_report.counts["malformed"] == 1


@responses.activate
def test_refused_token_names_the_variable() -> None:
    responses.get(SIZES_URL, status=401, json={"id": "unauthorized"})

    with pytest.raises(ProviderError, match="DIGITAL_OCEAN_API_KEY") as e:
        DigitalOceanProvider(api_key="do-secret").get()

    assert "do-secret" not in str(e.value)


@pytest.mark.parametrize("status", [429, 503])
@responses.activate
def test_overload_is_retried_then_a_provider_error(status: int) -> None:
    responses.get(SIZES_URL, status=status)

    with pytest.raises(ProviderError, match=f"HTTP {status}"):
        DigitalOceanProvider(api_key="k").get()

    assert len(responses.calls) == 4


@responses.activate
def test_invalid_json_is_a_provider_error() -> None:
    responses.get(SIZES_URL, body="{")

    with pytest.raises(ProviderError, match="invalid JSON"):
        DigitalOceanProvider(api_key="k").get()


@responses.activate
def test_wrong_shape_names_the_field() -> None:
    responses.get(SIZES_URL, json={"droplet_sizes": []})

    with pytest.raises(ProviderError, match="'sizes'"):
        DigitalOceanProvider(api_key="k").get()


@responses.activate
def test_spot_queries_need_no_call() -> None:
    assert DigitalOceanProvider(api_key="k").get(QueryFilter(spot=True)) == []
    assert len(responses.calls) == 0


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DIGITAL_OCEAN_API_KEY", raising=False)
    with pytest.raises(MissingCredsError, match="DIGITAL_OCEAN_API_KEY"):
        DigitalOceanProvider.from_env()
    monkeypatch.setenv("DIGITAL_OCEAN_API_KEY", "do-secret")
    monkeypatch.setenv("DIGITAL_OCEAN_API_URL", "https://api-amd.digitalocean.com")
    provider = DigitalOceanProvider.from_env()
    assert (provider.api_key, provider.api_url) == ("do-secret", "https://api-amd.digitalocean.com")
    assert "do-secret" not in repr(provider)
    assert DigitalOceanProvider().api_url == "https://api.digitalocean.com"


@responses.activate
def test_a_gpu_count_of_1e999_skips_that_size_only() -> None:
    """`1e999` decodes to infinity; int() of it raises OverflowError: one size skipped and
    counted by the shared record guard (issue 27), the others served."""
    big = gpu_size(slug="huge")
    big["gpu_info"]["count"] = "__BIG__"
    body = json.dumps({"sizes": [big, gpu_size()], "links": {}}).replace('"__BIG__"', "1e999")
    responses.get(SIZES_URL, body=body, content_type="application/json")
    provider = DigitalOceanProvider(api_key="k")

    assert [o.instance_name for o in provider.get()] == ["gpu-h100x8-640gb"]
    assert provider.last_report.counts["malformed"] == 1
