"""Hyperbolic: GPU nodes of its marketplace, rentable by the GPU, queried live.

Source: `POST https://api.hyperbolic.xyz/v1/marketplace` with body `{"filters": {}}`, one
answer `{"instances": [...]}`, no pagination. These are the call and fields of Hyperbolic's own
CLI (github.com/HyperbolicLabs/hyperbolic-cli `cmd/spot.go`, read 2026-12-01), which sends no
credential for it; `HYPERBOLIC_API_KEY`, when set, is sent as a bearer token (as other
clients of this endpoint do) and is otherwise not needed. Each record is one node: `id`,
`status`, `reserved`, `gpus_total`, `gpus_reserved`, `hardware` (`gpus[]` with `model` and
`ram` in MiB, `cpus[]` with `virtual_cores`, `ram[]` and `storage[]` with `capacity` in GB),
`location.region`, `pricing.price.amount` in **cents per GPU-hour** (the CLI divides by 100 and
labels it "per GPU per hour").

SkyPilot's fetcher for Hyperbolic (`fetch_hyperbolic.py`) reads a SkyPilot-specific endpoint
(`/v2/skypilot/catalog`) that answers catalog rows already made; it confirms the node shapes
(its rows give a slice of a 224-vCPU, 2165 GB H100 node in proportion to the GPUs) but not
this API's fields.

Decisions:

- These are the marketplace's spot rentals (Hyperbolic's CLI lists them as "spot compute
  resources"; on-demand VMs are priced by `/v2/marketplace/virtual-machine-options`, which
  needs a key and gives neither regions nor vCPU/RAM, so it is not read): `spot=True` on every
  offer, and an on-demand-only query makes no call.
- One offer per GPU count a renter can take on a node, 1 to `gpus_total - gpus_reserved`;
  nodes not `node_ready` or `reserved` give none. A slice of `k` of the node's `n` GPUs gets
  `k/n` of its vCPUs, RAM and storage, rounded down (never more than the node can give it).
- Price `amount / 100` per GPU-hour times the count. `instance_name` is the node id,
  `location` its `location.region`. The recorded answer has "region-1" on every node, which
  names no place; it has no row in the geography table (a country would be a guess).
- GPU through `resolve_gpu(model, ram MiB / 1024)`: "NVIDIA-H100-80GB-HBM3" -> H100 80 GB. An
  unknown model is kept under Hyperbolic's spelling (its nodes are NVIDIA), warned about and
  counted. A node with a missing or ill-typed field is skipped and counted in `last_report`.
"""

from __future__ import annotations

import os
from typing import Any

from typing_extensions import Self

from gpuhunt._internal.errors import ProviderError
from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers._keyed import keyed_json
from gpuhunt.providers._records import (
    BadRecord,
    Gpu,
    count,
    gpu_or_kept,
    number,
    obj,
    offer,
    read_each,
    text,
)
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OnlineProvider

NAME = "hyperbolic"
MARKETPLACE_URL = "https://api.hyperbolic.xyz/v1/marketplace"
CREDENTIAL = "HYPERBOLIC_API_KEY"
READY = "node_ready"
MAX_CENTS_PER_GPU_HOUR = 100_000.0


class HyperbolicProvider(Collects[ParseReport], OnlineProvider):
    NAME = NAME
    REPORT = ParseReport

    def __init__(self, api_key: str | None = None) -> None:
        self.api_key = api_key or None

    def __repr__(self) -> str:
        return f"HyperbolicProvider(api_key={'***' if self.api_key else None!r})"

    @classmethod
    def from_env(cls) -> Self:
        return cls(api_key=os.getenv(CREDENTIAL) or None)  # optional: the listing is public

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        if ask.spot is False:
            return []
        offers = parse_marketplace(fetch_marketplace(self.api_key), report)
        return sorted(offers, key=lambda i: (i.price, i.instance_name, i.gpu_count))


def fetch_marketplace(api_key: str | None) -> Any:
    auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    credential = CREDENTIAL if api_key else None
    body: dict[str, Any] = {"filters": {}}
    return keyed_json("POST", MARKETPLACE_URL, NAME, credential, api_key, auth, json=body)


def parse_marketplace(payload: Any, report: ParseReport | None = None) -> list[CatalogItem]:
    """Offers from a decoded marketplace answer."""
    report = report if report is not None else ParseReport(provider=NAME)
    if not isinstance(payload, dict) or not isinstance(payload.get("instances"), list):
        raise ProviderError(f"{NAME}: marketplace: expected an object with an 'instances' list")
    return read_each(payload["instances"], report, _what, _node_offers)


def _what(node: Any, index: int) -> str:
    ident = node.get("id") if isinstance(node, dict) else None
    return f"node {ident!r}" if isinstance(ident, str) else f"node #{index}"


def _node_offers(raw: Any, report: ParseReport, what: str) -> list[CatalogItem]:
    node = obj(raw)
    node_id = text(node, "id")
    if node.get("status") != READY or node.get("reserved") is True:
        report.counts["not_rentable"] += 1
        return []
    total = count(node, "gpus_total", high=64)
    reserved = count(node, "gpus_reserved", low=0, high=64)
    free = total - reserved
    if free <= 0:
        return []
    hardware = obj(node.get("hardware"), "field 'hardware'")
    gpus = _list(hardware, "gpus")
    gpu = obj(gpus[0], "a 'hardware.gpus' entry")
    model = text(gpu, "model")
    cpus = sum(
        count(obj(c, "a 'hardware.cpus' entry"), "virtual_cores") for c in _list(hardware, "cpus")
    )
    ram = sum(number(obj(r, "a 'hardware.ram' entry"), "capacity") for r in _list(hardware, "ram"))
    storage = sum(
        number(obj(s, "a 'hardware.storage' entry"), "capacity") for s in _list(hardware, "storage")
    )
    location = text(obj(node.get("location"), "field 'location'"), "region")
    price = obj(obj(node.get("pricing"), "field 'pricing'").get("price"), "field 'pricing.price'")
    per_gpu = number(price, "amount", high=MAX_CENTS_PER_GPU_HOUR) / 100
    vram = number(gpu, "ram", high=1024 * 1024) / 1024 if "ram" in gpu else None
    name, vendor, memory = gpu_or_kept(model, vram, report, what)
    offers = []
    for k in range(1, free + 1):
        cpu = cpus * k // total
        if cpu < 1:
            continue
        cost, share = round(per_gpu * k, 5), Gpu(k, name, vendor, memory)
        ram_k, disk = float(int(ram * k / total)), float(int(storage * k / total))
        offers.append(offer(NAME, node_id, location, cost, cpu, ram_k, share, disk, spot=True))

    return offers


def _list(record: dict[str, Any], key: str) -> list[Any]:
    value = record.get(key)
    if not isinstance(value, list) or not value:
        raise BadRecord(f"field 'hardware.{key}' is missing or empty")
    return value
