"""Fluidstack: on-demand GPU VMs, queried live with the user's API key.

Source: `GET https://platform.fluidstack.io/list_available_configurations` with the key in the
`api-key` header (`FLUIDSTACK_API_KEY`), one JSON list, no pagination. These are the endpoint,
header and fields SkyPilot's Fluidstack fetcher and provisioner read
(skypilot-org/skypilot `sky/catalog/data_fetchers/fetch_fluidstack.py`,
`sky/provision/fluidstack/fluidstack_utils.py`, read 2026-12-01). Each record is a GPU
configuration in stock: `gpu_type` ("H100_PCIE_80GB": model, board, memory), `gpu_counts` (the
counts one instance may have), `price_per_gpu_hr` and `regions` (region names, "CANADA").

Decisions:

- One offer per configuration, GPU count and region; price `price_per_gpu_hr` times the count.
  On-demand only (`spot=True` queries make no call).
- The answer says nothing of vCPUs or RAM. Fluidstack sizes them per GPU type and count; the
  minimum shapes are the table below (the values SkyPilot's fetcher records for Fluidstack,
  `plan_vcpus_memory`). A GPU type and count not in it is skipped and counted
  (`counts["no_shape"]`), not offered with a guessed size.
- GPU model and memory through `resolve_gpu` on `gpu_type` (memory from the name's "80GB").
  A type the tables do not know is kept under Fluidstack's spelling (Fluidstack sells NVIDIA
  GPUs only), warned about and counted.
- The request carries the key and passes `allow_redirects=False`: a redirect fails instead of
  carrying the key elsewhere.
- A record with a missing or ill-typed field is skipped and counted in `last_report`.
"""

from __future__ import annotations

import logging
from typing import Any

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.models import CatalogItem, QueryFilter
from gpuhunt.providers._keyed import KeyedProvider, keyed_json
from gpuhunt.providers._records import (
    BadRecord,
    Gpu,
    gpu_or_kept,
    number,
    obj,
    offer,
    read_each,
    text,
    whole,
)
from gpuhunt.providers._report import ParseReport

logger = logging.getLogger(__name__)

NAME = "fluidstack"
CONFIGURATIONS_URL = "https://platform.fluidstack.io/list_available_configurations"
CREDENTIAL = "FLUIDSTACK_API_KEY"
MAX_PRICE_PER_GPU_HOUR = 1000.0

# (gpu_type, gpu count) -> (vCPUs, RAM GB) of the smallest instance Fluidstack creates, as
# SkyPilot's fetcher records them (fetch_fluidstack.py `plan_vcpus_memory`, 2026-12-01).
SHAPES: dict[tuple[str, int], tuple[int, float]] = {
    ("H100_SXM5_80GB", 1): (52, 450.0),
    ("H100_SXM5_80GB", 2): (52, 450.0),
    ("H100_SXM5_80GB", 4): (104, 900.0),
    ("H100_SXM5_80GB", 8): (192, 1800.0),
    ("H100_PCIE_80GB", 1): (28, 180.0),
    ("H100_PCIE_80GB", 2): (60, 360.0),
    ("H100_PCIE_80GB", 4): (124, 720.0),
    ("H100_PCIE_80GB", 8): (252, 1440.0),
    ("H100_NVLINK_80GB", 8): (252, 1440.0),
    ("A100_NVLINK_80GB", 8): (252, 960.0),
    ("A100_PCIE_80GB", 1): (28, 120.0),
    ("A100_PCIE_80GB", 2): (60, 240.0),
    ("A100_PCIE_80GB", 4): (124, 480.0),
    ("A100_PCIE_80GB", 8): (252, 1440.0),
    ("L40_48GB", 1): (32, 60.0),
    ("L40_48GB", 2): (64, 120.0),
    ("L40_48GB", 4): (126, 240.0),
    ("L40_48GB", 8): (252, 480.0),
    ("RTX_A6000_48GB", 1): (6, 55.0),
    ("RTX_A6000_48GB", 2): (12, 110.0),
    ("RTX_A6000_48GB", 4): (24, 220.0),
    ("RTX_A6000_48GB", 8): (252, 464.0),
    ("RTX_A5000_24GB", 1): (8, 30.0),
    ("RTX_A5000_24GB", 2): (16, 60.0),
    ("RTX_A5000_24GB", 4): (32, 120.0),
    ("RTX_A5000_24GB", 8): (64, 240.0),
    ("RTX_A4000_16GB", 1): (6, 24.0),
    ("RTX_A4000_16GB", 2): (12, 48.0),
    ("RTX_A4000_16GB", 4): (24, 96.0),
    ("RTX_A4000_16GB", 8): (48, 192.0),
}


class FluidstackProvider(KeyedProvider):
    NAME = NAME
    CREDENTIAL = CREDENTIAL

    def _offers(self, query_filter: QueryFilter | None, report: ParseReport) -> list[CatalogItem]:
        return parse_configurations(fetch_configurations(self.api_key), report)


def fetch_configurations(api_key: str) -> Any:
    return keyed_json("GET", CONFIGURATIONS_URL, NAME, CREDENTIAL, api_key, {"api-key": api_key})


def parse_configurations(payload: Any, report: ParseReport | None = None) -> list[CatalogItem]:
    """Offers from a decoded `list_available_configurations` answer (a list of records)."""
    report = report if report is not None else ParseReport(provider=NAME)
    if not isinstance(payload, list):
        raise ProviderError(f"{NAME}: list_available_configurations: expected a list")
    return read_each(payload, report, _what, _configuration_offers)


def _what(record: Any, index: int) -> str:
    gpu_type = record.get("gpu_type") if isinstance(record, dict) else None
    return f"configuration {gpu_type!r}" if gpu_type else f"configuration #{index}"


def _configuration_offers(raw: Any, report: ParseReport, what: str) -> list[CatalogItem]:
    record = obj(raw)
    gpu_type = text(record, "gpu_type")
    price_per_gpu = number(record, "price_per_gpu_hr", high=MAX_PRICE_PER_GPU_HOUR)
    counts = record.get("gpu_counts")
    regions = record.get("regions")
    if not isinstance(counts, list) or not counts:
        raise BadRecord("field 'gpu_counts' is missing or empty")
    if not isinstance(regions, list) or not all(isinstance(r, str) and r for r in regions):
        raise BadRecord("field 'regions' is missing or not a list of names")
    gpu_counts = [whole(n, "a value of 'gpu_counts'", high=64) for n in counts]
    name, vendor, memory = gpu_or_kept(gpu_type, None, report, what)
    offers = []
    for gpu_count in gpu_counts:
        shape = SHAPES.get((gpu_type, gpu_count))
        if shape is None:
            report.counts["no_shape"] += 1
            logger.info("%s: no known vCPU/RAM for %s x%d; skipped", NAME, gpu_type, gpu_count)
            continue
        cpu, ram = shape
        size, price = f"{gpu_type}::{gpu_count}", round(price_per_gpu * gpu_count, 5)
        gpu = Gpu(gpu_count, name, vendor, memory)
        offers += [offer(NAME, size, region, price, cpu, ram, gpu) for region in regions]
    return offers
