"""gpuhunt: one catalog of cloud GPU and CPU offers with hourly prices.

import gpuhunt
gpuhunt.query(gpu_name="H100", max_price=4)
"""

from typing import TYPE_CHECKING, Any

from gpuhunt._internal.accelerators import (
    KNOWN_ACCELERATORS as KNOWN_ACCELERATORS,
)
from gpuhunt._internal.accelerators import (
    KNOWN_AMD_GPUS as KNOWN_AMD_GPUS,
)
from gpuhunt._internal.accelerators import (
    KNOWN_INTEL_ACCELERATORS as KNOWN_INTEL_ACCELERATORS,
)
from gpuhunt._internal.accelerators import (
    KNOWN_NVIDIA_GPUS as KNOWN_NVIDIA_GPUS,
)
from gpuhunt._internal.accelerators import (
    KNOWN_TENSTORRENT_ACCELERATORS as KNOWN_TENSTORRENT_ACCELERATORS,
)
from gpuhunt._internal.accelerators import (
    KNOWN_TPUS as KNOWN_TPUS,
)
from gpuhunt._internal.accelerators import (
    correct_gpu_memory_gib as correct_gpu_memory_gib,
)
from gpuhunt._internal.accelerators import (
    find_accelerators as find_accelerators,
)
from gpuhunt._internal.accelerators import (
    is_nvidia_superchip as is_nvidia_superchip,
)
from gpuhunt._internal.collapse import (
    CollapsedOffer as CollapsedOffer,
)
from gpuhunt._internal.collapse import (
    collapse_regions as collapse_regions,
)
from gpuhunt._internal.errors import (
    AmbiguousGPUError as AmbiguousGPUError,
)
from gpuhunt._internal.errors import (
    CatalogDownloadError as CatalogDownloadError,
)
from gpuhunt._internal.errors import (
    CatalogError as CatalogError,
)
from gpuhunt._internal.errors import (
    CatalogIntegrityError as CatalogIntegrityError,
)
from gpuhunt._internal.errors import (
    GPUHuntError as GPUHuntError,
)
from gpuhunt._internal.errors import (
    MissingCredsError as MissingCredsError,
)
from gpuhunt._internal.errors import (
    OnlineProvidersFailedError as OnlineProvidersFailedError,
)
from gpuhunt._internal.errors import (
    ProviderError as ProviderError,
)
from gpuhunt._internal.errors import (
    UnknownGPUError as UnknownGPUError,
)
from gpuhunt._internal.errors import (
    UnknownProviderError as UnknownProviderError,
)
from gpuhunt._internal.gpu_names import (
    canonical_gpu_name as canonical_gpu_name,
)
from gpuhunt._internal.gpu_specs import (
    GPU_SPECS as GPU_SPECS,
)
from gpuhunt._internal.gpu_specs import (
    NO_PUBLISHED_FIGURE as NO_PUBLISHED_FIGURE,
)
from gpuhunt._internal.gpu_specs import (
    GpuSpec as GpuSpec,
)
from gpuhunt._internal.gpu_specs import (
    GpuSpecLookup as GpuSpecLookup,
)
from gpuhunt._internal.gpu_specs import (
    gpu_spec as gpu_spec,
)
from gpuhunt._internal.gpu_specs import (
    lookup_gpu_spec as lookup_gpu_spec,
)
from gpuhunt._internal.models import (
    AcceleratorInfo as AcceleratorInfo,
)
from gpuhunt._internal.models import (
    AcceleratorVendor as AcceleratorVendor,
)
from gpuhunt._internal.models import (
    AMDGPUInfo as AMDGPUInfo,
)
from gpuhunt._internal.models import (
    CatalogItem as CatalogItem,
)
from gpuhunt._internal.models import (
    CPUArchitecture as CPUArchitecture,
)
from gpuhunt._internal.models import (
    IntelAcceleratorInfo as IntelAcceleratorInfo,
)
from gpuhunt._internal.models import (
    NvidiaGPUInfo as NvidiaGPUInfo,
)
from gpuhunt._internal.models import (
    QueryFilter as QueryFilter,
)
from gpuhunt._internal.models import (
    TenstorrentAcceleratorInfo as TenstorrentAcceleratorInfo,
)
from gpuhunt._internal.models import (
    TPUInfo as TPUInfo,
)
from gpuhunt._internal.query.match import (
    matches as matches,
)
from gpuhunt._version import __version__ as __version__

if TYPE_CHECKING:
    from gpuhunt._internal.catalog import Catalog as Catalog
    from gpuhunt._internal.catalog_status import CatalogStatus as CatalogStatus
    from gpuhunt._internal.default import default_catalog as default_catalog
    from gpuhunt._internal.default import explain as explain
    from gpuhunt._internal.default import query as query
    from gpuhunt._internal.errors import HistoryUnavailable as HistoryUnavailable
    from gpuhunt._internal.explain import Explanation as Explanation
    from gpuhunt._internal.history.api import diff as diff
    from gpuhunt._internal.history.daily import PriceHistory as PriceHistory

# The catalog pulls in numpy and the HTTP stack; importing them only when used keeps
# `import gpuhunt` (and every provider collector) light.
_LAZY = {
    "Catalog": "gpuhunt._internal.catalog",
    "CatalogStatus": "gpuhunt._internal.catalog",
    "default_catalog": "gpuhunt._internal.default",
    "query": "gpuhunt._internal.default",
    "explain": "gpuhunt._internal.default",
    "Explanation": "gpuhunt._internal.explain",
    "diff": "gpuhunt._internal.history.api",
    "PriceHistory": "gpuhunt._internal.history.daily",
    "HistoryUnavailable": "gpuhunt._internal.errors",
}

# What `from gpuhunt import *` gives and what tools (type checkers, IDEs, docs) take as the
# public surface; tests/test_api.py checks every name resolves and nothing public is missing.
__all__ = [
    "__version__",
    "AMDGPUInfo",
    "AmbiguousGPUError",
    "AcceleratorInfo",
    "AcceleratorVendor",
    "canonical_gpu_name",
    "Catalog",
    "CatalogDownloadError",
    "CatalogError",
    "CatalogIntegrityError",
    "CatalogItem",
    "CatalogStatus",
    "collapse_regions",
    "CollapsedOffer",
    "correct_gpu_memory_gib",
    "CPUArchitecture",
    "default_catalog",
    "diff",
    "explain",
    "Explanation",
    "find_accelerators",
    "gpu_spec",
    "GPU_SPECS",
    "GPUHuntError",
    "GpuSpec",
    "GpuSpecLookup",
    "HistoryUnavailable",
    "IntelAcceleratorInfo",
    "is_nvidia_superchip",
    "KNOWN_ACCELERATORS",
    "KNOWN_AMD_GPUS",
    "KNOWN_INTEL_ACCELERATORS",
    "KNOWN_NVIDIA_GPUS",
    "KNOWN_TENSTORRENT_ACCELERATORS",
    "KNOWN_TPUS",
    "lookup_gpu_spec",
    "matches",
    "MissingCredsError",
    "NO_PUBLISHED_FIGURE",
    "NvidiaGPUInfo",
    "OnlineProvidersFailedError",
    "PriceHistory",
    "ProviderError",
    "QueryFilter",
    "TPUInfo",
    "TenstorrentAcceleratorInfo",
    "UnknownGPUError",
    "UnknownProviderError",
    "query",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gpuhunt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
