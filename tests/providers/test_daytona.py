"""Daytona, driven through the real request code with `responses`.

Nothing here is a live recording. `data/daytona/` (copied from ../shared/fixtures/daytona) holds
the answer shapes of the rate card (`gpu_pricing_testfixture.json`), an organization's GPU
capacity and the shared regions, with the values gpuhunt 0.1.34's own tests use; field names
follow Daytona's API (Bearer auth, `DAYTONA_API_URL` default `https://app.daytona.io/api`, as in
Daytona's API-key docs). Built here: the answer of `GET /api-keys/current`
(`{"organizationId": ...}`), and variants of the fixtures with one entry broken.

The expected offers are worked out by hand: sizes from gpuhunt 0.1.34's defaults (8 vCPUs, 100 GiB
RAM, 50 on GeForce cards, and 256 GiB disk per GPU; 1 vCPU, 1 GiB, 3 GiB for a CPU sandbox)
within the query's bounds and Daytona's per-GPU limits (16 vCPUs, 192 GiB RAM, 512 GiB disk),
prices from the rate card's per-GPU and per-unit rates. test_daytona_0134.py compares whole
answers with 0.1.34's own.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
import responses

import gpuhunt
from gpuhunt._internal import cli, default
from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.models import AcceleratorVendor, QueryFilter
from gpuhunt.providers.daytona import (
    API_URL,
    PRICING_URL,
    DaytonaProvider,
    ParseReport,
    parse_capacity,
    parse_pricing,
    parse_regions,
)
from tests.helpers import item, publish_archive
from tests.providers.daytona_answers import (
    CAPACITY_URL,
    IDENTITY_URL,
    KEY,
    ORG,
    REGIONS_URL,
    load,
    pricing,
    serve,
)


def row(offer: Any) -> tuple:
    return (
        offer.instance_name,
        offer.location,
        offer.gpu_name,
        offer.gpu_count,
        offer.gpu_memory,
        offer.price,
        offer.spot,
    )


def urls() -> list[str]:
    return [call.request.url for call in responses.calls]


# H100: 8 vCPUs, 100 GiB RAM, 256 GiB disk per GPU. Per GPU on demand: 3.95 + 8 x 0.0504
# + 100 x 0.0162 + 256 x 0.000108 = 6.000848; spot: 2.27 + 8 x 0.03 + 100 x 0.0093
# + 256 x 0.000062 = 3.455872.
# RTX-PRO-6000: the same shape, 3.03 + 0.4032 + 1.62 + 0.027648 = 5.080848 on demand; the
# organization has no spot capacity for it.
# CPU sandbox: 1 vCPU, 1 GiB RAM, 3 GiB disk: 0.0504 + 0.0162 + 0.000324 = 0.066924.
# Order: by price, equal prices in the order made (rate card, on demand first, then regions).
CAPACITY_OFFERS = sorted(
    [
        *[
            (f"{n}x-H100-{8 * n}cpu-{100 * n}gb-{256 * n}gb", "earth", "H100", n, 80.0, p, spot)
            for spot, per_gpu in ((False, 6.000848), (True, 3.455872))
            for n in range(1, 9)
            for p in [round(per_gpu * n, 6)]
        ],
        ("1x-RTXPRO6000-8cpu-100gb-256gb", "earth", "RTXPRO6000", 1, 96.0, 5.080848, False),
        ("2x-RTXPRO6000-16cpu-200gb-512gb", "earth", "RTXPRO6000", 2, 96.0, 10.161696, False),
        ("1cpu-1gb-3gb", "us", None, 0, None, 0.066924, False),
        ("1cpu-1gb-3gb", "eu", None, 0, None, 0.066924, False),
    ],
    key=lambda r: r[5],
)


class TestOffers:
    @responses.activate
    def test_exact_offers_with_the_organizations_capacity(self) -> None:
        serve()
        provider = DaytonaProvider(api_key=KEY)

        offers = provider.get()

        # B200 has capacity but sandboxes cannot have it; H100 8/8 and RTX-PRO-6000 2/0.
        assert [row(o) for o in offers] == CAPACITY_OFFERS
        for offer in offers:
            assert offer.provider == "daytona"
            assert offer.gpu_vendor == (AcceleratorVendor.NVIDIA if offer.gpu_count else None)
            expected = {"gpu_type": "RTX-PRO-6000"} if offer.gpu_name == "RTXPRO6000" else {}
            assert offer.provider_data == expected
        assert provider.last_report.capacity_checked
        assert provider.last_report.skipped == [] and not provider.last_report.unknown_gpus
        assert urls() == [PRICING_URL, IDENTITY_URL, CAPACITY_URL, REGIONS_URL]

    @responses.activate
    def test_public_offers_without_a_key(self) -> None:
        serve()
        provider = DaytonaProvider()

        offers = provider.get()

        gpu = [o for o in offers if o.gpu_count]
        cpu = [o for o in offers if not o.gpu_count]
        # 7 creatable types x 8 counts x (on demand, spot); B200 is not offered.
        assert len(gpu) == 7 * 8 * 2
        assert [(o.location, o.price) for o in cpu] == [("us", 0.066924), ("eu", 0.066924)]
        one_gpu = [
            (o.instance_name, o.gpu_memory, o.gpu_vendor.value, o.price, o.spot)  # type: ignore[union-attr]
            for o in gpu
            if o.gpu_count == 1
        ]
        assert sorted(one_gpu) == sorted(
            [
                ("1x-B300-8cpu-100gb-256gb", 270.0, "nvidia", 9.150848, False),
                ("1x-B300-8cpu-100gb-256gb", 270.0, "nvidia", 5.265872, True),
                ("1x-MI355X-8cpu-100gb-256gb", 288.0, "amd", 8.040848, False),
                ("1x-MI355X-8cpu-100gb-256gb", 288.0, "amd", 4.625872, True),
                ("1x-H200-8cpu-100gb-256gb", 141.0, "nvidia", 6.590848, False),
                ("1x-H200-8cpu-100gb-256gb", 141.0, "nvidia", 3.795872, True),
                ("1x-H100-8cpu-100gb-256gb", 80.0, "nvidia", 6.000848, False),
                ("1x-H100-8cpu-100gb-256gb", 80.0, "nvidia", 3.455872, True),
                ("1x-RTXPRO6000-8cpu-100gb-256gb", 96.0, "nvidia", 5.080848, False),
                ("1x-RTXPRO6000-8cpu-100gb-256gb", 96.0, "nvidia", 2.925872, True),
                # GeForce cards: 50 GiB RAM per GPU
                ("1x-RTX5090-8cpu-50gb-256gb", 32.0, "nvidia", 2.530848, False),
                ("1x-RTX5090-8cpu-50gb-256gb", 32.0, "nvidia", 1.460872, True),
                ("1x-RTX4090-8cpu-50gb-256gb", 24.0, "nvidia", 2.230848, False),
                ("1x-RTX4090-8cpu-50gb-256gb", 24.0, "nvidia", 1.290872, True),
            ]
        )
        assert {o.location for o in gpu} == {"earth"}
        assert [o.price for o in offers] == sorted(o.price for o in offers)
        assert not provider.last_report.capacity_checked
        assert urls() == [PRICING_URL, REGIONS_URL]
        assert all("Authorization" not in c.request.headers for c in responses.calls)

    @pytest.mark.parametrize(
        ("q", "balance", "expected"),
        [
            # (cpu, memory, disk) of 1x H100 on demand
            (QueryFilter(), True, (8, 100, 256)),
            (QueryFilter(), False, (1, 1, 1)),
            # the example: 0.1.34 gives exactly these
            (QueryFilter(min_cpu=12, min_memory=125.2, min_disk_size=300), True, (12, 126, 300)),
            (QueryFilter(min_cpu=5, min_memory=13.2, min_disk_size=40), False, (5, 14, 40)),
            (QueryFilter(max_cpu=4, max_memory=40.5, max_disk_size=128), True, (4, 40, 128)),
            (QueryFilter(min_memory=192), True, (8, 192, 256)),
        ],
    )
    @responses.activate
    def test_sizing_for_the_query(self, q: QueryFilter, balance: bool, expected: tuple) -> None:
        serve()
        q.gpu_name, q.min_gpu_count, q.max_gpu_count, q.spot = ["H100"], 1, 1, False

        offers = [o for o in DaytonaProvider().get(q, balance) if o.gpu_name == "H100"]

        [offer] = [o for o in offers if o.gpu_count == 1 and not o.spot]
        assert (offer.cpu, offer.memory, offer.disk_size) == expected
        cpu, memory, disk = expected
        assert offer.price == round(3.95 + cpu * 0.0504 + memory * 0.0162 + disk * 0.000108, 6)
        assert offer.instance_name == f"1x-H100-{cpu}cpu-{memory}gb-{disk}gb"

    @pytest.mark.parametrize(
        "q",
        [
            QueryFilter(min_cpu=17),  # more than 16 vCPUs per GPU
            QueryFilter(min_memory=192.1),
            QueryFilter(min_disk_size=513),
            QueryFilter(max_cpu=0),  # a sandbox has at least 1 vCPU
        ],
    )
    @responses.activate
    def test_daytona_limits_per_gpu(self, q: QueryFilter) -> None:
        serve()
        q.min_gpu_count = q.max_gpu_count = 1
        assert [o for o in DaytonaProvider().get(q) if o.gpu_count] == []

    @responses.activate
    def test_three_h100_without_balancing(self) -> None:
        serve()
        q = QueryFilter(gpu_name=["H100"], min_gpu_count=3, max_gpu_count=3, spot=False)
        offers = [o for o in DaytonaProvider().get(q, balance_resources=False) if o.gpu_count]
        h100 = [o for o in offers if o.gpu_name == "H100" and not o.spot]
        assert [(o.cpu, o.memory, o.disk_size, o.price) for o in h100] == [(1, 1, 1, 11.916708)]

    @responses.activate
    def test_cpu_only_query_asks_for_no_capacity(self) -> None:
        serve()
        offers = DaytonaProvider(api_key=KEY).get(QueryFilter(max_gpu_count=0, min_memory=64))
        # 64 GiB; vCPUs and disk stay at the default 1 and 3
        assert [(o.instance_name, o.location) for o in offers] == [
            ("1cpu-64gb-3gb", "us"),
            ("1cpu-64gb-3gb", "eu"),
        ]
        assert offers[0].price == round(0.0504 + 64 * 0.0162 + 3 * 0.000108, 6)
        assert urls() == [PRICING_URL, REGIONS_URL]

    @pytest.mark.parametrize(
        "q", [QueryFilter(min_gpu_count=1), QueryFilter(spot=True), QueryFilter(max_price=0.06)]
    )
    @responses.activate
    def test_regions_are_not_asked_when_no_cpu_sandbox_matches(self, q: QueryFilter) -> None:
        serve()
        DaytonaProvider().get(q)
        assert REGIONS_URL not in urls()

    @responses.activate
    def test_gpu_counts_follow_the_query(self) -> None:
        serve()
        offers = DaytonaProvider().get(QueryFilter(min_gpu_count=3, max_gpu_count=4))
        assert {o.gpu_count for o in offers} == {3, 4}


class TestCredentials:
    @responses.activate
    def test_key_goes_only_to_the_authenticated_endpoints(self) -> None:
        serve()
        DaytonaProvider(api_key=KEY).get()
        for call in responses.calls:
            sent = call.request.headers.get("Authorization")
            if call.request.url in (IDENTITY_URL, CAPACITY_URL):
                assert sent == f"Bearer {KEY}"
            else:
                assert sent is None

    @responses.activate
    def test_organization_is_asked_once(self) -> None:
        serve()
        provider = DaytonaProvider(api_key=KEY)
        provider.get()
        from gpuhunt._internal.load import livecache

        livecache.LIVE_CACHE.clear()  # as after the TTL
        provider.get()
        assert urls().count(IDENTITY_URL) == 1
        assert urls().count(CAPACITY_URL) == 2

    @pytest.mark.parametrize("path", ["/api-keys/current", f"/organizations/{ORG}/gpu-capacity"])
    @responses.activate
    def test_redirect_to_another_host_is_not_followed(self, path: str) -> None:
        elsewhere = "https://collector.example/steal"
        responses.get(PRICING_URL, json=pricing())
        responses.get(IDENTITY_URL, json={"organizationId": ORG})
        responses.get(CAPACITY_URL, json=load("organization_gpu_capacity_testfixture.json"))
        responses.get(elsewhere, json={"organizationId": ORG, "capacity": []})
        # Registered last, so it answers before the ordinary answer of that path.
        responses.replace(
            responses.GET, API_URL + path, status=302, headers={"Location": elsewhere}
        )

        with pytest.raises(ProviderError, match="redirect .*HTTP 302.* not follow"):
            DaytonaProvider(api_key=KEY).get()

        assert elsewhere not in urls()
        assert all("collector.example" not in url for url in urls())

    def test_from_env_without_a_key(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("DAYTONA_API_KEY", raising=False)
        monkeypatch.delenv("DAYTONA_API_URL", raising=False)
        provider = DaytonaProvider.from_env()
        assert (provider.api_key, provider.api_url) == (None, API_URL)

    @pytest.mark.parametrize("blank", ["", "   "])
    def test_blank_key_is_no_key(self, blank: str) -> None:
        assert DaytonaProvider(api_key=blank).api_key is None

    @responses.activate
    def test_from_env_with_key_and_url(self, monkeypatch: pytest.MonkeyPatch) -> None:
        api_url = "https://daytona.internal.example/api"
        serve(api_url=api_url)
        monkeypatch.setenv("DAYTONA_API_KEY", KEY)
        monkeypatch.setenv("DAYTONA_API_URL", api_url + "/")

        provider = DaytonaProvider.from_env()
        assert not responses.calls  # nothing is asked before a query
        assert provider.get()

        assert urls() == [
            PRICING_URL,
            f"{api_url}/api-keys/current",
            f"{api_url}/organizations/{ORG}/gpu-capacity",
            f"{api_url}/shared-regions",
        ]
        assert KEY not in repr(provider) and "***" in repr(provider)

    @pytest.mark.parametrize(
        "url", ["http://daytona.example/api", "ftp://daytona.example", "app.daytona.io/api"]
    )
    def test_key_is_never_sent_over_plain_http_to_another_machine(self, url: str) -> None:
        with pytest.raises(ProviderError, match="DAYTONA_API_URL must be an https:// URL"):
            DaytonaProvider(api_key=KEY, api_url=url)

    def test_plain_http_to_loopback_is_allowed(self) -> None:
        assert DaytonaProvider(api_url="http://127.0.0.1:3000/api/").api_url == (
            "http://127.0.0.1:3000/api"
        )

    @responses.activate
    def test_missing_key_is_mentioned_once(self, caplog: pytest.LogCaptureFixture) -> None:
        serve()
        provider = DaytonaProvider()
        with caplog.at_level(logging.INFO, logger="gpuhunt.providers.daytona"):
            provider.get()
            provider.get()
        notes = [r for r in caplog.records if "DAYTONA_API_KEY" in r.getMessage()]
        assert len(notes) == 1 and notes[0].levelno == logging.INFO


class TestHttpErrors:
    @pytest.mark.parametrize("url", [IDENTITY_URL, CAPACITY_URL])
    @pytest.mark.parametrize("status", [401, 403])
    @responses.activate
    def test_refused_key_names_the_variable(self, url: str, status: int) -> None:
        responses.get(url, status=status)
        serve()
        with pytest.raises(ProviderError, match=f"HTTP {status}; check DAYTONA_API_KEY"):
            DaytonaProvider(api_key=KEY).get()

    @pytest.mark.parametrize("url", [PRICING_URL, CAPACITY_URL, REGIONS_URL])
    @pytest.mark.parametrize("status", [429, 500, 503])
    @responses.activate
    def test_overload_is_retried_then_fails_the_query(self, url: str, status: int) -> None:
        serve()
        responses.replace(responses.GET, url, status=status)
        with pytest.raises(ProviderError, match=f"daytona: GET .* HTTP {status}"):
            DaytonaProvider(api_key=KEY).get()
        assert urls().count(url) == 4  # the first try and 3 retries; never a fallback

    @responses.activate
    def test_server_error_then_success(self) -> None:
        responses.get(PRICING_URL, status=502)
        serve()
        assert DaytonaProvider().get()
        assert urls().count(PRICING_URL) == 2

    @pytest.mark.parametrize("url", [PRICING_URL, IDENTITY_URL, CAPACITY_URL, REGIONS_URL])
    @responses.activate
    def test_invalid_json(self, url: str) -> None:
        responses.get(url, body="<html>oops</html>")
        serve()
        with pytest.raises(ProviderError, match="invalid JSON"):
            DaytonaProvider(api_key=KEY).get()

    @pytest.mark.parametrize(
        ("url", "payload", "message"),
        [
            (PRICING_URL, [], "gpu-pricing: expected an object"),
            (PRICING_URL, {"gpus": []}, "'resources' is missing"),
            (PRICING_URL, {"gpus": {}, "resources": pricing()["resources"]}, "'gpus'"),
            (PRICING_URL, {"gpus": [], "resources": {"onDemand": {}}}, "'resources.onDemand."),
            (IDENTITY_URL, {}, "'organizationId' is missing"),
            (IDENTITY_URL, {"organizationId": ""}, "'organizationId' is missing"),
            (CAPACITY_URL, {}, "'capacity' is missing"),
            (CAPACITY_URL, [], "'capacity' is missing"),
            (REGIONS_URL, {"regions": []}, "shared-regions: expected a list"),
        ],
    )
    @responses.activate
    def test_wrong_shape(self, url: str, payload: Any, message: str) -> None:
        responses.get(url, json=payload)
        serve()
        with pytest.raises(ProviderError, match=message):
            DaytonaProvider(api_key=KEY).get()

    @responses.activate
    def test_negative_rate_fails_the_answer(self) -> None:
        rates = pricing()
        rates["resources"]["spot"]["diskGiBPerHour"] = -1
        serve(rates=rates)
        with pytest.raises(ProviderError, match="'resources.spot.diskGiBPerHour'"):
            DaytonaProvider().get()


class TestMalformedRecords:
    def test_bad_rate_card_entries_are_skipped_and_counted(self) -> None:
        rates = pricing()
        rates["gpus"] = [
            {"type": "H100", "onDemandPricePerHour": 3.95, "spotPricePerHour": 2.27},
            {"onDemandPricePerHour": 1.0, "spotPricePerHour": 0.5},  # no type
            "H200",  # not an object
            {"type": "RTX-4090", "onDemandPricePerHour": "0.99", "spotPricePerHour": 0.57},
            {"type": "RTX-5090", "onDemandPricePerHour": float("nan"), "spotPricePerHour": -1},
            {"type": "H200", "onDemandPricePerHour": 1e6, "spotPricePerHour": 2.61},
            {"type": "B400", "onDemandPricePerHour": 9.99, "spotPricePerHour": 5.99},
            {"type": "B200", "onDemandPricePerHour": 6.25, "spotPricePerHour": 3.59},
        ]
        report = ParseReport()

        parsed = parse_pricing(rates, report)

        assert [(g.type, sorted(g.prices.items())) for g in parsed.gpus] == [
            ("H100", [(False, 3.95), (True, 2.27)]),
            ("RTX-4090", [(True, 0.57)]),  # its on-demand price is a string
            ("H200", [(True, 2.61)]),  # its on-demand price is implausible
        ]
        assert len(report.skipped) == 6
        assert report.skipped[:2] == [
            "gpu-pricing entry #1: no GPU 'type'",
            "gpu-pricing entry #2: no GPU 'type'",
        ]
        assert report.unknown_gpus == {"B400": 1}  # B200 is known and deliberately left out

    @responses.activate
    def test_bad_capacity_entry_means_no_offers_of_that_type(self) -> None:
        capacity = {
            "capacity": [
                {"gpuType": "H100", "availableOnDemand": 2, "availableSpot": -1},
                {"gpuType": "H200", "availableOnDemand": 1, "availableSpot": 0},
                {"availableOnDemand": 8, "availableSpot": 8},
                {"gpuType": "RTX-4090", "availableOnDemand": 1.5, "availableSpot": 0},
                {"gpuType": "RTX-5090", "availableOnDemand": 100, "availableSpot": 1},
            ]
        }
        serve(capacity=capacity)
        provider = DaytonaProvider(api_key=KEY)

        offers = provider.get(QueryFilter(min_gpu_count=1))

        assert sorted({(o.gpu_name, o.gpu_count, o.spot) for o in offers}) == sorted(
            [
                ("H200", 1, False),
                *[("RTX5090", n, False) for n in range(1, 9)],  # at most 8 GPUs per sandbox
                ("RTX5090", 1, True),
            ]
        )
        assert len(provider.last_report.skipped) == 3

    def test_capacity_parsing(self) -> None:
        report = ParseReport()
        parsed = parse_capacity(load("organization_gpu_capacity_testfixture.json"), report)
        assert parsed == {
            "H100": {False: 8, True: 8},
            "RTX-PRO-6000": {False: 2, True: 0},
            "B200": {False: 8, True: 8},
        }
        assert report.skipped == []

    def test_bad_regions_are_skipped_and_counted(self) -> None:
        report = ParseReport()
        payload = [{"id": "us"}, {"id": ""}, "eu", {"name": "x"}, {"id": "us"}, {"id": "eu"}]
        assert parse_regions(payload, report) == ["us", "eu"]
        assert len(report.skipped) == 3

    @responses.activate
    def test_no_shared_regions_means_no_cpu_offers(self) -> None:
        serve(regions=[])
        assert DaytonaProvider().get(QueryFilter(max_gpu_count=0)) == []


@pytest.fixture
def catalog_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    csv = csv_bytes([item(price=2.0, instance_name="p5.48xlarge", gpu_name="H100")])
    publish_archive(tmp_path, "20261201-1", {"aws": csv})
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path))
    monkeypatch.delenv("DAYTONA_API_KEY", raising=False)
    monkeypatch.delenv("DAYTONA_API_URL", raising=False)
    monkeypatch.setattr(default, "_catalog", None)
    return tmp_path


@responses.activate
def test_default_catalog_includes_daytona_without_a_key(catalog_env: Path) -> None:
    serve()
    assert "daytona" in {p.NAME for p in gpuhunt.default_catalog().providers}
    offers = gpuhunt.query(provider="daytona", gpu_name="MI355X", max_gpu_count=1, spot=True)
    assert [(o.instance_name, o.price) for o in offers] == [
        ("1x-MI355X-8cpu-100gb-256gb", 4.625872)
    ]


def test_default_catalog_skips_daytona_with_an_unsafe_url(
    catalog_env: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("DAYTONA_API_URL", "http://daytona.example/api")
    with caplog.at_level(logging.WARNING):
        providers = {p.NAME for p in gpuhunt.default_catalog().providers}
    assert "daytona" not in providers
    assert "DAYTONA_API_URL must be an https:// URL" in caplog.text


def test_cli_lists_daytona_and_its_variables(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["providers"]) == 0
    lines = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()}
    assert lines["daytona"] == ["online", "DAYTONA_API_KEY", "DAYTONA_API_URL"]


@responses.activate
def test_cli_online_query(catalog_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    serve()
    argv = ["query", "--provider", "daytona", "--online", "--max-gpu-count", "0", "--json"]
    assert cli.main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["instance_name"], r["location"], r["price"]) for r in rows] == [
        ("1cpu-1gb-3gb", "us", 0.066924),
        ("1cpu-1gb-3gb", "eu", 0.066924),
    ]
