"""Verda (formerly DataCrunch): instance types, on-demand and spot prices, from the public REST API.

Plain HTTP through `gpuhunt._internal.load.transport` (the Verda SDK is not needed):

1. `POST /v1/oauth2/token` with `{"grant_type": "client_credentials", "client_id", "client_secret"}`
   (from `VERDA_CLIENT_ID` / `VERDA_CLIENT_SECRET`) gives a short-lived bearer token;
2. `GET /v1/instance-types?currency=usd`: every instance type with `price_per_hour` and
   `spot_price` (USD strings), vCPUs, memory, and the GPUs as a description ("8x H100 SXM5 80GB")
   with a GPU-memory total;
3. `GET /v1/locations`: the datacenters (`FIN-01`, `FIN-02`, `ICE-01`, ...);
4. `GET /v1/instance-availability?is_spot=true|false`: which types have free capacity where.

Where an offer is listed (decision): every instance type in every location, on-demand and spot
(when the type has a spot price), i.e. the full price list. Availability is a live stock
reading and is not used to drop offers: a nightly catalog built from it would lose whatever was
sold out at collection time, while the orchestrator checks capacity at launch anyway. The
availability answers are used to (a) add a location that reports capacity but is missing from
`/locations`, (b) count instance types that have capacity but no published price (a new type
appears there first); see `VerdaProvider.last_report`, and (c) record the reading on each offer:
`CatalogItem.available` is True where the answer for its kind (spot or on-demand) lists the
type in its location, False where it does not. Offers built without those answers (or with
answers not labelled spot/on-demand) carry no reading.

GPU names come from the description through the shared alias table ("2x RTX A6000 48GB" ->
A6000), falling back to the `model` field; per-GPU memory is the reported total divided by the
count. A GPU the tables do not know is kept under Verda's name, warned about and counted.
`disk_size` is None: the boot volume is a network volume sized at launch (the `storage` field
only describes local NVMe of some types). `filter()` drops AMD offers (Verda's Radeon types),
which the accelerator tables and consumers' NVIDIA images do not cover.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.gpu_names import gpu_memory_from_name, resolve_gpu
from gpuhunt._internal.load import transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt.providers import _report
from gpuhunt.providers._records import Gpu, named, need_number, offer, positive
from gpuhunt.providers.base import Ask, Collects, OfflineProvider, get_creds_env

logger = logging.getLogger(__name__)

NAME = "verda"
API_URL = "https://api.verda.com/v1"
TOKEN_URL = f"{API_URL}/oauth2/token"
INSTANCE_TYPES_URL = f"{API_URL}/instance-types"
LOCATIONS_URL = f"{API_URL}/locations"
AVAILABILITY_URL = f"{API_URL}/instance-availability"
CLIENT_ID_ENV = "VERDA_CLIENT_ID"
CLIENT_SECRET_ENV = "VERDA_CLIENT_SECRET"
_CREDENTIAL = f"{CLIENT_ID_ENV}/{CLIENT_SECRET_ENV}"

_COUNT_PREFIX = re.compile(r"^\s*\d+\s*x\s+", re.IGNORECASE)


@dataclass
class ParseReport(_report.ParseReport):
    """verda's collection report (see `providers._report`)."""

    provider: str = "verda"
    # Types with capacity somewhere but absent from /instance-types, so without a price.
    unpriced_types: Counter[str] = field(default_factory=Counter)


class VerdaProvider(Collects[ParseReport], OfflineProvider):
    NAME = NAME
    REPORT = ParseReport

    def __init__(self, client_id: str, client_secret: str) -> None:
        self._client_id = client_id
        self._client_secret = client_secret
        self.last_report = ParseReport()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(client_id=***, client_secret=***)"

    @classmethod
    def from_env(cls) -> VerdaProvider:
        return cls(get_creds_env(CLIENT_ID_ENV), get_creds_env(CLIENT_SECRET_ENV))

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        token = fetch_token(self._client_id, self._client_secret)
        instance_types = fetch_instance_types(token)
        locations = fetch_locations(token)
        availability = {
            True: fetch_availability(token, spot=True),
            False: fetch_availability(token, spot=False),
        }
        return parse_offers(instance_types, locations, availability, report)

    @classmethod
    def filter(cls, offers: list[CatalogItem]) -> list[CatalogItem]:
        return [o for o in offers if o.gpu_vendor != AcceleratorVendor.AMD]


def fetch_token(client_id: str, client_secret: str) -> str:
    answer = transport.request_json(
        "POST",
        TOKEN_URL,
        provider=VerdaProvider.NAME,
        credential=_CREDENTIAL,
        json={
            "grant_type": "client_credentials",
            "client_id": client_id,
            "client_secret": client_secret,
        },
    )
    transport.require_fields(answer, {"access_token": str}, where="verda: POST /oauth2/token")
    token: str = answer["access_token"]
    return token


def _get(url: str, token: str, params: dict[str, str] | None = None) -> Any:
    return transport.request_json(
        "GET",
        url,
        provider=VerdaProvider.NAME,
        credential=_CREDENTIAL,
        headers={"Authorization": f"Bearer {token}"},
        params=params,
    )


def fetch_instance_types(token: str) -> Any:
    return _get(INSTANCE_TYPES_URL, token, {"currency": "usd"})


def fetch_locations(token: str) -> Any:
    return _get(LOCATIONS_URL, token)


def fetch_availability(token: str, spot: bool) -> Any:
    return _get(AVAILABILITY_URL, token, {"is_spot": "true" if spot else "false"})


def parse_offers(
    instance_types: Any,
    locations: Any,
    availability: Iterable[Any] | Mapping[bool, Any] = (),
    report: ParseReport | None = None,
) -> list[CatalogItem]:
    """Offers from the decoded answers: every type in every location, on-demand and spot.

    `availability` holds the `GET /instance-availability` answers: a mapping `{True: spot
    answer, False: on-demand answer}` also records each offer's reading (`available`); a plain
    list of answers only adds locations and counts unpriced types."""
    report = report if report is not None else ParseReport()
    _require_list(instance_types, "GET /instance-types")
    codes = set(parse_locations(locations, report))
    priced = {t.get("instance_type") for t in instance_types if isinstance(t, dict)}
    answers: Iterable[tuple[bool | None, Any]] = (
        availability.items()
        if isinstance(availability, Mapping)
        else ((None, answer) for answer in availability)
    )
    # spot -> {(location, type)} with capacity, for each kind whose answer was given
    readings: dict[bool, set[tuple[str, str]]] = {}
    for spot, answer in answers:
        parsed = parse_availability(answer, report)
        if spot is not None:
            readings.setdefault(spot, set()).update(
                (code, name) for code, types in parsed.items() for name in types
            )
        for code, types in parsed.items():
            if code not in codes:
                logger.warning("verda: location %s reports capacity but is not listed", code)
                codes.add(code)
            for name in types:
                if name not in priced:
                    report.unpriced_types[name] += 1
    if report.unpriced_types:
        logger.info(
            "verda: types with capacity but no price: %s", ", ".join(sorted(report.unpriced_types))
        )
    offers: list[CatalogItem] = []
    for i, record in enumerate(instance_types):
        what = (
            f"instance type {record.get('instance_type')!r}"
            if isinstance(record, dict)
            else f"instance type #{i}"
        )
        try:
            offers.extend(_parse_instance_type(record, sorted(codes), report, readings))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            report.skip(what, f"missing field {e}" if isinstance(e, KeyError) else str(e))
    if instance_types and not offers:
        # Publishing nothing would look like Verda selling nothing.
        why = "; ".join(report.skipped[:3]) if codes else "no locations"
        raise ProviderError(f"verda: no offers from {len(instance_types)} instance types: {why}")
    return sorted(offers, key=lambda o: (o.price, o.instance_name, o.location, o.spot))


def parse_locations(payload: Any, report: ParseReport | None = None) -> list[str]:
    """Location codes from `GET /locations` (`[{"code": "FIN-01", ...}, ...]`)."""
    report = report if report is not None else ParseReport()
    _require_list(payload, "GET /locations")
    codes = []
    for i, location in enumerate(payload):
        code = location.get("code") if isinstance(location, dict) else None
        if isinstance(code, str) and code:
            codes.append(code)
        else:
            report.skip(f"location #{i}", "no code")
    return codes


def parse_availability(payload: Any, report: ParseReport | None = None) -> dict[str, list[str]]:
    """`GET /instance-availability` (`[{"location_code", "availabilities": [type, ...]}]`)."""
    report = report if report is not None else ParseReport()
    _require_list(payload, "GET /instance-availability")
    result: dict[str, list[str]] = {}
    for i, entry in enumerate(payload):
        code = entry.get("location_code") if isinstance(entry, dict) else None
        types = entry.get("availabilities") if isinstance(entry, dict) else None
        if not isinstance(code, str) or not isinstance(types, list):
            report.skip(f"availability entry #{i}", "no location_code or availabilities")
            continue
        result.setdefault(code, []).extend(t for t in types if isinstance(t, str))
    return result


def _require_list(payload: Any, where: str) -> None:
    if not isinstance(payload, list):
        raise ProviderError(f"verda: {where}: expected a list, got {type(payload).__name__}")


def _price(value: Any, what: str) -> float:
    # The API sends prices as strings ("3.95").
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"{what} has type {type(value).__name__}")
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{what} is not a number: {value!r}") from None


def _parse_instance_type(
    record: Any,
    locations: list[str],
    report: ParseReport,
    readings: Mapping[bool, set[tuple[str, str]]] | None = None,
) -> list[CatalogItem]:
    record, name = named(record, "instance_type")
    price = positive(_price(record["price_per_hour"], "price_per_hour"), "price_per_hour")
    spot_price = record.get("spot_price")
    spot = _price(spot_price, "spot_price") if spot_price is not None else None
    cpu = need_number(record["cpu"]["number_of_cores"], "cpu.number_of_cores")
    memory = need_number(record["memory"]["size_in_gigabytes"], "memory.size_in_gigabytes")
    gpu_count = int(need_number(record["gpu"]["number_of_gpus"], "gpu.number_of_gpus"))
    gpu_name, gpu_memory, gpu_vendor = None, None, None
    if gpu_count:
        total = (record.get("gpu_memory") or {}).get("size_in_gigabytes")
        reported = None
        if isinstance(total, (int, float)) and total > 0:
            reported = round(total / gpu_count, 2)
        gpu_name, gpu_vendor, gpu_memory = _gpu(record, reported, report)
    prices = [(False, price)] + ([(True, spot)] if spot and spot > 0 else [])
    gpu = Gpu(gpu_count, gpu_name, gpu_vendor, gpu_memory)
    return [
        offer(NAME, name, where, at, int(cpu), memory, gpu, spot=is_spot, available=reading)
        for where in locations
        for is_spot, at in prices
        for reading in [_reading(readings, is_spot, where, name)]
    ]


def _reading(
    readings: Mapping[bool, set[tuple[str, str]]] | None, spot: bool, location: str, name: str
) -> bool | None:
    """The availability reading where the answer for this kind of offer was read, else None."""
    if readings is None or spot not in readings:
        return None
    return (location, name) in readings[spot]


def _gpu(
    record: dict[str, Any], memory: float | None, report: ParseReport
) -> tuple[str, AcceleratorVendor, float | None]:
    """(name, vendor, memory GiB per GPU): `memory` is the per-GPU share of `gpu_memory`,
    else the size the description names ("1x H100 SXM5 80GB")."""
    description = record["gpu"].get("description") or ""
    spelled = _COUNT_PREFIX.sub("", description).strip()
    model = record.get("model") if isinstance(record.get("model"), str) else ""
    memory = memory or gpu_memory_from_name(description)
    for spelling in (spelled, model):
        if spelling and (gpu := resolve_gpu(spelling, memory)) is not None:
            return gpu.name, gpu.vendor, gpu.memory
    raw = spelled or model
    if not raw:
        raise ValueError("GPU instance type without a GPU description or model")
    report.unknown_gpu(raw, f"instance type {record['instance_type']}; kept under that name")
    try:
        vendor = AcceleratorVendor.cast(record.get("manufacturer") or "nvidia")
    except ValueError:
        vendor = AcceleratorVendor.NVIDIA
    return raw, vendor, memory
