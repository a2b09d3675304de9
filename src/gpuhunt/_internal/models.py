"""The data model: offers, filters, vendors and accelerator descriptions (pure, no I/O)."""

from __future__ import annotations

import enum
from collections.abc import Container
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Protocol, Union

JSONType = Union[None, bool, int, float, str, list[Any], dict[str, Any]]
JSONObject = dict[str, Any]


class _CastableEnum(str, enum.Enum):
    @classmethod
    def cast(cls, value: Any) -> Any:
        if isinstance(value, cls):
            return value
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not a valid {cls.__name__}")
        try:
            return cls(value.strip().lower())
        except ValueError:
            allowed = ", ".join(m.value for m in cls)
            raise ValueError(
                f"{value!r} is not a valid {cls.__name__} (expected one of: {allowed})"
            ) from None


class AcceleratorVendor(_CastableEnum):
    NVIDIA = "nvidia"
    AMD = "amd"
    GOOGLE = "google"
    INTEL = "intel"
    TENSTORRENT = "tenstorrent"


class CPUArchitecture(_CastableEnum):
    X86 = "x86"  # x86-64
    ARM = "arm"  # AArch64


class AMDArchitecture(enum.Enum):
    CDNA = "CDNA"
    CDNA2 = "CDNA2"
    CDNA3 = "CDNA3"
    CDNA4 = "CDNA4"

    @classmethod
    def cast(cls, value: AMDArchitecture | str) -> AMDArchitecture:
        if isinstance(value, AMDArchitecture):
            return value
        return cls(value.upper())


@dataclass
class CatalogItem:
    """One offer: an instance type in a location at an hourly price.

    `memory`, `gpu_memory` and `disk_size` are in GB (GiB for accelerators), `price` in USD/hour.
    `flags` hide offers from consumers that cannot handle them; `provider_data` carries
    provider-specific details as JSON-compatible values.
    """

    provider: str
    instance_name: str
    location: str
    price: float
    cpu: int
    memory: float
    gpu_count: int
    gpu_name: str | None
    gpu_memory: float | None
    spot: bool
    disk_size: float | None
    gpu_vendor: AcceleratorVendor | None = None
    flags: list[str] = field(default_factory=list)
    cpu_arch: CPUArchitecture = CPUArchitecture.X86
    provider_data: JSONObject = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.gpu_count and self.gpu_vendor is None:
            raise ValueError(f"gpu_vendor is required when gpu_count is non-zero: {self}")

    @property
    def price_per_gpu(self) -> float | None:
        """Hourly price divided by the GPU count, or None for offers without GPUs."""
        return self.price / self.gpu_count if self.gpu_count else None

    @property
    def total_gpu_memory(self) -> float:
        return self.gpu_count * self.gpu_memory if self.gpu_count and self.gpu_memory else 0.0


@dataclass
class QueryFilter:
    """Filters for `Catalog.query`; every field is also a keyword of `Catalog.query`.

    Ranges are inclusive and `None` means unbounded. `provider` and `gpu_name` compare
    case-insensitively; a GPU name that gives the memory ("A100 80GB") asks for that memory too.
    `spot=False` keeps on-demand offers only, `True` spot only. `allowed_flags=None` allows every
    flag; otherwise each flag of an offer must be allowed. `location` holds location names or
    shell-style patterns (`"europe-*"`), compared case-insensitively. `min_cuda` keeps offers
    whose host runs that CUDA version or newer, and offers whose provider does not say (as
    `min/max_disk_size` keep offers of unknown disk size). Memory is in GB, GPU memory in GiB,
    prices in USD per hour.
    """

    provider: list[str] | None = None
    cpu_arch: CPUArchitecture | None = None
    min_cpu: int | None = None
    max_cpu: int | None = None
    min_memory: float | None = None
    max_memory: float | None = None
    min_gpu_count: int | None = None
    max_gpu_count: int | None = None
    gpu_vendor: AcceleratorVendor | None = None
    gpu_name: list[str] | None = None
    min_gpu_memory: float | None = None
    max_gpu_memory: float | None = None
    min_total_gpu_memory: float | None = None
    max_total_gpu_memory: float | None = None
    min_disk_size: int | None = None
    max_disk_size: int | None = None
    min_price: float | None = None
    max_price: float | None = None
    min_compute_capability: tuple[int, int] | None = None
    max_compute_capability: tuple[int, int] | None = None
    spot: bool | None = None
    allowed_flags: Container[str] | None = None
    location: list[str] | None = None
    min_cuda: tuple[int, int] | None = None

    def __repr__(self) -> str:
        set_fields = ", ".join(
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if getattr(self, f.name) is not None
        )
        return f"QueryFilter({set_fields})"


@dataclass
class AcceleratorInfo:
    vendor: ClassVar[AcceleratorVendor]
    name: str
    memory: int


@dataclass
class NvidiaGPUInfo(AcceleratorInfo):
    vendor = AcceleratorVendor.NVIDIA
    compute_capability: tuple[int, int]


@dataclass
class AMDGPUInfo(AcceleratorInfo):
    vendor = AcceleratorVendor.AMD
    architecture: AMDArchitecture
    device_ids: tuple[int, ...]


@dataclass
class TPUInfo(AcceleratorInfo):
    vendor = AcceleratorVendor.GOOGLE


@dataclass
class IntelAcceleratorInfo(AcceleratorInfo):
    vendor = AcceleratorVendor.INTEL


@dataclass
class TenstorrentAcceleratorInfo(AcceleratorInfo):
    vendor = AcceleratorVendor.TENSTORRENT


class LiveProvider(Protocol):
    """What a `Catalog` needs of a provider it queries live (`Catalog.add_provider`): its name
    and its offers for a filter. Every provider class of the `providers` package is one."""

    NAME: str

    def get(
        self, query_filter: QueryFilter | None = None, balance_resources: bool = True
    ) -> list[CatalogItem]: ...
