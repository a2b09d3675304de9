"""Seeweb Cloud Server GPU: fixed GPU plans, each offered in the regions it is compatible with.

Source: `GET https://api.seeweb.it/ecs/v2/plans` with the account's API token in the
`X-APITOKEN` header (`SEEWEB_API_TOKEN`). Answer: `{"status": "ok", "plans": [...]}`, where a
plan has string amounts (`cpu` vCPUs, `ram` in MiB, `disk` in GB, `gpu` count), a `gpu_label`
such as "L40s 48GB", a numeric `hourly_price`, `available` (the plan is active) and
`available_regions` (`[{"location": "it-fr2", ...}]`). The endpoint takes no filter parameters.

Decisions:
- GPU plans only (`gpu` > 0); CPU-only plans are not offered, as in gpuhunt 0.1.x.
- One offer per plan and region. Seeweb documents that a listed region is compatible with the
  plan, not that it has capacity right now; that is the best the listing says.
- gpuhunt 0.1.x offered NVIDIA plans only and its consumers provision NVIDIA only, so plans with
  other accelerators (AMD Instinct, Tenstorrent) carry the flag `seeweb-non-nvidia`: visible to
  anyone who allows all flags (the CLI), hidden from consumers that list the flags they handle.
- `hourly_price` is in EUR: Seeweb bills in EUR (its price list and invoices) and the API names
  no currency. `price` is that converted to USD at the ECB reference rate of the day it is read
  (`_internal/currency.py`); the EUR price, the rate and its date are kept in `provider_data`
  (`currency`, `price_native`, `fx_rate`, `fx_date`; docs/currency.md).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from typing_extensions import Self

from gpuhunt._internal import currency
from gpuhunt._internal.gpu_names import canonical_gpu_name, gpu_memory_from_name, resolve_gpu
from gpuhunt._internal.load import livecache, transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OnlineProvider, get_creds_env

logger = logging.getLogger(__name__)

API_URL = "https://api.seeweb.it/ecs/v2"
PLANS_URL = f"{API_URL}/plans"
TOKEN_ENV = "SEEWEB_API_TOKEN"
NON_NVIDIA_FLAG = "seeweb-non-nvidia"

# Labels of accelerators the tables may not know, by the vendor a keyword implies.
_VENDOR_KEYWORDS: tuple[tuple[re.Pattern[str], AcceleratorVendor], ...] = (
    (re.compile(r"tenstorrent|grayskull|wormhole|blackhole", re.I), AcceleratorVendor.TENSTORRENT),
    (re.compile(r"\b(amd|instinct|mi\d{3})", re.I), AcceleratorVendor.AMD),
    (re.compile(r"\b(intel|gaudi)", re.I), AcceleratorVendor.INTEL),
)


class SeewebProvider(Collects[ParseReport], OnlineProvider):
    REPORT = ParseReport
    NAME = "seeweb"

    def __init__(self, token: str | None = None) -> None:
        self._token = token if token is not None else get_creds_env(TOKEN_ENV)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(token='***')"

    @classmethod
    def from_env(cls) -> Self:
        return cls(token=get_creds_env(TOKEN_ENV))

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        offers = parse_plans(fetch_plans(self._token), report)
        return sorted(offers, key=lambda i: i.price)


def fetch_plans(token: str) -> Any:
    return livecache.request_json(
        "GET",
        PLANS_URL,
        provider=SeewebProvider.NAME,
        secret=token,
        credential=TOKEN_ENV,
        headers={"X-APITOKEN": token, "Accept": "application/json"},
    )


# The currency of `hourly_price` (the API does not say it; Seeweb's prices are in EUR).
PRICE_CURRENCY = "EUR"


def parse_plans(
    payload: Any, report: ParseReport | None = None, rate: currency.Rate | None = None
) -> list[CatalogItem]:
    """Offers from a decoded `/plans` answer, priced in USD at `rate` (EUR -> USD; default: the
    ECB reference rate of today, UTC). Malformed plans or regions are skipped and counted
    in `report.counts["malformed"]`; accelerators the tables do not know are kept under Seeweb's label
    and counted in `report.unknown_gpus`."""
    report = report if report is not None else ParseReport(provider=SeewebProvider.NAME)
    # Once per answer: every plan is priced at the same day's rate. A failure here is the whole
    # answer's (a price must not be shown in an unknown unit), not one plan's.
    rate = rate if rate is not None else currency.reference_rate(PRICE_CURRENCY)
    transport.require_fields(payload, {"plans": list}, where="seeweb: /plans")
    offers: list[CatalogItem] = []
    for plan in payload["plans"]:
        name = plan.get("name") if isinstance(plan, dict) else None
        with report.record(f"plan {name}"):
            offers.extend(_plan_offers(plan, report, rate))
    return offers


def _plan_offers(
    plan: dict[str, Any], report: ParseReport, rate: currency.Rate
) -> list[CatalogItem]:
    if plan.get("available") is False:
        return []
    gpu_count = int(plan.get("gpu") or 0)
    if gpu_count <= 0:
        return []
    name = str(plan["name"])
    label = str(plan["gpu_label"]).strip()
    if not label or label == "None":
        raise ValueError("GPU plan without gpu_label")
    gpu_name, vendor, gpu_memory = accelerator_identity(label)
    if canonical_gpu_name(label) is None:
        report.unknown_gpu(label, f"plan {name}")
    cpu = int(plan["cpu"])
    memory = float(plan["ram"]) / 1024  # MiB
    disk = float(plan["disk"])
    price = float(plan["hourly_price"])
    if cpu <= 0 or memory <= 0 or price < 0:
        raise ValueError(f"implausible plan: cpu={cpu} ram={plan['ram']} price={price}")
    flags = [] if vendor == AcceleratorVendor.NVIDIA else [NON_NVIDIA_FLAG]
    usd = currency.to_usd(price, rate)

    offers = []
    seen: set[str] = set()
    for region in plan["available_regions"]:
        location = region.get("location") if isinstance(region, dict) else None
        if not isinstance(location, str) or not location.strip():
            report.counts["malformed"] += 1
            logger.warning("seeweb: skipping malformed region %r of plan %s", region, name)
            continue
        location = location.strip()
        if location in seen:
            continue
        seen.add(location)
        offers.append(
            CatalogItem(
                provider=SeewebProvider.NAME,
                instance_name=name,
                location=location,
                price=usd,
                cpu=cpu,
                memory=memory,
                gpu_count=gpu_count,
                gpu_name=gpu_name,
                gpu_memory=gpu_memory,
                spot=False,
                disk_size=disk if disk > 0 else None,
                gpu_vendor=vendor,
                flags=list(flags),
                **currency.native_fields(price, rate),
            )
        )
    return offers


def accelerator_identity(label: str) -> tuple[str, AcceleratorVendor, float | None]:
    """(name, vendor, memory GB) of a Seeweb `gpu_label` ("L40s 48GB", "RTX A6000 48GB").

    An unknown label keeps its text as the name; its vendor is guessed from keywords, NVIDIA
    otherwise (Seeweb's usual accelerator)."""
    gpu = resolve_gpu(label)
    if gpu is None:
        vendor = next(
            (v for pattern, v in _VENDOR_KEYWORDS if pattern.search(label)),
            AcceleratorVendor.NVIDIA,
        )
        return label, vendor, gpu_memory_from_name(label)
    return gpu.name, gpu.vendor, gpu.memory
