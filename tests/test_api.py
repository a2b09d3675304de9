"""The public names gpuhunt 0.1.30 callers (dstack) use must exist with the same meaning."""

import dataclasses
import importlib
import pkgutil

import pytest

import gpuhunt
import gpuhunt.providers
from gpuhunt._internal import registry

CONTRACT = [
    "Catalog",
    "CatalogItem",
    "QueryFilter",
    "query",
    "default_catalog",
    "matches",
    "AcceleratorVendor",
    "CPUArchitecture",
    "KNOWN_NVIDIA_GPUS",
    "KNOWN_AMD_GPUS",
    "KNOWN_TPUS",
    "KNOWN_INTEL_ACCELERATORS",
    "KNOWN_TENSTORRENT_ACCELERATORS",
    "KNOWN_ACCELERATORS",
    "AcceleratorInfo",
    "NvidiaGPUInfo",
    "AMDGPUInfo",
    "TPUInfo",
    "IntelAcceleratorInfo",
    "TenstorrentAcceleratorInfo",
    "find_accelerators",
    "correct_gpu_memory_gib",
    "is_nvidia_superchip",
    "GPUHuntError",
    "ProviderError",
    "MissingCredsError",
]


@pytest.mark.parametrize("name", CONTRACT)
def test_name_exists(name):
    assert hasattr(gpuhunt, name)


def test_catalog_item_fields_and_validation():
    fields = [f.name for f in dataclasses.fields(gpuhunt.CatalogItem)]
    assert fields == [
        "provider",
        "instance_name",
        "location",
        "price",
        "cpu",
        "memory",
        "gpu_count",
        "gpu_name",
        "gpu_memory",
        "spot",
        "disk_size",
        "gpu_vendor",
        "flags",
        "cpu_arch",
        "provider_data",
    ]
    with pytest.raises(ValueError):
        gpuhunt.CatalogItem(
            provider="x",
            instance_name="i",
            location="l",
            price=1,
            cpu=1,
            memory=1,
            gpu_count=1,
            gpu_name="A100",
            gpu_memory=40,
            spot=False,
            disk_size=None,
        )


def test_query_filter_fields_are_query_keywords():
    import inspect

    params = set(inspect.signature(gpuhunt.Catalog.query).parameters) - {"self"}
    assert {f.name for f in dataclasses.fields(gpuhunt.QueryFilter)} == params


def test_error_tree():
    assert issubclass(gpuhunt.MissingCredsError, gpuhunt.ProviderError)
    assert issubclass(gpuhunt.ProviderError, gpuhunt.GPUHuntError)
    assert issubclass(gpuhunt.CatalogError, gpuhunt.GPUHuntError)


def test_every_provider_module_is_registered():
    modules = {
        m.name
        for m in pkgutil.iter_modules(gpuhunt.providers.__path__)
        if not m.name.startswith("_")
    }
    modules.discard("base")
    assert modules <= set(registry.ALL_PROVIDERS), modules - set(registry.ALL_PROVIDERS)


@pytest.mark.parametrize("spec", registry.PROVIDERS, ids=lambda s: s.name)
def test_registered_providers_import(spec):
    if spec.extra:
        pytest.importorskip(
            {
                "aws": "boto3",
                "azure": "azure.mgmt.compute",
                "gcp": "google.cloud.compute_v1",
                "oci": "oci",
                "nebius": "nebius",
            }[spec.extra]
        )
    try:
        importlib.import_module(spec.module)
    except ModuleNotFoundError as e:
        if e.name == spec.module:
            pytest.skip(f"{spec.module} not written yet")
        raise
    cls = registry.provider_class(spec.name)
    assert spec.name == cls.NAME
    base = gpuhunt.providers.base
    assert issubclass(cls, base.OnlineProvider if spec.online else base.OfflineProvider)
