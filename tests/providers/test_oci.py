"""OCI provider over recorded answers (see data/oci/README.md).

The Cost Estimator documents are a verbatim shapes.json excerpt plus GPU shapes and products
rebuilt from values reported from the live estimator; the E4 memory price and the `ListRegions`
answer were built from Oracle's public price list and region list. The oci SDK signs and sends
its real request, which a `responses` mock on the SDK's (vendored) requests adapter answers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import responses
from oci._vendor import requests as vendored_requests
from scripts.replay import replay_oci
from scripts.replay.replay_oci import REGIONS_URL, TENANCY, USER, load, mocks, new_api_key

from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture
from gpuhunt.providers import oci as oci_provider
from gpuhunt.providers.oci import (
    PRODUCTS_URL,
    SHAPES_URL,
    OCIProvider,
    ParseReport,
    Product,
    gpu_name_for_shape,
    parse_offers,
    usd_per_hour,
)

REGIONS = [
    "ap-tokyo-1",
    "eu-frankfurt-1",
    "uk-london-1",
    "us-ashburn-1",
    "us-chicago-1",
    "us-phoenix-1",
]
OCI_VARS = (
    "OCI_CLI_USER",
    "OCI_CLI_TENANCY",
    "OCI_CLI_FINGERPRINT",
    "OCI_CLI_REGION",
    "OCI_CLI_KEY_CONTENT",
    "OCI_CLI_KEY_FILE",
    "OCI_CLI_CONFIG_FILE",
    "OCI_CLI_PROFILE",
)


@pytest.fixture(scope="module")
def api_key() -> tuple[str, str]:
    return new_api_key()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in OCI_VARS:
        monkeypatch.delenv(var, raising=False)
    # never read the developer's own ~/.oci/config
    monkeypatch.setenv("OCI_CLI_CONFIG_FILE", str(tmp_path / "no-such-config"))
    monkeypatch.setattr(oci_provider, "IDENTITY_RETRY_BASE_SLEEP", 0)
    monkeypatch.setattr(oci_provider, "IDENTITY_RETRY_JITTER", 0)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, api_key: tuple[str, str]) -> None:
    for var, value in replay_oci.env(*api_key).items():
        monkeypatch.setenv(var, value)


def find(items: list[CatalogItem], name: str, region: str = "us-ashburn-1", spot: bool = False):
    (item,) = [
        i for i in items if i.instance_name == name and i.location == region and i.spot == spot
    ]
    return item


def shapes() -> dict[str, Any]:
    return load("replay_shapes.json")


def products() -> dict[str, Any]:
    return load("replay_products.json")


def parse(shapes_payload: Any, products_payload: Any) -> tuple[list[CatalogItem], ParseReport]:
    report = ParseReport()
    return parse_offers(shapes_payload, products_payload, ["us-ashburn-1"], report), report


# --------------------------------------------------------------------------- real facts


def test_replay_offers_carry_real_prices_and_gpus() -> None:
    items = replay_oci.collect()

    h100 = find(items, "BM.GPU.H100.8")
    assert (h100.price, h100.cpu, h100.memory) == (80.0, 224, 2048.0)  # $10 per GPU-hour
    assert (h100.gpu_count, h100.gpu_name, h100.gpu_memory) == (8, "H100", 80.0)
    assert h100.gpu_vendor == AcceleratorVendor.NVIDIA and h100.cpu_arch == CPUArchitecture.X86
    a100_40 = find(items, "BM.GPU4.8")  # the estimator says "arm"; it is an AMD EPYC host
    assert (a100_40.price, a100_40.cpu, a100_40.gpu_name, a100_40.gpu_memory) == (
        24.4,
        128,
        "A100",
        40.0,
    )
    assert a100_40.cpu_arch == CPUArchitecture.X86
    a100_80 = find(items, "BM.GPU.A100-v2.8")
    assert (a100_80.price, a100_80.gpu_memory) == (32.0, 80.0)
    mi300x = find(items, "BM.GPU.MI300X.8")
    assert (mi300x.price, mi300x.gpu_name, mi300x.gpu_memory) == (48.0, "MI300X", 192.0)
    assert mi300x.gpu_vendor == AcceleratorVendor.AMD
    assert find(items, "BM.GPU.MI355X.8").gpu_memory == 288.0  # the estimator's per-GPU figure
    gb200 = find(items, "BM.GPU.GB200.4")  # "(NVL72)" dropped: the Compute API's name
    assert (gb200.price, gb200.cpu, gb200.memory, gb200.gpu_count) == (64.0, 144, 960.0, 4)
    assert gb200.cpu_arch == CPUArchitecture.ARM
    b300 = find(items, "BM.GPU.B300.8")  # OCPUs and memory from Oracle's shapes reference
    assert (b300.price, b300.cpu, b300.memory) == (120.0, 256, 4096.0)
    assert find(items, "BM.GPU.RTXPRO.8").gpu_name == "RTXPRO6000"

    v100 = find(items, "VM.GPU3.1")
    assert (v100.price, v100.cpu, v100.memory, v100.gpu_name, v100.gpu_memory) == (
        2.95,
        12,
        90.0,
        "V100",
        16.0,
    )
    assert v100.flags == []
    v100_spot = find(items, "VM.GPU3.1", spot=True)
    assert (v100_spot.price, v100_spot.flags) == (1.475, ["oci-spot"])

    e4 = find(items, "BM.Standard.E4.128")  # 128 OCPU x $0.025 + 2048 GB x $0.0015
    assert (e4.price, e4.cpu, e4.memory, e4.gpu_count, e4.gpu_name) == (6.272, 256, 2048.0, 0, None)

    assert not [i for i in items if "DenseIO" in i.instance_name or "(" in i.instance_name]
    assert all(i.spot == ("oci-spot" in i.flags) for i in items)
    assert sorted({i.location for i in items}) == REGIONS
    assert len(items) == len(REGIONS) * 12  # 11 shapes, one of them preemptible too
    assert [i.price for i in items] == sorted(i.price for i in items)
    assert replay_oci.collect() == items  # deterministic


def test_requests_sent(env: None, api_key: tuple[str, str]) -> None:
    with mocks() as (http, sdk):
        replay_oci.register(http, sdk)
        OCIProvider.from_env().get()
        estimator_calls = list(http.calls)
        (regions_call,) = list(sdk.calls)

    assert [c.request.url for c in estimator_calls] == [SHAPES_URL, PRODUCTS_URL]
    for call in estimator_calls:
        assert call.request.method == "GET"
        assert call.request.headers["User-Agent"].startswith("gpuhunt/")
        assert "Authorization" not in call.request.headers  # public documents
    assert regions_call.request.method == "GET" and regions_call.request.url == REGIONS_URL
    auth = regions_call.request.headers["authorization"]
    assert auth.startswith("Signature ")
    assert f'keyId="{TENANCY}/{USER}/{api_key[1]}"' in auth  # signed with the env credentials


def test_credentials_from_a_config_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, api_key: tuple[str, str]
) -> None:
    key_file = tmp_path / "key.pem"
    key_file.write_text(api_key[0])
    config = tmp_path / "config"
    config.write_text(
        f"[DEFAULT]\nuser={USER}\nfingerprint={api_key[1]}\ntenancy={TENANCY}\n"
        f"region=us-ashburn-1\nkey_file={key_file}\n"
    )
    monkeypatch.setenv("OCI_CLI_CONFIG_FILE", str(config))
    with mocks() as (http, sdk):
        replay_oci.register(http, sdk)
        items = OCIProvider.from_env().get()
        assert f"{TENANCY}/{USER}/" in sdk.calls[0].request.headers["authorization"]
    assert find(items, "BM.GPU.H100.8").price == 80.0

    monkeypatch.setenv("OCI_CLI_PROFILE", "MISSING")
    with pytest.raises(MissingCredsError, match="'MISSING'.*OCI_CLI_PROFILE"):
        OCIProvider.from_env()
    incomplete = tmp_path / "incomplete"
    incomplete.write_text(f"[OTHER]\nuser={USER}\nregion=us-ashburn-1\n")
    monkeypatch.setenv("OCI_CLI_CONFIG_FILE", str(incomplete))
    monkeypatch.setenv("OCI_CLI_PROFILE", "OTHER")
    with pytest.raises(MissingCredsError, match="fingerprint is missing"):
        OCIProvider.from_env()


# --------------------------------------------------------------------------- credentials


def test_no_credentials_names_the_variables() -> None:
    with pytest.raises(MissingCredsError) as e:
        OCIProvider.from_env()
    for var in ("OCI_CLI_USER", "OCI_CLI_TENANCY", "OCI_CLI_KEY_CONTENT", "OCI_CLI_REGION"):
        assert var in str(e.value)
    assert "no-such-config" in str(e.value)


def test_partial_env_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCI_CLI_USER", USER)
    monkeypatch.setenv("OCI_CLI_REGION", "us-ashburn-1")
    with pytest.raises(MissingCredsError) as e:
        OCIProvider.from_env()
    message = str(e.value)
    assert "OCI_CLI_TENANCY" in message and "OCI_CLI_FINGERPRINT" in message
    assert "OCI_CLI_KEY_CONTENT (or OCI_CLI_KEY_FILE)" in message
    assert "OCI_CLI_USER" not in message


def test_malformed_env_credential(env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCI_CLI_FINGERPRINT", "not-a-fingerprint")
    with pytest.raises(MissingCredsError, match="fingerprint is malformed"):
        OCIProvider.from_env()


def test_a_key_that_does_not_load_is_a_clear_error(
    env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "-----BEGIN RSA PRIVATE KEY-----\nnot a key\n-----END RSA PRIVATE KEY-----\n"
    monkeypatch.setenv("OCI_CLI_KEY_CONTENT", secret)
    provider = OCIProvider.from_env()
    assert "not a key" not in repr(provider) and "BEGIN" not in repr(provider)
    with mocks() as (http, sdk):
        replay_oci.register(http, sdk)
        http.assert_all_requests_are_fired = sdk.assert_all_requests_are_fired = False
        with pytest.raises(ProviderError) as e:
            provider.get()
    assert "OCI_CLI_KEY_CONTENT" in str(e.value) and "not a key" not in str(e.value)


def test_repr_hides_the_key(env: None, api_key: tuple[str, str]) -> None:
    text = repr(OCIProvider.from_env())
    assert api_key[0][40:80] not in text and api_key[1] not in text and USER not in text


# --------------------------------------------------------------------------- identity API


def test_regions_refused_names_the_credentials(env: None) -> None:
    with mocks() as (http, sdk):
        replay_oci.register(http, sdk)
        sdk.replace(
            responses.GET,
            REGIONS_URL,
            status=401,
            json={
                "code": "NotAuthenticated",
                "message": "The required information to complete authentication was not provided.",
            },
        )
        with pytest.raises(ProviderError) as e:
            OCIProvider.from_env().get()
    assert "HTTP 401" in str(e.value) and "OCI_CLI_USER" in str(e.value)


@pytest.mark.parametrize("status", [429, 503])
def test_regions_retried_a_bounded_number_of_times(env: None, status: int) -> None:
    with mocks() as (http, sdk):
        replay_oci.register(http, sdk)
        failing = sdk.replace(responses.GET, REGIONS_URL, status=status, json={"code": "X"})
        with pytest.raises(ProviderError, match=f"HTTP {status}"):
            OCIProvider.from_env().get()
    assert failing.call_count == oci_provider.IDENTITY_MAX_ATTEMPTS


def test_regions_connection_error(env: None) -> None:
    with mocks() as (http, sdk):
        replay_oci.register(http, sdk)
        sdk.replace(
            responses.GET, REGIONS_URL, body=vendored_requests.exceptions.ConnectionError("down")
        )
        with pytest.raises(ProviderError, match="ListRegions failed"):
            OCIProvider.from_env().get()


# --------------------------------------------------------------------------- Cost Estimator


@pytest.mark.parametrize("status", [429, 502])
def test_estimator_retried_a_bounded_number_of_times(env: None, status: int) -> None:
    with mocks() as (http, sdk):
        failing = http.get(SHAPES_URL, status=status)
        with pytest.raises(ProviderError, match=f"HTTP {status}"):
            OCIProvider.from_env().get()
    assert failing.call_count == 4  # the first try and three retries


def test_estimator_invalid_json(env: None) -> None:
    with mocks() as (http, sdk):
        http.get(SHAPES_URL, body="<html>maintenance</html>")
        with pytest.raises(ProviderError, match="invalid JSON"):
            OCIProvider.from_env().get()


@pytest.mark.parametrize(
    ("shapes_payload", "products_payload", "field"),
    [
        ({"shapes": []}, {"items": []}, "'items'"),
        ([], {"items": []}, "'(document)'"),
        # a renamed field in every record: the document has changed, not one record
        (
            {
                "items": [
                    {k: v for k, v in s.items() if k != "allowPreemptible"}
                    for s in shapes()["items"]
                ]
            },
            products(),
            "'allowPreemptible'",
        ),
        # the sibling cetools API has no billingModel/pricetype
        (shapes(), load("apexapps_cetools_products_excerpt.json"), "'billingModel'"),
    ],
)
def test_a_changed_document_fails_naming_the_field(
    shapes_payload: Any, products_payload: Any, field: str
) -> None:
    with pytest.raises(ProviderError) as e:
        parse(shapes_payload, products_payload)
    assert field in str(e.value)


def test_a_malformed_record_is_skipped_and_counted() -> None:
    payload = shapes()
    assert payload["items"][2]["name"] == "BM.GPU.H100.8"
    payload["items"][2]["gpuQty"] = "eight"
    payload["items"].append("not a shape")
    items, report = parse(payload, products())
    assert len(report.skipped) == 2
    assert "BM.GPU.H100.8" in report.skipped[0] and "'gpuQty'" in report.skipped[0]
    assert "BM.GPU.H100.8" not in {i.instance_name for i in items}
    assert find(items, "BM.GPU4.8").price == 24.4  # the rest is collected


def test_shapes_that_cannot_be_priced_are_skipped_and_counted() -> None:
    payload = shapes()
    by_name = {s["name"]: s for s in payload["items"]}
    by_name["BM.DenseIO.E5.128"]["subType"]["value"] = "standard"  # now listed: it has a disk
    by_name["BM.GPU.H100.8"]["products"][0]["partNumber"] = "B00000"
    by_name["BM.GPU.MI300X.8"]["name"] = "BM.GPU.X9.8"  # a GPU nobody knows
    items, report = parse(payload, products())

    assert any("BM.DenseIO.E5.128" in s and "B98202" in s for s in report.skipped)
    assert any("BM.GPU.H100.8" in s and "B00000" in s for s in report.skipped)
    assert report.unknown_gpus == {"BM.GPU.X9.8": 1}
    assert {i.instance_name for i in items} >= {"BM.GPU4.8", "BM.Standard.E4.128"}


def test_nothing_priceable_fails() -> None:
    with pytest.raises(ProviderError, match="no shape could be listed and priced; first"):
        parse(shapes(), {"items": []})
    with pytest.raises(ProviderError, match="no shape could be listed and priced"):
        parse({"items": []}, products())


def test_hidden_and_inactive_shapes_are_not_listed() -> None:
    payload = shapes()
    for shape in payload["items"]:
        if shape["name"] == "BM.GPU.H100.8":
            shape["hidden"] = True
        if shape["name"] == "BM.GPU4.8":
            shape["status"] = "DEPRECATED"
    items, report = parse(payload, products())
    assert not {"BM.GPU.H100.8", "BM.GPU4.8"} & {i.instance_name for i in items}
    assert report.skipped == []


def test_tiered_rate_is_the_rate_past_the_free_allowance() -> None:
    # B93297 (A1 OCPU): free up to 3,000 OCPU-hours a month, then $0.01
    (a1,) = [
        i
        for i in load("apexapps_cetools_products_excerpt.json")["items"]
        if i["partNumber"] == "B93297"
    ]
    product = Product.model_validate({**a1, "billingModel": "UCM", "pricetype": "HOUR"})
    assert usd_per_hour(product) == 0.01
    assert usd_per_hour(Product.model_validate(products()["items"][0])) == 10  # B98415, H100


@pytest.mark.parametrize(
    ("shape", "gpu"),
    [
        ("BM.GPU.H100.8", "H100"),
        ("BM.GPU.H200.8", "H200"),
        ("BM.GPU.A100-v2.8", "A100"),
        ("BM.GPU4.8", "A100"),
        ("VM.GPU3.4", "V100"),
        ("VM.GPU2.1", "P100"),
        ("VM.GPU.A10.2", "A10"),
        ("BM.GPU.L40S.4", "L40S"),
        ("BM.GPU.MI300X.8", "MI300X"),
        ("BM.GPU.B200.8", "B200"),
        ("BM.GPU.GB200.4", "GB200"),
        ("BM.GPU.RTXPRO.8", "RTXPRO6000"),
        ("VM.Standard2.8", None),
        ("VM.Notgpu.A10", None),
        ("BM.GPU.X9.8", None),
    ],
)
def test_gpu_name_for_shape(shape: str, gpu: str | None) -> None:
    assert gpu_name_for_shape(shape) == gpu


def test_filter_keeps_launched_families() -> None:
    items = replay_oci.collect()
    assert OCIProvider.filter(items) == items
    odd = CatalogItem(
        provider="oci",
        instance_name="BM.HPC2.36",
        location="us-ashburn-1",
        price=2.7,
        cpu=72,
        memory=384,
        gpu_count=0,
        gpu_name=None,
        gpu_memory=None,
        spot=False,
        disk_size=None,
    )
    assert OCIProvider.filter([odd]) == []


def test_replay_does_not_leak_environment() -> None:
    before = {var: os.environ.get(var) for var in OCI_VARS}
    replay_oci.collect()
    assert {var: os.environ.get(var) for var in OCI_VARS} == before
