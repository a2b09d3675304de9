"""Every (provider, location) that provider code makes of the recorded answers: the offline
providers' replays (`scripts/replay`) and each online provider's parser run over its recorded
answers in tests/providers/data. The geography table's completeness test reads this, so a new
recording with a new region fails that test until the region has its row."""

from __future__ import annotations

import importlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from gpuhunt._internal.models import CatalogItem, QueryFilter

DATA = Path(__file__).resolve().parent / "providers" / "data"
OFFLINE_REPLAYS = [
    "aws",
    "azure",
    "gcp",
    "oci",
    "lambdalabs",
    "nebius",
    "runpod",
    "cloudrift",
    "verda",
]


def _load(provider: str, name: str) -> Any:
    return json.loads((DATA / provider / name).read_text())


def _online() -> set[tuple[str, str]]:
    from gpuhunt.providers import (
        crusoe,
        cudo,
        daytona,
        digitalocean,
        hotaisle,
        jarvislabs,
        lium,
        seeweb,
        tensordock,
        vastai,
        vultr,
    )

    q = QueryFilter()
    found: dict[str, list[CatalogItem]] = {}
    found["vastai"] = [
        i
        for name in ("bundles_offers_2024.json", "bundles_offers_2022.json")
        for i in vastai.parse_offers(_load("vastai", name), q)
    ]
    found["vultr"] = vultr.parse_offers(
        _load("vultr", "plans_vcg.json")["plans"],
        _load("vultr", "plans_metal_gpu.json")["plans_metal"],
    )
    found["hotaisle"] = [
        *hotaisle.parse_vms(_load("hotaisle", "virtual_machines_available_probe_shim.json")),
        *hotaisle.parse_vms(
            _load("hotaisle", "virtual_machines_available_cpu_item_testfixture.json")
        ),
        *hotaisle.parse_vms(
            _load("hotaisle", "bare_metal_available_testfixture.json"), endpoint="bare_metal"
        ),
    ]
    found["digitalocean"] = digitalocean.parse_sizes(
        _load("digitalocean", "sizes_gpu.json")["sizes"]
    )
    found["jarvislabs"] = jarvislabs.parse_server_meta(_load("jarvislabs", "misc_server_meta.json"))
    found["crusoe"] = [
        *crusoe.parse_offers(
            _load("crusoe", "vm_types_with_specs.json"),
            _load("crusoe", "capacities_several_locations.json"),
        ),
        *crusoe.parse_offers(
            _load("crusoe", "vm_types_testfixture.json"),
            _load("crusoe", "capacities_testfixture.json"),
        ),
    ]
    found["seeweb"] = seeweb.parse_plans(_load("seeweb", "ecs_v2_plans.json"))
    found["tensordock"] = tensordock.parse_hostnodes(_load("tensordock", "hostnodes.json"), q)
    found["cudo"] = cudo.parse_machine_types(
        {"machineTypes": _load("cudo", "vm_machine_types.json")}, q
    )
    found["lium"] = lium.parse_nodes(_load("lium", "public_v1_nodes_2026-09-10_trimmed.json"))
    pairs = {(p, i.location) for p, items in found.items() for i in items}
    # Daytona's CPU offers are one copy of a shape per shared region; its GPU offers are in
    # the constant `GPU_LOCATION`.
    regions = daytona.parse_regions(_load("daytona", "shared_regions_testfixture.json"))
    pairs |= {("daytona", r) for r in regions} | {("daytona", daytona.GPU_LOCATION)}
    return pairs


@lru_cache(maxsize=1)
def recorded_locations() -> frozenset[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for provider in OFFLINE_REPLAYS:
        replay = importlib.import_module(f"scripts.replay.replay_{provider}")
        found |= {(provider, i.location) for i in replay.collect()}
    return frozenset(found | _online())
