"""The words everything else is written in: vendors, CPU architectures, AMD architectures and
the JSON types of `provider_data` (pure, no imports from gpuhunt). The ground floor of
`_internal`: every module may import it, it imports none of them.

The enums' `__module__` is `gpuhunt._internal.models`, where gpuhunt 0.1.x defined them, so
pickles name them where old and new versions both find them (`models` re-exports them).
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:  # an annotation only: typing_extensions costs every process ~3 ms to import
    from typing_extensions import Self

JSONType = Union[None, bool, int, float, str, list[Any], dict[str, Any]]
JSONObject = dict[str, Any]

# Where 0.1.x defined these names: pickles and `repr`s refer to them there.
PICKLED_MODULE = "gpuhunt._internal.models"


class _CastableEnum(str, enum.Enum):
    @classmethod
    def cast(cls, value: Any) -> Self:
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


for _cls in (_CastableEnum, AcceleratorVendor, CPUArchitecture, AMDArchitecture):
    _cls.__module__ = PICKLED_MODULE
