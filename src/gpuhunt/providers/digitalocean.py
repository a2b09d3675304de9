"""DigitalOcean: Droplet sizes (CPU and GPU), queried live.

`GET {api_url}/v2/sizes` with a bearer token (`DIGITAL_OCEAN_API_KEY`), paginated with `page` and
`per_page` (at most 200). `api_url` defaults to `https://api.digitalocean.com` and can point at a
compatible deployment (`DIGITAL_OCEAN_API_URL`), such as AMD's developer cloud.

Decisions:

- One offer per size and region it lists (`regions`: "the region slugs where this size is
  available for Droplet creates", DigitalOcean API v2 reference), with the reading in
  `CatalogItem.available`: False when the size says `available: false` ("whether new
  Droplets can be created with this size"), else True (listed in `regions`). Regions the
  size does not list are not offered: the answer does not name them. A size marked
  `available: false` is kept, marked (decision, issue 38): gpuhunt 0.1.34, which dstack 0.22
  runs, listed such a size's regions too, and a caller who wants only what launches now asks
  for `available=True`; between 0.1.34 and issue 38 this module skipped them.
- GPUs from `gpu_info`: `model` is `<vendor>_<name>` ("nvidia_h100", "amd_mi300x",
  "nvidia_rtx6000_ada"); the vendor comes from the prefix, the name from the GPU tables. A name
  the tables do not know is kept in upper case without separators ("nvidia_x9" -> "X9"), logged
  and counted. `vram.amount` is the size's total GPU memory, divided by the count per GPU.
- Disk: the persistent disks (`local`, or `boot` since the v5 generation) of `disk_info`; the
  non-persistent `scratch` disk of GPU sizes is not counted. Older answers without `disk_info`
  use `disk`.
- Pages are followed by page number, not by the absolute `links.pages.next` URL, so the token
  is only ever sent to `api_url`.
- The query filter: `spot=True` needs no API call (Droplets are on-demand only); the API has no
  other filter.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.load import livecache, transport
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, JSONObject
from gpuhunt.providers._records import Gpu, offer
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OnlineProvider, get_creds_env

logger = logging.getLogger(__name__)

NAME = "digitalocean"
API_URL = "https://api.digitalocean.com"
STANDARD_CLOUD_API_URL = API_URL
CREDENTIAL = "DIGITAL_OCEAN_API_KEY"
API_URL_ENV = "DIGITAL_OCEAN_API_URL"
PER_PAGE = 200
MAX_PAGES = 20
_PERSISTENT_DISKS = ("local", "boot")


class DigitalOceanProvider(Collects[ParseReport], OnlineProvider):
    NAME = NAME
    REPORT = ParseReport

    def __init__(self, api_key: str | None = None, api_url: str | None = None) -> None:
        self.api_key = api_key or None
        self.api_url = (api_url or API_URL).rstrip("/")

    def __repr__(self) -> str:
        key = "'***'" if self.api_key else "None"
        return f"DigitalOceanProvider(api_key={key}, api_url={self.api_url!r})"

    @classmethod
    def from_env(cls) -> DigitalOceanProvider:
        return cls(api_key=get_creds_env(CREDENTIAL), api_url=os.getenv(API_URL_ENV) or None)

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        if ask.spot is True:
            return []
        offers = parse_sizes(fetch_sizes(self.api_url, self.api_key), report=report)
        return sorted(offers, key=lambda i: i.price)


def fetch_sizes(api_url: str, api_key: str | None) -> list[Any]:
    """Every size, over all pages."""
    url = f"{api_url}/v2/sizes"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    sizes: list[Any] = []
    page = 1
    for _ in range(MAX_PAGES):
        params = {"page": page, "per_page": PER_PAGE}
        data = livecache.request_json(
            "GET",
            url,
            provider=NAME,
            secret=api_key,
            credential=CREDENTIAL,
            params=params,
            headers=headers,
        )
        transport.require_fields(data, {"sizes": list}, where=f"{NAME}: GET /v2/sizes")
        sizes.extend(data["sizes"])
        next_page = _next_page(data)
        if next_page is None or next_page <= page:
            return sizes
        page = next_page
    logger.warning("%s: /v2/sizes has more than %d pages, using the first ones", NAME, MAX_PAGES)
    return sizes


def _next_page(data: JSONObject) -> int | None:
    links = data.get("links")
    pages = links.get("pages") if isinstance(links, dict) else None
    next_url = pages.get("next") if isinstance(pages, dict) else None
    if not isinstance(next_url, str):
        return None
    values = parse_qs(urlsplit(next_url).query).get("page")
    try:
        return int(values[0]) if values else None
    except ValueError:
        return None


def parse_sizes(sizes: list[Any], *, report: ParseReport | None = None) -> list[CatalogItem]:
    """Offers from decoded `sizes` records."""
    report = report if report is not None else ParseReport(provider=DigitalOceanProvider.NAME)
    offers: list[CatalogItem] = []
    for size in sizes:
        slug = size.get("slug") if isinstance(size, dict) else None
        with report.record(f"size {slug}"):
            offers.extend(_size_offers(size, report))
    return offers


def _size_offers(size: JSONObject, report: ParseReport) -> list[CatalogItem]:
    if not isinstance(size, dict):
        raise TypeError(f"size is a {type(size).__name__}")
    available = size.get("available") is not False
    slug = str(size["slug"])
    gpu_count = 0
    gpu_name: str | None = None
    gpu_memory: float | None = None
    gpu_vendor: AcceleratorVendor | None = None
    if gpu_info := size.get("gpu_info"):
        gpu_count = int(gpu_info["count"])
        reported = float(gpu_info["vram"]["amount"]) / gpu_count
        gpu_name, gpu_vendor, gpu_memory = _gpu(slug, str(gpu_info["model"]), reported, report)
    price = float(size["price_hourly"])
    cpu = int(size["vcpus"])
    memory = float(size["memory"]) / 1024
    disk = _disk_size(size)
    gpu = Gpu(gpu_count, gpu_name, gpu_vendor, gpu_memory)
    return [
        offer(NAME, slug, str(region), price, cpu, memory, gpu, disk_size=disk, available=available)
        for region in size["regions"]
    ]


def _gpu(
    slug: str, model: str, memory: float, report: ParseReport
) -> tuple[str, AcceleratorVendor, float]:
    """(name, vendor, memory GiB per GPU) of a size's `gpu_info` ("nvidia_h100")."""
    vendor_token, _, name_part = model.partition("_")
    gpu = resolve_gpu(name_part or model, memory)
    vendor: AcceleratorVendor | None
    try:
        vendor = AcceleratorVendor.cast(vendor_token)
    except ValueError:
        vendor = gpu.vendor if gpu else None
    if gpu is None:
        name = re.sub(r"[^A-Za-z0-9]", "", name_part or model).upper()
        report.unknown_gpu(model, f"size {slug}; kept as {name!r}")
    else:
        name, memory = gpu.name, gpu.memory
    if vendor is None:
        raise ValueError(f"no vendor for GPU model {model!r}")
    return name, vendor, memory


def _disk_size(size: JSONObject) -> float:
    disk_info = size.get("disk_info")
    if disk_info is None:
        return float(size["disk"])
    return sum(
        float(disk["size"]["amount"]) for disk in disk_info if disk["type"] in _PERSISTENT_DISKS
    )
