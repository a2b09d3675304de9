"""Hot Aisle: AMD Instinct virtual machines and bare-metal servers available to a team, queried
live.

`GET https://admin.hotaisle.app/api/teams/{team}/virtual_machines/available/` and
`GET .../teams/{team}/bare_metal/available/`, both with `Authorization: Token
<HOTAISLE_API_KEY>`; the team is `HOTAISLE_TEAM_HANDLE`. Each answer is a list of available
shapes (`null` when nothing is available), in the same format.

Decisions:

- Both endpoints are asked, as gpuhunt 0.1.x does. When one fails (HTTP error, malformed
  answer), its failure is logged and recorded in `last_report.skipped`, and the other's offers
  are returned; when both fail, the first error is raised.
- Bare-metal offers are named `bm-<gpu>-<count>` ("bm-mi300x-8"), flagged `hotaisle-bm`, and
  carry the shape's `Specs` as `provider_data["bare_metal_specs"]` (creating the server takes it
  back): the names, flag and key gpuhunt 0.1.x publishes, which dstack reads.

- One offer per VM shape, in Hot Aisle's one location, `us-michigan-1`. `OnDemandPrice` is in
  cents per hour; `ram_capacity` and `disk_capacity` are bytes, reported here in GiB.
- `provider_data["vm_specs"]` is the shape's `Specs` object as the API sent it: creating the VM
  takes it back. It is a copy, so callers cannot alter the cached answer.
- GPUs are AMD (Hot Aisle sells only AMD Instinct); memory from the GPU tables. An unknown model
  is kept under its own name, logged and counted, with no GPU memory.
- A shape without GPUs becomes a CPU offer flagged `hotaisle-cpu`, so consumers that assume
  every Hot Aisle offer has a GPU can leave them out with `allowed_flags`.
- Names: `vm-<gpu>-<count>` ("vm-mi300x-1"), `vm-cpu-<cores>` for CPU shapes (`bm-` for bare
  metal).
- The query filter: `spot=True` needs no API call (no spot VMs).
- Availability (`CatalogItem.available`, issue 38): both endpoints list only what is
  available to the team now, so every offer reads True; a shape that is taken is not in the
  answer at all (the API names nothing sold out), so it has no offer, as in gpuhunt 0.1.x.
"""

from __future__ import annotations

import copy
import logging
from typing import Any
from urllib.parse import quote

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.load import livecache
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, JSONObject
from gpuhunt.providers._records import NO_GPU, Gpu, offer
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OnlineProvider, get_creds_env

logger = logging.getLogger(__name__)

NAME = "hotaisle"
API_URL = "https://admin.hotaisle.app/api"
KEY_ENV = "HOTAISLE_API_KEY"
TEAM_ENV = "HOTAISLE_TEAM_HANDLE"
LOCATION = "us-michigan-1"
FLAG_CPU = "hotaisle-cpu"
FLAG_BARE_METAL = "hotaisle-bm"
# endpoint path -> (offer name prefix, provider_data key of the shape's specs)
KINDS: dict[str, tuple[str, str]] = {
    "virtual_machines": ("vm", "vm_specs"),
    "bare_metal": ("bm", "bare_metal_specs"),
}
_GIB = 1024**3


class HotAisleProvider(Collects[ParseReport], OnlineProvider):
    """Offers available to one team. Arguments left out are read from `HOTAISLE_API_KEY` and
    `HOTAISLE_TEAM_HANDLE` (`MissingCredsError` naming the one that is not set)."""

    NAME = NAME
    REPORT = ParseReport

    def __init__(self, api_key: str | None = None, team_handle: str | None = None) -> None:
        self.api_key = api_key or get_creds_env(KEY_ENV)
        self.team_handle = team_handle or get_creds_env(TEAM_ENV)

    def __repr__(self) -> str:
        return f"HotAisleProvider(api_key='***', team_handle={self.team_handle!r})"

    @classmethod
    def from_env(cls) -> HotAisleProvider:
        return cls(api_key=get_creds_env(KEY_ENV), team_handle=get_creds_env(TEAM_ENV))

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        if ask.spot is True:
            return []
        offers: list[CatalogItem] = []
        errors: list[ProviderError] = []
        for endpoint in KINDS:
            try:
                data = fetch_available(self.api_key, self.team_handle, endpoint)
                offers += parse_vms(data, report=report, endpoint=endpoint)
            except ProviderError as e:
                errors.append(e)
                report.skip(f"the {endpoint} offers", str(e))
        if len(errors) == len(KINDS):
            self.last_report = report  # what failed, for the caller who catches the error
            raise errors[0]
        return sorted(offers, key=lambda i: (i.price, i.instance_name))


def available_url(team_handle: str, endpoint: str = "virtual_machines") -> str:
    return f"{API_URL}/teams/{quote(team_handle, safe='')}/{endpoint}/available/"


def fetch_available(api_key: str, team_handle: str, endpoint: str = "virtual_machines") -> Any:
    url = available_url(team_handle, endpoint)
    return livecache.request_json(
        "GET",
        url,
        provider=NAME,
        secret=api_key,
        credential=KEY_ENV,
        headers={"Authorization": f"Token {api_key}", "Accept": "application/json"},
    )


def parse_vms(
    data: Any, *, report: ParseReport | None = None, endpoint: str = "virtual_machines"
) -> list[CatalogItem]:
    """Offers from the decoded list of available shapes of one endpoint (`KINDS`)."""
    if data is None:  # the API's way of saying none are available
        return []
    what = endpoint.replace("_", " ")
    if not isinstance(data, list):
        raise ProviderError(f"{NAME}: available {what}: expected a list, got {type(data).__name__}")
    report = report if report is not None else ParseReport(provider=HotAisleProvider.NAME)
    offers: list[CatalogItem] = []
    for vm in data:
        with report.record(f"{what} shape"):
            offers.append(_vm_offer(vm, report, endpoint))
    return offers


def _vm_offer(vm: JSONObject, report: ParseReport, endpoint: str) -> CatalogItem:
    kind, specs_key = KINDS[endpoint]
    flags = [FLAG_BARE_METAL] if kind == "bm" else []
    specs = vm["Specs"]
    price = float(vm["OnDemandPrice"]) / 100
    cpu = int(specs["cpu_cores"])
    memory = float(specs["ram_capacity"]) / _GIB
    disk = float(specs["disk_capacity"]) / _GIB
    gpus = [g for g in specs["gpus"] if int(g["count"]) > 0]
    if len(gpus) > 1:
        raise ValueError(f"VM shape with {len(gpus)} GPU models")
    provider_data: JSONObject = {specs_key: copy.deepcopy(specs)}
    if not gpus:
        name, amd, flags = f"{kind}-cpu-{cpu}", NO_GPU, [FLAG_CPU, *flags]
    else:
        model = str(gpus[0]["model"])
        gpu_count = int(gpus[0]["count"])
        gpu = resolve_gpu(model)
        gpu_name, gpu_memory = (gpu.name, gpu.memory) if gpu else (model, None)
        if gpu is None:
            report.unknown_gpu(model, f"the available {endpoint}; kept under that name")
        name = f"{kind}-{gpu_name.lower()}-{gpu_count}"
        amd = Gpu(gpu_count, gpu_name, AcceleratorVendor.AMD, gpu_memory)
    data = provider_data
    return offer(
        NAME,
        name,
        LOCATION,
        price,
        cpu,
        memory,
        amd,
        disk_size=disk,
        flags=flags,
        provider_data=data,
        available=True,  # listed by an "available" endpoint: that is Hot Aisle's reading
    )
