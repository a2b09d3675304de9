"""Paperspace (DigitalOcean): machines at list prices, each with the API's reading of whether it
is available now, queried live with the user's key.

What the API gives: Paperspace's public API (`https://api.paperspace.com/v1`, bearer
`PAPERSPACE_API_KEY`) has no machine-type or price listing. Its one catalog call is
`GET /machine-availability?machineType=<type>&region=<region>` answering
`{"available": true|false}` (DigitalOcean's Paperspace API reference, "Machine Types",
https://docs.digitalocean.com/reference/paperspace/api-reference/machine-types/, read
2026-12-01). SkyPilot has no fetcher for Paperspace either: its catalog is a kept list
(skypilot-org/skypilot-catalog `catalogs/v6/paperspace/vms.csv`, commit e5200541), and its
provisioner (`sky/provision/paperspace/utils.py`) calls `api.paperspace.com/v1` with a bearer key.

So this provider combines:

- `MACHINES`: the hourly list prices, vCPUs and RAM of SkyPilot's Paperspace catalog (the only
  public machine-readable copy of Paperspace's price list we have; the machine type names are
  Paperspace's). Types the docs list without a price there (P5000, P6000, RTX4000, RTX5000,
  A5000, A6000, A100 40 GB) are not offered: no price would be a guessed one.
- `GPU_REGIONS`: where each GPU machine is sold, from Paperspace's availability table
  (https://docs.digitalocean.com/products/paperspace/machines/details/availability/; CPU
  machines in every region), region names as Paperspace's API spells them
  ("East Coast (NY2)", "West Coast (CA1)", "Europe (AMS1)").
- one availability call per (machine type, region) pair the query filter leaves (matching is
  done on the list first, so `--gpu H100` asks once), its answer kept as the offer's
  `CatalogItem.available`. An answer without a boolean `available` gives no reading
  (the offer stays, without one) and is counted as malformed.

Every pair is offered, available or not (decision, issue 38): until then only the pairs
answering `available: true` were kept (no release before had Paperspace, so no caller depends on
that). The price list is what Paperspace sells where; the reading says whether it can be
launched now, and `query(available=True)` keeps those.

Not testable here: which region strings the v1 API accepts is not documented (its parameter is
"anyOf"); these are the names its predecessor documented and SkyPilot's catalog uses.

Quadro M4000 ("GPU+") and P4000 are not in the accelerator tables: they are kept under
Paperspace's names with their boards' 8 GB (NVIDIA's datasheets), and counted as unknown GPUs.
Machines are on-demand only (`spot=True` queries make no call). Requests carry the key and pass
`allow_redirects=False`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, QueryFilter
from gpuhunt._internal.query.match import matches
from gpuhunt.providers._keyed import KeyedProvider, keyed_json
from gpuhunt.providers._records import Gpu, gpu_or_kept, offer
from gpuhunt.providers._report import ParseReport

NAME = "paperspace"
API_URL = "https://api.paperspace.com/v1"
AVAILABILITY_URL = f"{API_URL}/machine-availability"
CREDENTIAL = "PAPERSPACE_API_KEY"
NY2, CA1, AMS1 = "East Coast (NY2)", "West Coast (CA1)", "Europe (AMS1)"
ALL_REGIONS = (NY2, CA1, AMS1)


@dataclass(frozen=True)
class Machine:
    machine_type: str
    gpu: str | None  # Paperspace's GPU name, None for CPU machines
    gpu_count: int
    cpu: int
    memory: float
    price: float


# skypilot-org/skypilot-catalog catalogs/v6/paperspace/vms.csv (commit e5200541): InstanceType,
# AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, Price.
MACHINES: tuple[Machine, ...] = (
    Machine("H100", "H100", 1, 15, 80.0, 5.95),
    Machine("H100x8", "H100", 8, 128, 640.0, 47.60),
    Machine("A100-80G", "A100-80G", 1, 12, 80.0, 3.18),
    Machine("A100-80Gx8", "A100-80G", 8, 96, 640.0, 25.44),
    Machine("V100-32G", "V100-32G", 1, 8, 32.0, 2.30),
    Machine("V100-32Gx2", "V100-32G", 2, 16, 64.0, 4.60),
    Machine("V100-32Gx4", "V100-32G", 4, 32, 128.0, 9.20),
    Machine("V100", "V100", 1, 8, 32.0, 2.29),
    Machine("GPU+", "M4000", 1, 8, 32.0, 0.45),
    Machine("P4000", "P4000", 1, 8, 32.0, 0.51),
    Machine("P4000x2", "P4000", 2, 16, 64.0, 1.02),
    Machine("A4000", "A4000", 1, 8, 32.0, 0.76),
    Machine("A4000x2", "A4000", 2, 16, 92.0, 1.52),
    Machine("A4000x4", "A4000", 4, 32, 193.0, 3.04),
    Machine("C5", None, 0, 4, 8.59, 0.08),
    Machine("C6", None, 0, 8, 17.2, 0.16),
    Machine("C7", None, 0, 12, 32.2, 0.30),
    Machine("C8", None, 0, 16, 64.4, 0.60),
    Machine("C9", None, 0, 24, 129.0, 0.90),
)

# Paperspace's GPU availability table (docs.digitalocean.com, see above), by GPU.
GPU_REGIONS: dict[str, tuple[str, ...]] = {
    "M4000": (NY2, AMS1),
    "P4000": (NY2, AMS1, CA1),
    "A4000": (NY2, AMS1, CA1),
    "V100": (NY2, AMS1),
    "V100-32G": (NY2,),
    "A100-80G": (NY2,),
    "H100": (NY2,),
}

# Boards the accelerator tables do not list: GB of memory per NVIDIA's datasheets.
_QUADRO_MEMORY = {"M4000": 8.0, "P4000": 8.0}


class PaperspaceProvider(KeyedProvider):
    NAME = NAME
    CREDENTIAL = CREDENTIAL

    def _offers(self, query_filter: QueryFilter | None, report: ParseReport) -> list[CatalogItem]:
        offers = []
        for listed in list_offers(report):
            if query_filter is not None and not matches(listed, query_filter):
                continue
            available = is_available(self.api_key, listed.instance_name, listed.location, report)
            if available is not None:
                listed = dataclasses.replace(listed, available=available)
            offers.append(listed)
        return offers


def list_offers(report: ParseReport | None = None) -> list[CatalogItem]:
    """Every (machine type, region) of the price list, before asking the API."""
    report = report if report is not None else ParseReport(provider=NAME)
    offers = []
    for machine in MACHINES:
        name: str | None = None
        vendor: AcceleratorVendor | None = None
        memory: float | None = None
        if machine.gpu is not None:
            name, vendor, memory = gpu_or_kept(
                machine.gpu,
                _QUADRO_MEMORY.get(machine.gpu),
                report,
                f"machine {machine.machine_type}",
            )
        regions = GPU_REGIONS[machine.gpu] if machine.gpu else ALL_REGIONS
        gpu = Gpu(machine.gpu_count, name, vendor, memory)
        for region in regions:
            offers.append(
                offer(
                    NAME,
                    machine.machine_type,
                    region,
                    machine.price,
                    machine.cpu,
                    machine.memory,
                    gpu,
                )
            )
    return offers


def is_available(api_key: str, machine_type: str, region: str, report: ParseReport) -> bool | None:
    """The API's answer for one (machine type, region); None when it gave no boolean."""
    auth = {"Authorization": f"Bearer {api_key}"}
    params = {"machineType": machine_type, "region": region}
    answer: Any = keyed_json(
        "GET", AVAILABILITY_URL, NAME, CREDENTIAL, api_key, auth, params=params
    )
    what = f"availability of {machine_type} in {region}"
    # The record here is the answer for one (type, region): any exception reading it skips
    # that offer, counted (ParseReport.record); HTTP failures above still raise.
    with report.record(what):
        available = answer.get("available") if isinstance(answer, dict) else None
        if not isinstance(available, bool):
            report.counts["malformed"] += 1
            report.skip(what, "no boolean 'available'")
            return None
        return available
    return None
