"""AWS provider tests.

Data (see `data/aws/README.md`):
- `price_list_sample.csv.gz` + `.expected.jsonl`: made by `/work/shared/tools/make_aws_price_list.py`
  in the real EC2 Price List format with real on-demand prices (2026-01-21) and rows to reject;
- `ec2_offer_index_sample.csv`: a real 44-row excerpt of the Price List (no row is kept);
- `describe_instance_types.json`: real `DescribeInstanceTypes` items (from moto's data);
- `describe_spot_price_history_linux_vpc.json`: the AWS CLI documentation's example answer.

The HTTP download goes through `responses`; boto3 talks to a moto server on 127.0.0.1 (which knows
the real instance types) or to botocore `Stubber`s where a test needs answers moto cannot give
(spot prices per zone, a region refusing the credentials).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import logging
import os
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import boto3
import pytest
import responses
from botocore.config import Config
from botocore.stub import ANY, Stubber
from scripts.replay import replay_aws
from urllib3.exceptions import ProtocolError

from gpuhunt._internal import registry
from gpuhunt._internal.errors import MissingCredsError, ProviderError
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture
from gpuhunt.providers import aws
from gpuhunt.providers.aws import (
    EC2_PRICING_URL,
    AWSProvider,
    InstanceDetails,
    PriceListRow,
    build_offers,
    fetch_instance_details,
    fetch_spot_prices,
    parse_instance_types,
    parse_price_list,
    parse_spot_price_history,
)

DATA = Path(__file__).parent / "data" / "aws"
# Excluded from the generated file's accepted rows, for reasons independent of the parser:
PREVIOUS_GENERATION = {"p3.2xlarge"}  # on https://aws.amazon.com/ec2/previous-generation/
NOT_IN_ACCELERATOR_TABLES = {"trn1.32xlarge", "inf2.xlarge", "dl2q.24xlarge"}


def expected_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in replay_aws.EXPECTED.read_text().splitlines()]


def kept_expected() -> list[dict[str, Any]]:
    return [
        e
        for e in expected_rows()
        if float(e["gpu_count"]).is_integer() and e["instance_type"] not in PREVIOUS_GENERATION
    ]


def sample_lines() -> list[str]:
    return replay_aws.price_list_text().splitlines(keepends=True)


def header_index() -> dict[str, int]:
    header = next(csv.reader([sample_lines()[5]]))
    return {name: i for i, name in enumerate(header)}


def rewrite_row(line: str, **changes: str) -> str:
    """The same CSV row with some columns changed, quoted the way the price list quotes."""
    row = next(csv.reader([line]))
    idx = header_index()
    for column, value in changes.items():
        row[idx[column.replace("_", " ")]] = value
    return ",".join('"' + v.replace('"', '""') + '"' if v else "" for v in row) + "\n"


def find_line(instance_type: str, region: str) -> int:
    lines = sample_lines()
    idx = header_index()
    for n, line in enumerate(lines[6:], start=6):
        row = next(csv.reader([line]))
        if (
            row[idx["Instance Type"]] == instance_type
            and row[idx["Region Code"]] == region
            and row[idx["Operating System"]] == "Linux"
            and row[idx["Tenancy"]] == "Shared"
            and row[idx["CapacityStatus"]] == "Used"
            and row[idx["TermType"]] == "OnDemand"
            and row[idx["Pre Installed S/W"]] == "NA"
        ):
            return n
    raise AssertionError(f"no accepted row for {instance_type} in {region}")


# ---------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="module")
def moto_url() -> Any:
    with replay_aws.moto_endpoint() as url:
        yield url


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, moto_url: str, tmp_path: Path) -> str:
    """boto3's default chain finds dummy credentials and EC2 at the moto server."""
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", replay_aws.DUMMY_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", replay_aws.DUMMY_SECRET)
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", moto_url)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    return moto_url


@pytest.fixture(scope="module")
def moto_clients(moto_url: str) -> Any:
    """Shared EC2 clients (creating one costs tens of ms); tests that hook events on clients
    make their own."""
    return replay_aws.client_factory(moto_url)


@pytest.fixture
def sample_file(tmp_path: Path) -> Path:
    path = tmp_path / "index.csv"
    path.write_text(replay_aws.price_list_text(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def replayed() -> list[CatalogItem]:
    return replay_aws.collect()


def offer(items: list[CatalogItem], name: str, location: str, spot: bool = False) -> CatalogItem:
    found = [i for i in items if (i.instance_name, i.location, i.spot) == (name, location, spot)]
    assert len(found) == 1, (name, location, spot, found)
    return found[0]


# ---------------------------------------------------------------------------------------------
# Known facts and the expected offers


def test_known_real_facts(replayed: list[CatalogItem]) -> None:
    p4d = offer(replayed, "p4d.24xlarge", "us-east-1")
    assert (p4d.price, p4d.gpu_count, p4d.gpu_name, p4d.gpu_memory) == (21.957642, 8, "A100", 40)
    assert (p4d.cpu, p4d.memory, p4d.gpu_vendor) == (96, 1152, AcceleratorVendor.NVIDIA)
    p5 = offer(replayed, "p5.48xlarge", "us-east-1")
    assert (p5.price, p5.gpu_count, p5.gpu_name, p5.gpu_memory) == (55.04, 8, "H100", 80)
    g6 = offer(replayed, "g6.xlarge", "us-east-1")
    # AWS reports 22,888 MiB for the 24 GB L4.
    assert (g6.price, g6.gpu_count, g6.gpu_name, g6.gpu_memory) == (0.8048, 1, "L4", 24)
    assert offer(replayed, "p4de.24xlarge", "us-east-1").gpu_memory == 80
    assert offer(replayed, "p5en.48xlarge", "us-east-1").gpu_name == "H200"
    assert offer(replayed, "g7e.2xlarge", "us-east-1").gpu_name == "RTXPRO6000"
    assert all(i.provider == "aws" and i.disk_size is None for i in replayed)
    assert [i.price for i in replayed] == sorted(i.price for i in replayed)


def test_replay_gives_exactly_the_expected_offers(replayed: list[CatalogItem]) -> None:
    want = {
        (e["instance_type"], e["region"], e["price"], e["vcpu"], e["memory_gib"], e["gpu_count"])
        for e in kept_expected()
        if aws.family_of(e["instance_type"]) in aws.PUBLISHED_FAMILIES
        and e["instance_type"] not in NOT_IN_ACCELERATOR_TABLES
    }
    got = {(i.instance_name, i.location, i.price, i.cpu, i.memory, i.gpu_count) for i in replayed}
    assert got == want
    assert len(replayed) == len(want)  # no duplicates
    # The total GPU memory the price list states agrees with the per-GPU memory we publish
    # (from DescribeInstanceTypes, snapped to the known size: B200 179 -> 180 GB).
    totals = {(e["instance_type"], e["region"]): e["gpu_memory_total_gb"] for e in kept_expected()}
    for i in replayed:
        assert i.gpu_memory is not None
        total = totals[(i.instance_name, i.location)]
        if total is None:  # "Unknown" in the source for gr6
            continue
        assert abs(i.gpu_count * i.gpu_memory - total) <= 0.01 * total, i


def test_parse_keeps_exactly_the_accepted_rows() -> None:
    stats: Counter[str] = Counter()
    rows = parse_price_list(sample_lines(), stats)
    want = {
        (e["instance_type"], e["region"], e["price"], e["vcpu"], e["memory_gib"])
        for e in kept_expected()
    }
    assert {(r.instance_type, r.location, r.price, r.cpu, r.memory) for r in rows} == want
    expected = expected_rows()
    data_rows = len(sample_lines()) - 6
    assert stats["rows"] == data_rows
    assert stats["accepted"] == len(want) == len(rows)
    assert stats["fractional_gpu"] == sum(not float(e["gpu_count"]).is_integer() for e in expected)
    assert stats["previous_generation"] == sum(
        e["instance_type"] in PREVIOUS_GENERATION for e in expected
    )
    assert stats["rejected"] == data_rows - len(expected)
    assert stats["malformed"] == 0


def test_real_price_list_excerpt_has_no_row_to_keep() -> None:
    # Reserved, Dedicated, Host, Windows, RHEL, SUSE, SQL and capacity-reservation rows only.
    stats: Counter[str] = Counter()
    with open(DATA / "ec2_offer_index_sample.csv", encoding="utf-8", newline="") as f:
        assert parse_price_list(f, stats) == []
    assert stats["rows"] == 44
    assert stats["rejected"] == 44


def lines_in(*locations: str) -> str:
    """The sample price list cut down to some locations (every row kind kept)."""
    idx = header_index()["Region Code"]
    lines = sample_lines()
    return "".join(lines[:6]) + "".join(
        line for line in lines[6:] if next(csv.reader([line]))[idx] in locations
    )


@pytest.mark.slow
@pytest.mark.moto
def test_get_over_http_with_boto3_default_chain(aws_env: str, caplog: Any) -> None:
    caplog.set_level(logging.INFO)
    locations = ("us-east-1", "us-west-2", "us-west-2-lax-1")
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, EC2_PRICING_URL, body=lines_in(*locations))
        provider = AWSProvider.from_env()
        items = provider.get()
        call = rsps.calls[0]
        assert len(rsps.calls) == 1
        assert (call.request.method, call.request.url) == ("GET", EC2_PRICING_URL)
        assert call.request.headers["User-Agent"].startswith("gpuhunt/")
        assert call.request.req_kwargs["stream"] is True  # never the whole body at once

    want = {
        (e["instance_type"], e["region"], e["price"])
        for e in kept_expected()
        if e["region"] in locations and e["instance_type"] not in NOT_IN_ACCELERATOR_TABLES
    }
    assert {(i.instance_name, i.location, i.price) for i in items} == want
    assert any(i.location == "us-west-2-lax-1" for i in items)  # a Local Zone
    assert provider.last_report.counts["unsupported_accelerator"] == sum(
        e["instance_type"] in NOT_IN_ACCELERATOR_TABLES
        for e in kept_expected()
        if e["region"] in locations
    )
    g5g = offer(items, "g5g.xlarge", "us-east-1")
    assert (g5g.gpu_name, g5g.gpu_memory, g5g.cpu_arch) == ("T4", 16, CPUArchitecture.ARM)
    p5 = offer(items, "p5.48xlarge", "us-west-2")
    assert (p5.gpu_name, p5.gpu_count, p5.cpu_arch) == ("H100", 8, CPUArchitecture.X86)
    # Both regions were asked for spot prices and answered (moto ignores the product filter's
    # values and answers nothing; the Stubber tests below cover spot prices).
    assert provider.last_report.counts["spot_regions_failed"] == 0
    assert "Found credentials in environment variables" in caplog.text
    assert replay_aws.DUMMY_SECRET not in caplog.text
    assert [i.price for i in items] == sorted(i.price for i in items)


@pytest.mark.slow
@pytest.mark.moto
def test_apply_filter_describes_only_published_families(moto_url: str) -> None:
    described: list[str] = []
    clients = replay_aws.client_factory(moto_url)

    def factory(region: str) -> Any:
        client = clients(region)
        client.meta.events.register(
            "provide-client-params.ec2.DescribeInstanceTypes",
            lambda params, **_: described.extend(params["InstanceTypes"]),
            unique_id="record-described",
        )
        return client

    with responses.RequestsMock() as rsps:
        replay_aws.register_price_list(rsps)
        items = AWSProvider(client_factory=factory).get(apply_filter=True)
    assert described and all(aws.family_of(t) in aws.PUBLISHED_FAMILIES for t in described)
    assert "g5g.xlarge" not in described and "dl2q.24xlarge" not in described
    assert items == AWSProvider.filter(items)
    assert offer(items, "p5.48xlarge", "us-east-1").price == 55.04


def test_filter_families() -> None:
    def item(name: str) -> CatalogItem:
        return CatalogItem(
            provider="aws", instance_name=name, location="us-east-1", price=1.0, cpu=2,
            memory=8.0, gpu_count=0, gpu_name=None, gpu_memory=None, spot=False, disk_size=None,
        )  # fmt: skip

    kept = ["p4d.24xlarge", "p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "g6.xlarge",
            "g6e.xlarge", "gr6.4xlarge", "g4dn.xlarge", "g5.xlarge", "g7e.2xlarge", "m5.large",
            "c7i.large", "t3.micro"]  # fmt: skip
    dropped = ["g5g.xlarge", "m7g.large", "p3dn.24xlarge", "dl2q.24xlarge", "g6f.large",
               "x2iedn.xlarge", "t3a.micro", "m5d.large"]  # fmt: skip
    got = AWSProvider.filter([item(n) for n in kept + dropped])
    assert [i.instance_name for i in got] == kept


# ---------------------------------------------------------------------------------------------
# The price list: cache, streaming, errors


@pytest.mark.slow
@pytest.mark.moto
def test_cache_path_absent_downloads_atomically_then_reuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moto_clients: Any
) -> None:
    cache = tmp_path / "cache" / "index.csv"
    monkeypatch.setenv("AWS_CACHE_PATH", str(cache))
    with responses.RequestsMock() as rsps:
        replay_aws.register_price_list(rsps)
        first = AWSProvider(client_factory=moto_clients).get()
        assert len(rsps.calls) == 1
    assert cache.read_text(encoding="utf-8") == replay_aws.price_list_text()
    assert os.listdir(cache.parent) == ["index.csv"]  # no partial file left behind
    with responses.RequestsMock() as rsps:  # any request would fail: nothing is registered
        second = AWSProvider(client_factory=moto_clients).get()
        assert len(rsps.calls) == 0
    assert second == first


@pytest.mark.moto
def test_cache_path_present_is_read_without_network(sample_file: Path, moto_clients: Any) -> None:
    with responses.RequestsMock():
        items = AWSProvider(str(sample_file), client_factory=moto_clients).get()
    assert offer(items, "g6.xlarge", "us-east-1").price == 0.8048


class _BreaksOff(io.RawIOBase):
    """A response body that delivers `data` and then loses the connection."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self._data:
            raise ProtocolError("Connection broken: IncompleteRead")
        n = min(len(buffer), len(self._data))
        buffer[:n] = self._data[:n]
        self._data = self._data[n:]
        return n


def _broken_body() -> io.BufferedReader:
    return io.BufferedReader(_BreaksOff(replay_aws.price_list_text().encode()[:200_000]))


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    # The sample is smaller than one default chunk; smaller chunks let data arrive before the
    # connection breaks.
    monkeypatch.setattr(aws, "CHUNK_SIZE", 1 << 16)


@pytest.mark.moto
@pytest.mark.usefixtures("small_chunks")
def test_stream_broken_off_is_started_again(moto_clients: Any) -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, EC2_PRICING_URL, body=_broken_body())
        replay_aws.register_price_list(rsps)
        provider = AWSProvider(client_factory=moto_clients)
        items = provider.get()
        assert len(rsps.calls) == 2
    # The half-read first attempt counts nothing twice.
    assert provider.last_report.counts["rows"] == len(sample_lines()) - 6
    assert offer(items, "p5.48xlarge", "us-east-1").price == 55.04


@pytest.mark.moto
@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize("cached", [False, True])
def test_stream_broken_off_every_time_fails_after_bounded_attempts(
    cached: bool, tmp_path: Path, moto_clients: Any
) -> None:
    cache = tmp_path / "index.csv"
    with responses.RequestsMock() as rsps:
        for _ in range(aws.DOWNLOAD_ATTEMPTS):
            rsps.add(responses.GET, EC2_PRICING_URL, body=_broken_body())
        provider = AWSProvider(str(cache) if cached else None, client_factory=moto_clients)
        with pytest.raises(ProviderError, match=r"broke off after [1-9]\d* bytes"):
            provider.get()
        assert len(rsps.calls) == aws.DOWNLOAD_ATTEMPTS
    assert os.listdir(tmp_path) == []  # neither the cache file nor a partial one


@pytest.mark.moto
@pytest.mark.parametrize("status", [429, 503])
def test_retryable_status_is_retried_a_bounded_number_of_times(
    status: int, moto_clients: Any
) -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, EC2_PRICING_URL, status=status)
        with pytest.raises(ProviderError, match=f"HTTP {status}"):
            AWSProvider(client_factory=moto_clients).get()
        assert len(rsps.calls) == 4  # the first try and 3 retries


@pytest.mark.moto
def test_retryable_status_then_success(moto_clients: Any) -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, EC2_PRICING_URL, status=503)
        replay_aws.register_price_list(rsps)
        items = AWSProvider(client_factory=moto_clients).get()
        assert len(rsps.calls) == 2
    assert offer(items, "p4d.24xlarge", "us-east-1").price == 21.957642


@pytest.mark.moto
def test_forbidden_is_a_provider_error_without_query_string(moto_clients: Any) -> None:
    url = "https://pricing.example.test/index.csv"
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, url, status=403)
        with pytest.raises(ProviderError) as e:
            AWSProvider(client_factory=moto_clients, pricing_url=url + "?token=s3cr3t").get()
        assert len(rsps.calls) == 1
    assert "HTTP 403" in str(e.value) and "s3cr3t" not in str(e.value)


def test_missing_column_is_a_provider_error_naming_it() -> None:
    lines = sample_lines()
    lines[5] = lines[5].replace('"GPU",', '"GPUs",')
    with pytest.raises(ProviderError, match="'GPU' column"):
        parse_price_list(lines)


@pytest.mark.moto
def test_no_kept_row_is_a_provider_error(moto_clients: Any) -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(
            responses.GET, EC2_PRICING_URL, body=(DATA / "ec2_offer_index_sample.csv").read_bytes()
        )
        with pytest.raises(ProviderError, match="no on-demand Linux rows"):
            AWSProvider(client_factory=moto_clients).get()


def test_malformed_rows_are_skipped_and_counted(caplog: Any) -> None:
    lines = sample_lines()
    p4d = find_line("p4d.24xlarge", "us-east-1")
    g6 = find_line("g6.xlarge", "us-east-1")
    lines[p4d] = rewrite_row(lines[p4d], vCPU="NA")
    lines[g6] = lines[g6].rstrip("\n") + ',"extra"\n'  # one column too many
    stats: Counter[str] = Counter()
    rows = parse_price_list(lines, stats)
    assert stats["malformed"] == 2
    assert stats["accepted"] == len(kept_expected()) - 2
    keys = {(r.instance_type, r.location) for r in rows}
    assert ("p4d.24xlarge", "us-east-1") not in keys and ("g6.xlarge", "us-east-1") not in keys
    assert ("p5.48xlarge", "us-east-1") in keys
    assert "p4d.24xlarge" in caplog.text


def test_quoted_field_spanning_lines_and_duplicates() -> None:
    lines = sample_lines()
    n = find_line("p5.48xlarge", "us-east-1")
    lines[n] = rewrite_row(lines[n], PriceDescription='$55.04 per "On Demand"\nLinux p5 hour')
    duplicate = rewrite_row(lines[n], SKU="DUPLICATECHEAPER", PricePerUnit="50.0000000000")
    lines.insert(n + 1, duplicate)
    stats: Counter[str] = Counter()
    rows = parse_price_list(lines, stats)
    p5 = [r for r in rows if (r.instance_type, r.location) == ("p5.48xlarge", "us-east-1")]
    assert [r.price for r in p5] == [50.0]
    assert stats["duplicate"] == 1 and stats["malformed"] == 0
    assert stats["rows"] == len(sample_lines()) - 6 + 1


def test_unquoted_price_list_is_parsed_without_the_quoted_prefilter() -> None:
    reader = csv.reader(sample_lines()[5:])
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
    writer.writerows(reader)
    lines = sample_lines()[:5] + out.getvalue().splitlines(keepends=True)
    assert not lines[5].startswith('"')
    rows = parse_price_list(lines)
    assert len(rows) == len(kept_expected())


def test_reordered_columns_are_found_by_name() -> None:
    # PriceDescription (which holds commas) moved first: TermType can no longer be found by
    # counting commas, and every field quoted, empty ones too.
    rows = list(csv.reader(sample_lines()[5:]))
    moved = header_index()["PriceDescription"]
    rows = [[r[moved], *r[:moved], *r[moved + 1 :]] for r in rows]
    for r in rows[1:3]:
        r[0] = "Linux/UNIX, with a comma"
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    lines = sample_lines()[:5] + out.getvalue().splitlines(keepends=True)
    stats: Counter[str] = Counter()
    kept = parse_price_list(lines, stats)
    assert len(kept) == len(kept_expected())
    assert stats["rows"] == len(sample_lines()) - 6


def test_gzip_encoded_answer_is_decoded_while_streaming() -> None:
    with responses.RequestsMock() as rsps:
        replay_aws.register_price_list(rsps)
        rows = aws.read_price_list()
    assert len(rows) == len(kept_expected())
    assert gzip.decompress(replay_aws.PRICE_LIST.read_bytes()).startswith(b'"FormatVersion"')


# ---------------------------------------------------------------------------------------------
# Credentials


def test_missing_credentials_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with responses.RequestsMock() as rsps:  # fails before downloading anything
        with pytest.raises(MissingCredsError, match="AWS_ACCESS_KEY_ID"):
            AWSProvider.from_env().get()
        assert len(rsps.calls) == 0


def test_registry_and_env_cache_path(monkeypatch: pytest.MonkeyPatch) -> None:
    assert registry.provider_class("aws") is AWSProvider
    monkeypatch.setenv("AWS_CACHE_PATH", "/tmp/somewhere/index.csv")
    assert AWSProvider.from_env().cache_path == "/tmp/somewhere/index.csv"
    assert AWSProvider("/x.csv").cache_path == "/x.csv"


# ---------------------------------------------------------------------------------------------
# DescribeInstanceTypes


def fixture_instance_types() -> list[dict[str, Any]]:
    return json.loads((DATA / "describe_instance_types.json").read_text())["InstanceTypes"]


def test_parse_instance_types_from_real_items() -> None:
    details = parse_instance_types(fixture_instance_types())
    p4d = details["p4d.24xlarge"].accelerator
    assert p4d is not None
    assert (p4d.name, p4d.count, p4d.memory, p4d.vendor, p4d.known) == (
        "A100", 8, 40, AcceleratorVendor.NVIDIA, True
    )  # fmt: skip
    for name, gpu, memory in [("g5.xlarge", "A10G", 24), ("g6.12xlarge", "L4", 24),
                              ("g6e.xlarge", "L40S", 48), ("g4dn.xlarge", "T4", 16),
                              ("p4de.24xlarge", "A100", 80), ("p5.48xlarge", "H100", 80)]:  # fmt: skip
        acc = details[name].accelerator
        assert acc is not None and (acc.name, acc.memory) == (gpu, memory), name
    assert details["m7g.large"] == InstanceDetails(CPUArchitecture.ARM, None)
    assert details["m5.large"] == InstanceDetails(CPUArchitecture.X86, None)
    for neuron in ("trn1.32xlarge", "inf2.xlarge"):  # not in the accelerator tables
        acc = details[neuron].accelerator
        assert acc is not None and acc.vendor is None and not acc.known


def test_malformed_instance_type_item_is_skipped_and_counted() -> None:
    items = fixture_instance_types()
    items[0] = {k: v for k, v in items[0].items() if k != "InstanceType"}
    items[1] = {**items[1], "GpuInfo": {"Gpus": [{"Count": 1}]}}  # a GPU without a name
    stats: Counter[str] = Counter()
    details = parse_instance_types(items, stats)
    assert stats["malformed_instance_type"] == 2
    assert len(details) == len(items) - 2


def row(instance_type: str, gpu_count: float = 0, processor: str = "") -> PriceListRow:
    return PriceListRow(instance_type, "us-east-1", 1.5, 8, 32.0, gpu_count, processor)


def test_build_offers_unknown_and_unsupported_accelerators(caplog: Any) -> None:
    items = {i["InstanceType"]: i for i in fixture_instance_types()}
    unknown = json.loads(json.dumps(items["g6.xlarge"]))
    unknown["InstanceType"] = "g99.xlarge"
    unknown["GpuInfo"]["Gpus"][0]["Name"] = "X9000"
    qualcomm = json.loads(json.dumps(unknown))
    qualcomm["InstanceType"] = "q1.xlarge"
    qualcomm["GpuInfo"]["Gpus"][0].update(Name="AI999", Manufacturer="Qualcomm")
    details = parse_instance_types([unknown, qualcomm, items["trn1.32xlarge"], items["m7g.large"]])
    stats: Counter[str] = Counter()
    offers = build_offers(
        [row("g99.xlarge", 1), row("q1.xlarge", 1), row("trn1.32xlarge"),
         row("m7g.large"), row("p9.48xlarge", 8), row("inf9.xlarge"),
         row("c9g.large", processor="AWS Graviton5 Processor"), row("c9i.large")],
        details,
        stats,
    )  # fmt: skip
    by_name = {o.instance_name: o for o in offers}
    assert sorted(by_name) == ["c9g.large", "c9i.large", "g99.xlarge", "m7g.large"]
    g99 = by_name["g99.xlarge"]
    assert (g99.gpu_name, g99.gpu_vendor, g99.gpu_count, g99.gpu_memory) == (
        "X9000", AcceleratorVendor.NVIDIA, 1, 22
    )  # fmt: skip
    assert stats["unknown_gpu_name"] == 1 and "X9000" in caplog.text
    assert stats["unsupported_accelerator"] == 2  # Qualcomm AI999, Trainium
    assert stats["no_gpu_details"] == 2  # p9 (GPUs in the price list), inf9 (a Neuron family)
    assert by_name["m7g.large"].cpu_arch == CPUArchitecture.ARM
    assert by_name["c9g.large"].cpu_arch == CPUArchitecture.ARM
    assert by_name["c9i.large"].cpu_arch == CPUArchitecture.X86


def _stubbed(region: str) -> tuple[Any, Stubber]:
    client = boto3.client(
        "ec2",
        region_name=region,
        aws_access_key_id=replay_aws.DUMMY_KEY_ID,
        aws_secret_access_key=replay_aws.DUMMY_SECRET,
    )
    return client, Stubber(client)


def test_describe_skips_a_failing_region_and_tries_the_next(caplog: Any) -> None:
    items = fixture_instance_types()
    names = sorted(i["InstanceType"] for i in items)
    refused, refused_stub = _stubbed("ap-southeast-5")
    answers, answers_stub = _stubbed("us-east-1")
    refused_stub.add_client_error(
        "describe_instance_types",
        service_error_code="AuthFailure",
        service_message="AWS was not able to validate the provided access credentials",
        expected_params={"InstanceTypes": names},
    )
    answers_stub.add_response(
        "describe_instance_types", {"InstanceTypes": items}, {"InstanceTypes": names[:-1]}
    )
    clients = {"ap-southeast-5": refused, "us-east-1": answers}
    # ap-southeast-5 offers every type and is asked first; us-east-1 lacks one of them.
    wanted = {"ap-southeast-5": set(names), "us-east-1": set(names[:-1])}
    stats: Counter[str] = Counter()
    with refused_stub, answers_stub:
        details = fetch_instance_details(clients.__getitem__, wanted, stats)
        refused_stub.assert_no_pending_responses()
        answers_stub.assert_no_pending_responses()
    assert stats["describe_regions_failed"] == 1
    assert "ap-southeast-5" in caplog.text and "AuthFailure" in caplog.text
    assert details["p5.48xlarge"].accelerator is not None
    assert details["p5.48xlarge"].accelerator.name == "H100"


def test_describe_failing_everywhere_is_a_provider_error() -> None:
    client, stub = _stubbed("us-east-1")
    stub.add_client_error("describe_instance_types", service_error_code="UnauthorizedOperation")
    with stub, pytest.raises(ProviderError, match="every region"):
        fetch_instance_details(lambda _: client, {"us-east-1": {"p5.48xlarge"}})


@pytest.mark.slow
def test_describe_gives_up_after_a_few_refusing_regions() -> None:
    asked: list[str] = []
    stubs = []

    def factory(region: str) -> Any:
        asked.append(region)
        client, stub = _stubbed(region)
        stub.add_client_error("describe_instance_types", service_error_code="AuthFailure")
        stub.activate()
        stubs.append(stub)
        return client

    wanted = {f"us-east-{n}": {f"m5.{n}xlarge"} for n in range(1, 9)}
    with pytest.raises(ProviderError, match="every region tried") as e:
        fetch_instance_details(factory, wanted)
    assert len(asked) == aws.DESCRIBE_MAX_FAILED_REGIONS
    assert asked[0] in str(e.value)
    for stub in stubs:
        stub.deactivate()


@pytest.mark.moto
def test_describe_drops_types_the_api_does_not_know(moto_clients: Any) -> None:
    wanted = {"us-east-1": {"p5.48xlarge", "zz9.mega", "g6.xlarge"}}
    details = fetch_instance_details(moto_clients, wanted)
    assert sorted(details) == ["g6.xlarge", "p5.48xlarge"]


@pytest.mark.moto
def test_describe_batches_of_100(moto_url: str) -> None:
    with open(DATA / "describe_instance_types.json") as f:
        known = [i["InstanceType"] for i in json.load(f)["InstanceTypes"]]
    extra = ["c6i.large", "c6i.xlarge", "m6i.large", "r6i.large"]
    all_types = {f"m5.{s}" for s in ("large", "xlarge", "2xlarge")} | set(known) | set(extra)
    batches: list[int] = []
    clients = replay_aws.client_factory(moto_url)

    def factory(region: str) -> Any:
        client = clients(region)
        client.meta.events.register(
            "provide-client-params.ec2.DescribeInstanceTypes",
            lambda params, **_: batches.append(len(params["InstanceTypes"])),
            unique_id="count-batches",
        )
        return client

    original = aws.DESCRIBE_BATCH
    aws.DESCRIBE_BATCH = 5
    try:
        details = fetch_instance_details(factory, {"eu-west-1": all_types})
    finally:
        aws.DESCRIBE_BATCH = original
    assert set(details) == all_types
    assert max(batches) == 5 and sum(batches) == len(all_types)


# ---------------------------------------------------------------------------------------------
# Spot prices


def test_parse_spot_price_history_documented_answer() -> None:
    answer = json.loads((DATA / "describe_spot_price_history_linux_vpc.json").read_text())
    assert parse_spot_price_history(answer["SpotPriceHistory"]) == {
        ("m1.xlarge", "us-west-1"): 0.08
    }
    stats: Counter[str] = Counter()
    bad = [{"InstanceType": "m1.xlarge", "AvailabilityZone": "us-west-1a", "SpotPrice": "n/a"},
           {"InstanceType": "m1.xlarge", "SpotPrice": "0.1"},
           {"InstanceType": "m1.xlarge", "AvailabilityZone": "us-west-1a", "SpotPrice": "0"}]  # fmt: skip
    assert parse_spot_price_history(bad, stats) == {}
    assert stats["malformed_spot_price"] == 3


def _spot_item(instance_type: str, zone: str, price: str) -> dict[str, Any]:
    return {
        "AvailabilityZone": zone,
        "InstanceType": instance_type,
        "ProductDescription": "Linux/UNIX",
        "SpotPrice": price,
        "Timestamp": "2026-01-21T10:00:00.000Z",
    }


def test_spot_cheapest_zone_pages_parallel_regions_and_a_dead_endpoint(caplog: Any) -> None:
    east, east_stub = _stubbed("us-east-1")
    west, west_stub = _stubbed("us-west-2")
    # A region endpoint that refuses connections: skipped with a warning.
    dead = boto3.client(
        "ec2",
        region_name="eu-west-1",
        endpoint_url="http://127.0.0.1:9",
        aws_access_key_id=replay_aws.DUMMY_KEY_ID,
        aws_secret_access_key=replay_aws.DUMMY_SECRET,
        config=Config(connect_timeout=1, retries={"max_attempts": 1}),
    )
    params = {
        "InstanceTypes": ["g6.xlarge", "p5.48xlarge"],
        "Filters": [
            {"Name": "product-description", "Values": ["Linux/UNIX", "Linux/UNIX (Amazon VPC)"]}
        ],
        "StartTime": ANY,
    }
    east_stub.add_response(
        "describe_spot_price_history",
        {"SpotPriceHistory": [_spot_item("p5.48xlarge", "us-east-1a", "31.000000"),
                              _spot_item("g6.xlarge", "us-east-1b", "0.352100")],
         "NextToken": "page-2"},
        params,
    )  # fmt: skip
    east_stub.add_response(
        "describe_spot_price_history",
        {"SpotPriceHistory": [_spot_item("p5.48xlarge", "us-east-1c", "29.500000"),
                              _spot_item("p5.48xlarge", "us-east-1-atl-1a", "25.000000"),
                              _spot_item("g6.xlarge", "us-east-1d", "0.400000")]},
        {**params, "NextToken": "page-2"},
    )  # fmt: skip
    west_stub.add_response(
        "describe_spot_price_history",
        {"SpotPriceHistory": [_spot_item("g6.xlarge", "us-west-2a", "0.300000")]},
        {**params, "InstanceTypes": ["g6.xlarge"]},
    )
    clients = {"us-east-1": east, "us-west-2": west, "eu-west-1": dead}
    waited: set[str] = set()
    barrier = threading.Barrier(3, timeout=10)  # only passes if the regions run at once
    for region, client in clients.items():

        def first_call_waits(region: str = region, **_: Any) -> None:
            if region not in waited:
                waited.add(region)
                barrier.wait()

        client.meta.events.register_first(
            "before-parameter-build.ec2.DescribeSpotPriceHistory",
            first_call_waits,
            unique_id="barrier",
        )
    wanted = {
        "us-east-1": {"p5.48xlarge", "g6.xlarge"},
        "us-west-2": {"g6.xlarge"},
        "eu-west-1": {"g6.xlarge"},
    }
    stats: Counter[str] = Counter()
    with east_stub, west_stub:
        prices = fetch_spot_prices(clients.__getitem__, wanted, stats)
        east_stub.assert_no_pending_responses()
        west_stub.assert_no_pending_responses()
    assert prices == {
        ("p5.48xlarge", "us-east-1"): 29.5,
        ("p5.48xlarge", "us-east-1-atl-1"): 25.0,  # the Local Zone is its own location
        ("g6.xlarge", "us-east-1"): 0.3521,
        ("g6.xlarge", "us-west-2"): 0.3,
    }
    assert stats["spot_regions_failed"] == 1
    assert "eu-west-1" in caplog.text and "EndpointConnectionError" in caplog.text


@pytest.mark.moto
def test_spot_offers_copy_on_demand_offers(moto_url: str) -> None:
    east, stub = _stubbed("us-east-1")
    describe = replay_aws.client_factory(moto_url)

    class Split:
        """Describe at moto (real instance types), spot prices from the stub."""

        def get_paginator(self, name: str) -> Any:
            client = east if name == "describe_spot_price_history" else describe("us-east-1")
            return client.get_paginator(name)

    stub.add_response(
        "describe_spot_price_history",
        {"SpotPriceHistory": [_spot_item("p5.48xlarge", "us-east-1b", "31.464000")]},
    )
    lines = sample_lines()
    keep = {find_line("p5.48xlarge", "us-east-1"), find_line("g6.xlarge", "us-east-1")}
    text = "".join(line for n, line in enumerate(lines) if n < 6 or n in keep)
    with responses.RequestsMock() as rsps, stub:
        rsps.add(responses.GET, EC2_PRICING_URL, body=text)
        items = AWSProvider(client_factory=lambda region: Split()).get()
    assert [(i.instance_name, i.spot, i.price) for i in items] == [
        ("g6.xlarge", False, 0.8048),
        ("p5.48xlarge", True, 31.464),
        ("p5.48xlarge", False, 55.04),
    ]
    spot = items[1]
    assert (spot.gpu_name, spot.gpu_count, spot.gpu_memory, spot.location) == (
        "H100",
        8,
        80,
        "us-east-1",
    )


# ---------------------------------------------------------------------------------------------
# Beside the offers: reserved terms and Spot Advisor bands (costs, issue 49)

ADVISOR = Path(__file__).parents[1] / "_internal" / "costs" / "data" / "spot_advisor_trimmed.json"


@pytest.mark.moto
def test_terms_are_read_in_the_same_pass_and_are_not_offers(
    sample_file: Path, moto_clients: Any
) -> None:
    provider = AWSProvider(str(sample_file), client_factory=moto_clients)
    with responses.RequestsMock():
        items = provider.get()
    terms = {(t.instance_name, t.location): t for t in provider.last_terms}
    # The generated sample's reserved row: 1yr No Upfront standard at the dataset's price.
    g6 = terms["g6.xlarge", "us-east-1"]
    assert (g6.term, g6.payment, g6.offering_class, g6.hourly) == (
        "1y",
        "none",
        "standard",
        0.52392,
    )
    assert offer(items, "g6.xlarge", "us-east-1").price == 0.8048  # the on-demand row, as before
    assert not {(i.instance_name, i.location, i.price) for i in items} & {
        (t.instance_name, t.location, t.hourly) for t in provider.last_terms
    }
    assert provider.last_report.counts["reserved_terms"] == len(provider.last_terms)


def test_fetch_spot_advisor_dates_the_bands_with_the_fetch() -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, aws.SPOT_ADVISOR_URL, body=ADVISOR.read_text())
        advice = aws.fetch_spot_advisor()
    p5 = [a for a in advice if (a.region, a.instance_type) == ("us-east-1", "p5.48xlarge")]
    assert [(a.band.label, a.savings_pct) for a in p5] == [(">20%", 52)]
    assert all(a.observed_at is not None for a in advice)


@pytest.mark.parametrize("body", ["not json", "[]", '{"spot_advisor": {}}'])
def test_an_unreadable_spot_advisor_is_a_provider_error(body: str) -> None:
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, aws.SPOT_ADVISOR_URL, body=body)
        with pytest.raises(ProviderError, match="aws"):
            aws.fetch_spot_advisor()


def test_extra_tables_leave_out_an_advisor_that_fails(caplog: Any) -> None:
    from gpuhunt._internal.costs.terms import Term
    from gpuhunt._internal.formats import terms as terms_file

    provider = AWSProvider("/unused.csv")
    provider.last_terms = [
        Term("aws", "g6.xlarge", "us-east-1", "1y", "none", "standard", 0.52392, 0.0, "s", None)
    ]
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, aws.SPOT_ADVISOR_URL, body=ADVISOR.read_text())
        tables = provider.extra_tables()
    assert sorted(tables) == [".interruption", ".terms"]
    assert terms_file.read_terms(tables[".terms"]) == provider.last_terms
    with responses.RequestsMock() as rsps, caplog.at_level(logging.WARNING):
        rsps.add(responses.GET, aws.SPOT_ADVISOR_URL, status=403)
        assert list(provider.extra_tables()) == [".terms"]
    assert "no spot interruption bands" in caplog.text
