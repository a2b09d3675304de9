"""Every gpuhunt name dstack imports, written down once, checked to exist with its meaning.

Why: dstack 0.22.5 swallows an ImportError from a backend's configurator, so a renamed
constant (`gpuhunt.providers.daytona.GPU_REGION`) made its Daytona backend vanish without a
word (issue #23). Names dstack imports are public API (docs/compatibility.md).

Where the list comes from (read on 2026-12-01):

- dstack 0.21.2 (tag `0.21.2`, pins gpuhunt==0.1.30): `git grep gpuhunt` over
  `src/dstack/_internal/core/backends/`, `src/dstack/_internal/server/`, `src/dstack/_internal/
  utils/gpu.py` and `src/tests/`, in a mirror of dstackai/dstack.
- dstack 0.22.5 (pins gpuhunt==0.1.34): the mirror has no `0.22.5` tag, so the files that exist
  only after 0.21.2 (Daytona, Seeweb, Vultr tests, Hot Aisle tests) were read from the stored
  copies of dstackai/dstack; paths below, commit where the store named it. What those files
  do not show is taken from ../shared/DESIGN.md's contract list (marked "DESIGN.md").

Values marked 0.1.34 were read from the gpuhunt 0.1.34 wheel on PyPI (facts only).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import io
import json
import zipfile
from csv import DictReader
from importlib import resources
from typing import Any

import pytest

import gpuhunt
from gpuhunt.providers.base import AbstractProvider, OfflineProvider

D021 = "dstack 0.21.2"
D022 = "dstack 0.22.5"

# (name, where dstack imports or uses it). Top-level `gpuhunt.*` names.
TOP_LEVEL: list[tuple[str, str]] = [
    ("AcceleratorVendor", f"{D021}+{D022} core/models/resources.py, kubernetes/resources.py"),
    ("CPUArchitecture", f"{D021}+{D022} core/backends/base/compute.py, server/services/docker.py"),
    ("Catalog", f"{D021}+{D022} core/backends/base/offers.py, crusoe/compute.py, ..."),
    ("CatalogItem", f"{D021}+{D022} core/backends/base/offers.py"),
    ("QueryFilter", f"{D021}+{D022} core/backends/base/offers.py"),
    ("matches", f"{D021}+{D022} core/backends/base/offers.py, server/services/instances.py"),
    ("default_catalog", f"{D021}+{D022} server/background/scheduled_tasks/offers_catalog.py"),
    ("find_accelerators", f"{D021}+{D022} core/backends/slurm/resources.py"),
    ("correct_gpu_memory_gib", f"{D021}+{D022} server/services/ssh_fleets/provisioning.py"),
    ("KNOWN_NVIDIA_GPUS", f"{D021}+{D022} core/backends/base/offers.py, utils/gpu.py"),
    ("KNOWN_AMD_GPUS", f"{D021}+{D022} kubernetes/resources.py, utils/gpu.py"),
    ("KNOWN_INTEL_ACCELERATORS", f"{D021}+{D022} utils/gpu.py"),
    ("KNOWN_TENSTORRENT_ACCELERATORS", f"{D021}+{D022} utils/gpu.py, tests/.../test_run.py"),
    ("KNOWN_TPUS", f"{D021}+{D022} core/backends/gcp/compute.py, utils/gpu.py"),
    ("KNOWN_ACCELERATORS", "DESIGN.md"),
    ("is_nvidia_superchip", "DESIGN.md"),
    ("query", "DESIGN.md"),
    ("GPUHuntError", "DESIGN.md"),
    ("ProviderError", "DESIGN.md"),
    ("MissingCredsError", "DESIGN.md"),
]

# (module, name, 0.1.34's value, where dstack imports it)
CONSTANTS: list[tuple[str, str, Any, str]] = [
    (
        "daytona",
        "GPU_REGION",
        "earth",
        f"{D022} core/backends/daytona/configurator.py (commit 551cb6d37af9)",
    ),
    ("daytona", "API_URL", "https://app.daytona.io/api", f"{D022} daytona/api_client.py"),
    (
        "hotaisle",
        "API_URL",
        "https://admin.hotaisle.app/api",
        f"{D022} src/tests/_internal/core/backends/hotaisle/test_compute.py",
    ),
    (
        "vultr",
        "API_URL",
        "https://api.vultr.com/v2",
        f"{D022} src/tests/_internal/core/backends/vultr/test_compute.py",
    ),
    (
        "jarvislabs",
        "API_URL",
        "https://backendn.jarvislabs.net",
        f"{D021}+{D022} core/backends/jarvislabs/api_client.py",
    ),
    (
        "jarvislabs",
        "JARVISLABS_REGION_URLS",
        {
            "india-01": "https://backendprod.jarvislabs.net",
            "india-chennai-01": "https://backendc.jarvislabs.net",
            "india-noida-01": "https://backendn.jarvislabs.net",
            "europe-01": "https://backendeu.jarvislabs.net",
        },
        f"{D021}+{D022} jarvislabs/api_client.py, jarvislabs/configurator.py",
    ),
]

# (module, class, attribute, 0.1.34's value, where)
CLASS_CONSTANTS: list[tuple[str, str, str, Any, str]] = [
    ("runpod", "RunpodProvider", "MIN_CUDA_VERSION", "12.8", f"{D021}+{D022} runpod/api_client.py"),
]

# (module, class, keywords dstack passes, where). Online providers dstack builds itself.
CONSTRUCTORS: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "vultr",
        "VultrProvider",
        {"api_key": "k", "regions": ["ewr"]},
        f"{D022} vultr/compute.py; DESIGN.md",
    ),
    ("daytona", "DaytonaProvider", {"api_key": "k"}, f"{D022} daytona/compute.py"),
    (
        "seeweb",
        "SeewebProvider",
        {"token": "t"},
        f"{D022} core/backends/seeweb/compute.py (stored copy)",
    ),
    ("lium", "LiumProvider", {}, "DESIGN.md"),
    (
        "vastai",
        "VastAIProvider",
        {
            "extra_filters": {"reliability": {"gte": 0.9}},
            "community_cloud": False,
            "order": [("dph_total", "asc")],
        },
        f"{D021}+{D022} vastai/compute.py",
    ),
    (
        "crusoe",
        "CrusoeProvider",
        {"access_key": "a", "secret_key": "s", "project_id": "p"},
        f"{D021}+{D022} crusoe/compute.py",
    ),
    (
        "digitalocean",
        "DigitalOceanProvider",
        {"api_key": "k", "api_url": "https://api.digitalocean.com"},
        f"{D021}+{D022} digitalocean_base/compute.py",
    ),
    (
        "hotaisle",
        "HotAisleProvider",
        {"api_key": "k", "team_handle": "team"},
        f"{D021}+{D022} hotaisle/compute.py",
    ),
    ("jarvislabs", "JarvisLabsProvider", {"api_key": "k"}, f"{D021}+{D022} jarvislabs/compute.py"),
    ("runpod", "RunpodProvider", {}, f"{D021}+{D022} runpod/api_client.py"),
]

# Attributes the keywords must land on, where this package keeps them public (the meaning:
# the value given is the value used, not ignored).
KEYWORD_LANDS: dict[str, dict[str, Any]] = {
    "VultrProvider": {"api_key": "k", "regions": ["ewr"]},
    "DaytonaProvider": {"api_key": "k"},
    "VastAIProvider": {
        "extra_filters": {"reliability": {"gte": 0.9}},
        "community_cloud": False,
        "order": [("dph_total", "asc")],
    },
    "CrusoeProvider": {"project_id": "p"},
    "DigitalOceanProvider": {"api_key": "k", "api_url": "https://api.digitalocean.com"},
    "HotAisleProvider": {"api_key": "k", "team_handle": "team"},
    "JarvisLabsProvider": {"api_key": "k"},
}

# provider_data keys dstack reads: (provider, key, where). The per-provider tests pin their
# values on recorded payloads; here: the provider module writes the key.
PROVIDER_DATA_KEYS: list[tuple[str, str, str]] = [
    ("crusoe", "disk_gb", f"{D021}+{D022} crusoe/compute.py (ephemeral NVMe)"),
    ("hotaisle", "vm_specs", f"{D021}+{D022} hotaisle/compute.py"),
    ("jarvislabs", "gpu_type", f"{D021}+{D022} jarvislabs/compute.py"),
    ("vastai", "min_bid", f"{D021}+{D022} vastai/compute.py"),
    ("runpod", "pod_counts", f"{D021}+{D022} runpod/compute.py"),
    ("nebius", "fabrics", f"{D021}+{D022} nebius/compute.py"),
    ("gcp", "is_dws_calendar_mode", f"{D021}+{D022} gcp/compute.py"),
]

# Flags dstack allows: SUPPORTED_GPUHUNT_FLAGS in core/backends/base/offers.py (0.21.2).
FLAGS: list[tuple[str, str]] = [
    ("oci-spot", "oci"),
    ("lambda-arm", "lambdalabs"),
    ("gcp-a4", "gcp"),
    ("gcp-g4", "gcp"),
    ("gcp-dws-calendar-mode", "gcp"),
    ("runpod-cpu", "runpod"),
    ("runpod-cluster", "runpod"),
]


def _module(name: str):
    return importlib.import_module(f"gpuhunt.providers.{name}")


@pytest.mark.parametrize(("name", "where"), TOP_LEVEL, ids=[n for n, _ in TOP_LEVEL])
def test_top_level_name(name: str, where: str) -> None:
    assert hasattr(gpuhunt, name), f"gpuhunt.{name} (imported by {where}) is missing"


def test_top_level_meanings() -> None:
    assert dataclasses.is_dataclass(gpuhunt.CatalogItem)
    assert dataclasses.is_dataclass(gpuhunt.QueryFilter)
    assert gpuhunt.AcceleratorVendor.cast("NVIDIA") is gpuhunt.AcceleratorVendor.NVIDIA
    assert gpuhunt.CPUArchitecture.cast("ARM") is gpuhunt.CPUArchitecture.ARM
    assert issubclass(gpuhunt.MissingCredsError, gpuhunt.ProviderError)
    assert issubclass(gpuhunt.ProviderError, gpuhunt.GPUHuntError)
    # dstack builds {name: compute_capability} from this table.
    h100 = {g.name: g.compute_capability for g in gpuhunt.KNOWN_NVIDIA_GPUS}["H100"]
    assert h100 == (9, 0)
    # ssh_fleets/provisioning.py: nvidia-smi reports MiB, dstack wants the catalog's GiB.
    assert gpuhunt.correct_gpu_memory_gib("H100", 81559) == 80
    # offers.py calls matches(item, q=...).
    item = gpuhunt.CatalogItem(
        provider="aws",
        instance_name="x",
        location="l",
        price=1.0,
        cpu=1,
        memory=1.0,
        gpu_count=0,
        gpu_name=None,
        gpu_memory=None,
        spot=False,
        disk_size=None,
    )
    assert gpuhunt.matches(item, q=gpuhunt.QueryFilter(max_price=2.0))
    assert not gpuhunt.matches(item, q=gpuhunt.QueryFilter(max_price=0.5))
    # Catalog(balance_resources=False, auto_reload=False) and add_provider, as every backend.
    assert {"balance_resources", "auto_reload"} <= set(
        inspect.signature(gpuhunt.Catalog).parameters
    )
    assert callable(gpuhunt.Catalog.add_provider)


@pytest.mark.parametrize(
    ("module", "name", "value", "where"), CONSTANTS, ids=[f"{m}.{n}" for m, n, _, _ in CONSTANTS]
)
def test_module_constant(module: str, name: str, value: Any, where: str) -> None:
    mod = _module(module)
    assert hasattr(mod, name), f"gpuhunt.providers.{module}.{name} ({where}) is missing"
    assert getattr(mod, name) == value


@pytest.mark.parametrize(("module", "cls", "attr", "value", "where"), CLASS_CONSTANTS)
def test_class_constant(module: str, cls: str, attr: str, value: Any, where: str) -> None:
    assert getattr(getattr(_module(module), cls), attr) == value


@pytest.mark.parametrize(
    ("module", "cls", "kwargs", "where"), CONSTRUCTORS, ids=[c for _, c, _, _ in CONSTRUCTORS]
)
def test_constructor_keywords(module: str, cls: str, kwargs: dict, where: str) -> None:
    klass = getattr(_module(module), cls)
    assert issubclass(klass, AbstractProvider)
    assert module == klass.NAME
    provider = klass(**kwargs)  # builds without touching the network
    for attr, value in KEYWORD_LANDS.get(cls, {}).items():
        assert getattr(provider, attr) == value, f"{cls}({attr}=...) did not take the value"


def test_daytona_gpu_offers_are_in_gpu_region() -> None:
    # dstack's configurator accepts GPU_REGION as a region: GPU offers must carry it.
    from gpuhunt.providers import daytona

    pricing = daytona.parse_pricing(
        {
            "gpus": [{"type": "H100", "onDemandPricePerHour": 2.0, "spotPricePerHour": 1.0}],
            "resources": {
                option: {"vcpuPerHour": 0.01, "memoryGiBPerHour": 0.01, "diskGiBPerHour": 0.0}
                for option in ("onDemand", "spot")
            },
        }
    )
    offers = daytona.gpu_offers(pricing, None)
    assert offers and {o.location for o in offers} == {daytona.GPU_REGION}


@pytest.mark.parametrize(("provider", "key", "where"), PROVIDER_DATA_KEYS)
def test_provider_data_key_written(provider: str, key: str, where: str) -> None:
    source = inspect.getsource(_module(provider))
    assert f'"{key}"' in source, f"{provider} no longer writes provider_data[{key!r}] ({where})"


def _snapshot_rows(provider: str) -> list[dict[str, str]]:
    data = resources.files("gpuhunt.resources").joinpath("catalog.zip").read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as z, z.open(f"{provider}.csv") as f:
        return list(DictReader(io.TextIOWrapper(f, encoding="utf-8")))


def test_snapshot_carries_what_dstack_reads() -> None:
    gcp = _snapshot_rows("gcp")
    assert gcp and all("is_dws_calendar_mode" in json.loads(r["provider_data"]) for r in gcp)
    assert any("oci-spot" in r["flags"].split() for r in _snapshot_rows("oci"))
    assert any("lambda-arm" in r["flags"].split() for r in _snapshot_rows("lambdalabs"))


@pytest.mark.parametrize(("flag", "provider"), FLAGS)
def test_flag_still_spelled_the_same(flag: str, provider: str) -> None:
    assert f'"{flag}"' in inspect.getsource(_module(provider))


def test_offline_providers_keep_filter_classmethod() -> None:
    assert inspect.ismethod(OfflineProvider.filter)
