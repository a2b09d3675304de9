"""The public names gpuhunt 0.1.30 callers (dstack) use must exist with the same meaning."""

import dataclasses
import importlib
import inspect
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
        # The library's own (issue 46), after the contract's, each with a default: 0.1.x
        # construction, positional or by keyword, is unchanged.
        "observed_at",
        "available",
        "resold_from",
        "currency",
        "price_native",
        "fx_rate",
        "fx_date",
        "cuda_version",
        "gpu_fraction",
        "location_source",
        "momentary",
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
    params = set(inspect.signature(gpuhunt.Catalog.query).parameters) - {"self"}
    assert {f.name for f in dataclasses.fields(gpuhunt.QueryFilter)} == params


def test_all_is_the_public_surface():
    # Every name in __all__ resolves (lazy ones included), and every public name the package
    # defines is in __all__, so `from gpuhunt import *` and type checkers see one surface.
    for name in gpuhunt.__all__:
        assert getattr(gpuhunt, name) is not None, name
    assert set(CONTRACT) <= set(gpuhunt.__all__)
    defined = {
        n for n, v in vars(gpuhunt).items() if not n.startswith("_") and not inspect.ismodule(v)
    } | set(gpuhunt._LAZY)  # subpackages (gpuhunt.providers) are reached by their own import
    defined -= {"TYPE_CHECKING", "Any"}  # typing helpers of the module itself
    assert defined <= set(gpuhunt.__all__), sorted(defined - set(gpuhunt.__all__))
    assert sorted(gpuhunt.__all__, key=str.lower) == sorted(set(gpuhunt.__all__), key=str.lower)
    assert set(gpuhunt.__all__) <= set(dir(gpuhunt))


def test_documented_types_are_exported():
    from gpuhunt._internal.catalog import CatalogStatus
    from gpuhunt._internal.errors import HistoryUnavailable
    from gpuhunt._internal.history.daily import PriceHistory

    assert gpuhunt.CatalogStatus is CatalogStatus
    assert gpuhunt.PriceHistory is PriceHistory
    assert gpuhunt.HistoryUnavailable is HistoryUnavailable
    assert issubclass(gpuhunt.HistoryUnavailable, gpuhunt.CatalogError)
    assert not hasattr(gpuhunt, "Offers")  # a dead alias of `list`, removed


def test_module_level_query_shows_catalog_query_signature():
    catalog_params = list(inspect.signature(gpuhunt.Catalog.query).parameters.values())[1:]
    assert list(inspect.signature(gpuhunt.query).parameters.values()) == catalog_params
    assert "min_gpu_count" in inspect.signature(gpuhunt.query).parameters
    assert inspect.signature(gpuhunt.query).return_annotation == "list[CatalogItem]"
    assert list(inspect.signature(gpuhunt.explain).parameters) == ["filters"]
    assert gpuhunt.query.__name__ == "query" and "cheapest first" in gpuhunt.query.__doc__


def test_module_level_query_asks_the_default_catalog(monkeypatch):
    from gpuhunt._internal import default

    seen = []

    class Fake:
        def query(self, **kw):
            seen.append(kw)
            return ["answer"]

    monkeypatch.setattr(default, "default_catalog", lambda: Fake())
    # The wrapper calls the unbound Catalog.query with the default catalog as `self`.
    monkeypatch.setattr(default.Catalog, "query", Fake.query)
    assert default._on_default_catalog(default.Catalog.query)(gpu_name="H100") == ["answer"]
    assert seen == [{"gpu_name": "H100"}]


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
