"""Lium over its public nodes feed, driven through the real request code with `responses`.

Recorded: `data/lium/public_v1_nodes_2026-09-10_trimmed.json` is a real answer of
`GET https://lium.io/api/public/v1/nodes` (2026-09-10, trimmed to four nodes; copied from
../shared/fixtures/lium). Its `disk_free_gb` values were added later and are partly illustrative
(see ../shared/fixtures/README.md).

Built here: single nodes derived from the recorded spot node with one field changed (`node()`),
to exercise validation, GPU counts and sizing; the expected offers are worked out by hand from
the feed with the rules in the module docstring (gpuhunt 0.1.34 gives the same for this feed).
"""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest
import responses

import gpuhunt
from gpuhunt._internal import cli, default
from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.models import AcceleratorVendor, QueryFilter
from gpuhunt.providers.lium import NODES_URL, LiumProvider, ParseReport, gpu_identity, parse_nodes
from tests.helpers import item, publish_archive

DATA = Path(__file__).parent / "data" / "lium"
RTX5090_JP = "ebdfdbe2-875a-4caa-8eea-1ab5c2a763e1"
H200_MS = "f092246d-5704-4c9e-b57f-7c0710a06deb"
RTX5090_MN = "45af0308-a13c-497f-93ea-ab06144eee29"
A100_VA = "6780e503-6861-4dca-bdec-ca9dcf37e8d0"


def feed() -> dict[str, Any]:
    return json.loads((DATA / "public_v1_nodes_2026-09-10_trimmed.json").read_text())


def node(**changes: Any) -> dict[str, Any]:
    """The recorded 1x RTX 5090 spot node with some fields changed (None deletes a field)."""
    base = copy.deepcopy(feed()["nodes"][2])
    for key, value in changes.items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    return base


def answer(*nodes: Any) -> dict[str, Any]:
    return {"generated_at": "2026-09-10T07:37:02Z", "count": len(nodes), "nodes": list(nodes)}


def shape(offer: Any) -> tuple:
    return (
        offer.instance_name,
        offer.location,
        offer.gpu_name,
        offer.gpu_count,
        offer.gpu_memory,
        offer.cpu,
        offer.memory,
        offer.disk_size,
        offer.price,
        offer.spot,
    )


# (node, location, GPU, count, GPU GB, vCPUs, RAM GB, disk GB, $/h, spot), cheapest first.
# RAM: (ram_gb - 0.5 - max(4, 1% of that)) * share, rounded down; disk: (disk_free_gb - 0.5)
# * share / 3, rounded down; vCPUs: cpu_count * share, rounded down; price: per GPU x count.
RECORDED_OFFERS = [
    (RTX5090_MN, "us-mn", "RTX5090", 1, 32.0, 24, 57.0, 499.0, 0.5, True),
    (H200_MS, "us-ms", "H200", 1, 141.0, 24, 249.0, 61.0, 3.99, False),
    (RTX5090_JP, "jp-13", "RTX5090", 8, 32.0, 384, 246.0, 266.0, 4.0, False),
    (H200_MS, "us-ms", "H200", 2, 141.0, 48, 498.0, 122.0, 7.98, False),
    (A100_VA, "us-va", "A100", 8, 80.0, 240, 1753.0, 4999.0, 9.84, False),
    (H200_MS, "us-ms", "H200", 3, 141.0, 72, 747.0, 183.0, 11.97, False),
    (H200_MS, "us-ms", "H200", 4, 141.0, 96, 997.0, 244.0, 15.96, False),
    (H200_MS, "us-ms", "H200", 5, 141.0, 120, 1246.0, 305.0, 19.95, False),
]


class TestRecordedFeed:
    @responses.activate
    def test_exact_offers(self) -> None:
        responses.get(NODES_URL, json=feed())
        provider = LiumProvider()

        offers = provider.get()

        assert [shape(o) for o in offers] == RECORDED_OFFERS
        for offer in offers:
            assert offer.provider == "lium"
            assert offer.gpu_vendor == AcceleratorVendor.NVIDIA
            assert offer.flags == []
            assert offer.provider_data == {
                "rent_url": f"https://lium.io/browse-pods/{offer.instance_name}"
            }
        assert provider.last_report == ParseReport()

    @responses.activate
    def test_request(self) -> None:
        responses.get(NODES_URL, json=feed())

        LiumProvider().get()
        LiumProvider().get(QueryFilter(min_gpu_count=2))  # the feed takes no filter: cached

        [call] = responses.calls
        assert call.request.method == "GET"
        assert call.request.url == NODES_URL
        assert "Authorization" not in call.request.headers
        assert call.request.headers["User-Agent"].startswith("gpuhunt/")

    def test_from_env_needs_no_credential(self) -> None:
        assert isinstance(LiumProvider.from_env(), LiumProvider)


class TestOrders:
    def offers(self, *nodes: Any) -> list:
        return parse_nodes(answer(*nodes))

    def test_every_count_from_the_smallest_order_to_the_free_gpus(self) -> None:
        offers = self.offers(
            node(gpu_count=8, available_gpu_count=6, min_rentable_gpu_count=2, cpu_count=64)
        )
        assert [(o.gpu_count, o.cpu) for o in offers] == [(c, 8 * c) for c in range(2, 7)]

    @pytest.mark.parametrize(
        ("counts", "expected"),
        [
            # (gpu_count, available_gpu_count, min_rentable_gpu_count) -> GPU counts offered
            ((2, 2, None), [2]),  # no minimum: the node cannot be split
            ((8, 3, None), []),  # ... and is partly rented
            ((8, 3, 4), []),  # fewer GPUs free than the smallest order
            ((8, 0, 1), []),  # fully rented
            ((2, 5, 1), [1, 2]),  # more "free" than the node has
        ],
    )
    def test_gpu_counts(self, counts: tuple, expected: list[int]) -> None:
        gpus, free, smallest = counts
        offers = self.offers(
            node(gpu_count=gpus, available_gpu_count=free, min_rentable_gpu_count=smallest)
        )
        assert [o.gpu_count for o in offers] == expected

    def test_small_host_keeps_the_minimum_ram_reserve(self) -> None:
        offers = self.offers(
            node(gpu_count=2, available_gpu_count=2, min_rentable_gpu_count=1, ram_gb=16)
        )
        assert [o.memory for o in offers] == [5.0, 11.0]  # (15.5 - 4) / 2 per GPU, rounded down

    def test_slices_whose_disk_rounds_to_nothing_are_not_offered(self) -> None:
        offers = self.offers(
            node(gpu_count=2, available_gpu_count=2, min_rentable_gpu_count=1, disk_free_gb=6)
        )
        assert [(o.gpu_count, o.disk_size) for o in offers] == [(2, 1.0)]  # 5.5 / 2 / 3 = 0

    def test_slices_with_less_than_one_vcpu_are_not_offered(self) -> None:
        offers = self.offers(
            node(gpu_count=4, available_gpu_count=4, min_rentable_gpu_count=1, cpu_count=2)
        )
        assert [(o.gpu_count, o.cpu) for o in offers] == [(2, 1), (3, 1), (4, 2)]

    @pytest.mark.parametrize(
        ("country", "region", "location"),
        [("US", "CA", "us-ca"), ("JP", "13", "jp-13"), ("DE", None, "de"), ("DE", "", "de")],
    )
    def test_locations(self, country: str, region: Any, location: str) -> None:
        [offer] = self.offers(node(country_code=country, region=region))
        assert offer.location == location

    def test_tier_other_than_spot_is_on_demand(self) -> None:
        [offer] = self.offers(node(tier="secure"))
        assert offer.spot is False

    def test_rent_url_is_optional(self) -> None:
        [offer] = self.offers(node(rent_url=None))
        assert offer.provider_data == {}

    def test_unknown_gpu_is_kept_with_the_feed_memory_and_counted(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        report = ParseReport()
        with caplog.at_level(logging.WARNING, logger="gpuhunt.providers"):
            offers = parse_nodes(
                answer(node(gpu_model="RTX 4090 D", gpu_memory_gb=24), node(id="other")), report
            )
        assert [(o.gpu_name, o.gpu_memory, o.gpu_vendor) for o in offers] == [
            ("RTX 4090 D", 24.0, AcceleratorVendor.NVIDIA),
            ("RTX5090", 32.0, AcceleratorVendor.NVIDIA),
        ]
        assert report.unknown_gpus == {"RTX 4090 D": 1}
        assert "RTX 4090 D" in caplog.text

    @pytest.mark.parametrize(
        ("model", "name", "memory"),
        [
            ("RTX 5090", "RTX5090", 32.0),
            ("A100-SXM4-80GB", "A100", 80.0),
            ("H100 80GB HBM3", "H100", 80.0),
            ("H200", "H200", 141.0),  # the feed's 140 GB snaps to the known size
            ("H200 NVL", "H200NVL", 141.0),
            ("B300 SXM6 AC", "B300", 270.0),
            ("RTX PRO 6000 Blackwell Server Edition", "RTXPRO6000", 96.0),
            ("RTX 6000 Ada Generation", "RTX6000Ada", 48.0),
            ("RTX A6000", "A6000", 48.0),
            ("Tesla V100 Tensor Core GPU", "V100", 32.0),
        ],
    )
    def test_gpu_spellings(self, model: str, name: str, memory: float) -> None:
        reported = {"H200": 140, "H200 NVL": 140, "B300 SXM6 AC": 268}.get(model, memory)
        assert gpu_identity(model, reported)[0::2] == (name, memory)


class TestMalformed:
    @pytest.mark.parametrize(
        ("bad", "reason"),
        [
            ("not a node", "expected an object"),
            (node(id=None), "'id'"),
            (node(id=""), "'id'"),
            (node(gpu_model=None), "'gpu_model'"),
            (node(price_per_gpu_hour=None), "'price_per_gpu_hour'"),
            (node(price_per_gpu_hour="0.5"), "'price_per_gpu_hour'"),
            (node(price_per_gpu_hour=0), "'price_per_gpu_hour'"),
            (node(price_per_gpu_hour=-1.5), "'price_per_gpu_hour'"),
            (node(price_per_gpu_hour=float("inf")), "'price_per_gpu_hour' is not finite"),
            (node(price_per_gpu_hour=float("nan")), "'price_per_gpu_hour' is not finite"),
            (node(price_per_gpu_hour=5000), "'price_per_gpu_hour'"),
            (node(gpu_count=0), "'gpu_count'"),
            (node(gpu_count=1.5), "'gpu_count'"),
            (node(gpu_count=True), "'gpu_count'"),
            (node(gpu_count=1000), "'gpu_count'"),
            (node(available_gpu_count=-1), "'available_gpu_count'"),
            (node(min_rentable_gpu_count="one"), "'min_rentable_gpu_count'"),
            (node(gpu_memory_gb=0), "'gpu_memory_gb'"),
            (node(gpu_memory_gb=1e9), "'gpu_memory_gb'"),
            (node(cpu_count=0), "'cpu_count'"),
            (node(ram_gb=None), "'ram_gb'"),
            (node(disk_free_gb=None), "'disk_free_gb'"),  # no disk: it would pass disk filters
            (node(disk_free_gb=0), "'disk_free_gb'"),
            (node(disk_free_gb="100"), "'disk_free_gb'"),
            (node(country_code=None), "'country_code'"),
        ],
    )
    @responses.activate
    def test_bad_node_is_skipped_and_counted(self, bad: Any, reason: str) -> None:
        responses.get(NODES_URL, json=answer(bad, node(id="good")))
        provider = LiumProvider()

        offers = provider.get()

        assert [o.instance_name for o in offers] == ["good"]
        [skipped] = provider.last_report.skipped
        assert reason in skipped

    @pytest.mark.parametrize(
        "payload", [[], {"nodes": {}}, {"count": 0}, "nodes"], ids=["list", "dict", "none", "str"]
    )
    @responses.activate
    def test_wrong_shape_is_a_provider_error(self, payload: Any) -> None:
        responses.get(NODES_URL, json=payload)
        with pytest.raises(ProviderError, match="lium: nodes feed"):
            LiumProvider().get()

    def test_count_that_differs_from_the_nodes_is_logged(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        payload = answer(node())
        payload["count"] = 4
        with caplog.at_level(logging.WARNING, logger="gpuhunt.providers.lium"):
            assert len(parse_nodes(payload)) == 1
        assert "says 4 nodes but lists 1" in caplog.text


class TestHttpErrors:
    @pytest.mark.parametrize("status", [401, 403])
    @responses.activate
    def test_refusal(self, status: int) -> None:
        responses.get(NODES_URL, status=status)
        with pytest.raises(ProviderError, match=f"lium: GET {NODES_URL} was refused .*{status}"):
            LiumProvider().get()

    @pytest.mark.parametrize("status", [429, 500, 503])
    @responses.activate
    def test_overload_is_retried_a_bounded_number_of_times(self, status: int) -> None:
        responses.get(NODES_URL, status=status)
        with pytest.raises(ProviderError, match=f"HTTP {status}"):
            LiumProvider().get()
        assert len(responses.calls) == 4  # the first try and 3 retries

    @responses.activate
    def test_server_error_then_success(self) -> None:
        responses.get(NODES_URL, status=502)
        responses.get(NODES_URL, json=feed())
        assert len(LiumProvider().get()) == len(RECORDED_OFFERS)
        assert len(responses.calls) == 2

    @responses.activate
    def test_invalid_json(self) -> None:
        responses.get(NODES_URL, body="<html>maintenance</html>")
        with pytest.raises(ProviderError, match="invalid JSON"):
            LiumProvider().get()

    @responses.activate
    def test_errors_are_not_cached(self) -> None:
        responses.get(NODES_URL, status=404)
        responses.get(NODES_URL, json=feed())
        with pytest.raises(ProviderError):
            LiumProvider().get()
        assert LiumProvider().get()
        assert len(responses.calls) == 2  # the failure was not kept for the TTL


@pytest.fixture
def catalog_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A published catalog with one offline offer, and a fresh default catalog."""
    publish_archive(tmp_path, "20261201-1", {"aws": storage_csv()})
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path))
    for var in ("DAYTONA_API_KEY", "DAYTONA_API_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(default, "_catalog", None)
    return tmp_path


def storage_csv() -> bytes:
    from gpuhunt._internal.formats.csv import csv_bytes

    return csv_bytes([item(price=2.0, instance_name="p5.48xlarge", gpu_name="H100")])


@responses.activate
def test_default_catalog_queries_lium(catalog_env: Path) -> None:
    responses.get(NODES_URL, json=feed())

    assert "lium" in {p.NAME for p in gpuhunt.default_catalog().providers}
    offers = gpuhunt.query(provider="lium", gpu_name="H200", min_gpu_count=2)

    assert [(o.instance_name, o.gpu_count, o.price) for o in offers] == [
        (H200_MS, c, round(3.99 * c, 5)) for c in (2, 3, 4, 5)
    ]


def test_cli_lists_lium(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["providers"]) == 0
    lines = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()}
    assert lines["lium"] == ["online"]


@responses.activate
def test_cli_online_query(catalog_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    responses.get(NODES_URL, json=feed())

    code = cli.main(["query", "--provider", "lium", "--online", "--spot", "--json"])

    assert code == 0
    [row] = json.loads(capsys.readouterr().out)
    assert (row["provider"], row["instance_name"], row["location"]) == ("lium", RTX5090_MN, "us-mn")
    assert (row["gpu_name"], row["gpu_count"], row["price"], row["spot"]) == (
        "RTX5090",
        1,
        0.5,
        True,
    )
    assert [c.request.url for c in responses.calls] == [NODES_URL]


@responses.activate
def test_cli_online_query_when_lium_fails(
    catalog_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    responses.get(NODES_URL, status=500)

    # The only provider asked failed: an error (exit 1, not the user's doing), not "0 offers".
    assert cli.main(["query", "--provider", "lium", "--online"]) == 1

    out, err = capsys.readouterr()
    assert out == ""
    assert "gpuhunt: error: No provider asked for answered (lium:" in err and "HTTP 500" in err
    assert "Traceback" not in err
