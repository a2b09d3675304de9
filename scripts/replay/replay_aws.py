"""Replays the AWS collection through the real `AWSProvider.get()`, without network.

- EC2 Price List bulk CSV: `data/aws/price_list_sample.csv.gz`, made by
  `/work/shared/tools/make_aws_price_list.py` (see `data/aws/README.md`): the real file's metadata
  lines, 91-column header and quoting, with one accepted row per (instance type, region) carrying
  the real on-demand price published on 2026-01-21, plus rows a collector must reject. Served
  gzip-encoded over HTTP at the real URL with `responses`.
- `DescribeInstanceTypes`: a moto server on 127.0.0.1, which answers from the real instance type
  data moto bundles (boto3 -> HTTP -> moto, the real request code).
- `DescribeSpotPriceHistory`: answered at the boto3 client boundary, never by moto (its spot
  prices are placeholders). By default every region answers with an empty history (on-demand
  offers only); given `spot_prices` (the snapshot passes vantage.sh's dated GPU spot prices,
  `scripts/snapshot_sources/vantage_aws_spot.py`), each region answers with those of the
  requested types, and the collector makes its spot offers from them as from the live API.
"""

from __future__ import annotations

import gzip
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
import responses
from botocore.awsrequest import AWSResponse
from moto.server import ThreadedMotoServer

from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers.aws import EC2_PRICING_URL, AWSProvider, ec2_client_config
from scripts.replay import RECORDINGS

RECORDED_AT = "2026-01-21"
DATA = RECORDINGS / "aws"
PRICE_LIST = DATA / "price_list_sample.csv.gz"
EXPECTED = DATA / "price_list_sample.csv.expected.jsonl"
# Every (instance type, region) on-demand price of the 2026-01-21 catalog, nothing else; see
# data/aws/README.md.
FULL_PRICE_LIST = DATA / "price_list_full_2026-01-21.csv.gz"
# The g7 family (RTX PRO 4500), absent from the 2026-01-21 catalog: its on-demand prices of
# 2026-08-26 (tsaol/aws-gpu data/g7_instances.js@299375be), in the same format; see
# data/aws/README.md.
G7_PRICE_LIST = DATA / "price_list_g7_2026-08-26.csv.gz"
# The CPU families `filter()` publishes, in us-east-1 and the two GovCloud regions: Karpenter's
# generated on-demand prices of 2026-07-20 with DescribeInstanceTypes' vCPUs and memory; see
# data/aws/README.md.
CPU_PRICE_LIST = DATA / "price_list_cpu_2026-07-20.csv.gz"
DUMMY_KEY_ID = "AKIAREPLAYREPLAYREPL"
DUMMY_SECRET = "replay-secret-not-a-real-key"  # noqa: S105


def price_list_text() -> str:
    return gzip.decompress(PRICE_LIST.read_bytes()).decode("utf-8")


def register_price_list(
    rsps: responses.RequestsMock, url: str = EC2_PRICING_URL, path: Path = PRICE_LIST
) -> None:
    """Serve the sample price list the way the pricing endpoint may: gzip content-encoded."""
    rsps.add(
        responses.GET,
        url,
        body=path.read_bytes(),
        headers={"Content-Encoding": "gzip"},
        content_type="text/csv",
    )


@contextmanager
def moto_endpoint() -> Iterator[str]:
    """A moto server on a free local port; yields its URL."""
    access_log = logging.getLogger("werkzeug")  # one line per request otherwise
    level = access_log.level
    access_log.setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        access_log.setLevel(level)


def _empty_spot_history(**_: Any) -> tuple[AWSResponse, dict[str, Any]]:
    return AWSResponse("", 200, {}, None), {"SpotPriceHistory": []}


def _spot_history_from(
    prices: Mapping[tuple[str, str], float], region: str
) -> Callable[..., tuple[AWSResponse, dict[str, Any]]]:
    from scripts.snapshot_sources.vantage_aws_spot import history_items

    def answer(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        body = params.get("body") or {}
        asked = [v for k, v in sorted(body.items()) if k.startswith("InstanceType.")]
        items = history_items(prices, region, asked)
        return AWSResponse("", 200, {}, None), {"SpotPriceHistory": items}

    return answer


def client_factory(
    endpoint_url: str,
    *,
    empty_spot: bool = True,
    spot_prices: Mapping[tuple[str, str], float] | None = None,
) -> Any:
    """EC2 clients for the moto server with dummy credentials passed explicitly (no env).
    `spot_prices` ((instance type, region) -> USD/hour) answers `DescribeSpotPriceHistory`
    instead of the empty history."""
    session = boto3.session.Session(
        aws_access_key_id=DUMMY_KEY_ID, aws_secret_access_key=DUMMY_SECRET
    )
    clients: dict[str, Any] = {}

    def make(region: str) -> Any:
        if region not in clients:
            client = session.client(
                "ec2", region_name=region, endpoint_url=endpoint_url, config=ec2_client_config()
            )
            if spot_prices is not None:
                client.meta.events.register(
                    "before-call.ec2.DescribeSpotPriceHistory",
                    _spot_history_from(spot_prices, region),
                )
            elif empty_spot:
                client.meta.events.register(
                    "before-call.ec2.DescribeSpotPriceHistory", _empty_spot_history
                )
            clients[region] = client
        return clients[region]

    return make


def collect(
    price_list: Path = PRICE_LIST, spot_prices: Mapping[tuple[str, str], float] | None = None
) -> list[CatalogItem]:
    """The offers of `price_list` (default: the test sample; `FULL_PRICE_LIST` has every real
    region price at hand), with spot offers where `spot_prices` prices a published offer."""
    # botocore does not go through `requests`, so `responses` leaves the moto calls alone.
    with moto_endpoint() as endpoint, responses.RequestsMock() as rsps:
        register_price_list(rsps, path=price_list)
        provider = AWSProvider(client_factory=client_factory(endpoint, spot_prices=spot_prices))
        return AWSProvider.filter(provider.get())
