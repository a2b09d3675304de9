"""gpuhunt: one catalog of cloud GPU and CPU offers with hourly prices.

    import gpuhunt
    gpuhunt.query(gpu_name="H100", max_price=4)
"""

from typing import TYPE_CHECKING, Any

from gpuhunt._internal.accelerators import (
    KNOWN_ACCELERATORS as KNOWN_ACCELERATORS,
    KNOWN_AMD_GPUS as KNOWN_AMD_GPUS,
    KNOWN_INTEL_ACCELERATORS as KNOWN_INTEL_ACCELERATORS,
    KNOWN_NVIDIA_GPUS as KNOWN_NVIDIA_GPUS,
    KNOWN_TENSTORRENT_ACCELERATORS as KNOWN_TENSTORRENT_ACCELERATORS,
    KNOWN_TPUS as KNOWN_TPUS,
    canonical_gpu_name as canonical_gpu_name,
)
from gpuhunt._internal.constraints import (
    correct_gpu_memory_gib as correct_gpu_memory_gib,
    find_accelerators as find_accelerators,
    is_nvidia_superchip as is_nvidia_superchip,
    matches as matches,
)
from gpuhunt._internal.errors import (
    CatalogDownloadError as CatalogDownloadError,
    CatalogError as CatalogError,
    CatalogIntegrityError as CatalogIntegrityError,
    GPUHuntError as GPUHuntError,
    MissingCredsError as MissingCredsError,
    ProviderError as ProviderError,
    UnknownProviderError as UnknownProviderError,
)
from gpuhunt._internal.models import (
    AcceleratorInfo as AcceleratorInfo,
    AcceleratorVendor as AcceleratorVendor,
    AMDGPUInfo as AMDGPUInfo,
    CatalogItem as CatalogItem,
    CPUArchitecture as CPUArchitecture,
    IntelAcceleratorInfo as IntelAcceleratorInfo,
    NvidiaGPUInfo as NvidiaGPUInfo,
    QueryFilter as QueryFilter,
    TenstorrentAcceleratorInfo as TenstorrentAcceleratorInfo,
    TPUInfo as TPUInfo,
)
from gpuhunt._version import __version__ as __version__

if TYPE_CHECKING:
    from gpuhunt._internal.catalog import Catalog as Catalog
    from gpuhunt._internal.default import default_catalog as default_catalog, query as query

# The catalog pulls in numpy and the HTTP stack; importing them only when used keeps
# `import gpuhunt` (and every provider collector) light.
_LAZY = {
    "Catalog": "gpuhunt._internal.catalog",
    "default_catalog": "gpuhunt._internal.default",
    "query": "gpuhunt._internal.default",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gpuhunt' has no attribute {name!r}")
