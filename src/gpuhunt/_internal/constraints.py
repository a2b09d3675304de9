"""Where gpuhunt 0.1.x kept `matches` and the accelerator lookups; the names stay importable
from here. The matcher is `query/match.py` (reading the parsed filter of `query/parsed.py`),
the lookups sit beside their tables in `accelerators.py`, version parsing is `validate.py`'s
and what an offer says about itself in `provider_data` is `offer_state.py`'s."""

from __future__ import annotations

from gpuhunt._internal.accelerators import (
    correct_gpu_memory_gib as correct_gpu_memory_gib,
)
from gpuhunt._internal.accelerators import (
    find_accelerators as find_accelerators,
)
from gpuhunt._internal.accelerators import (
    get_compute_capability as get_compute_capability,
)
from gpuhunt._internal.accelerators import (
    is_nvidia_superchip as is_nvidia_superchip,
)
from gpuhunt._internal.offer_state import CUDA_KEY as CUDA_KEY
from gpuhunt._internal.offer_state import offer_cuda_version as offer_cuda_version
from gpuhunt._internal.query.match import gpu_name_wanted as gpu_name_wanted
from gpuhunt._internal.query.match import location_matches as location_matches
from gpuhunt._internal.query.match import matches as matches
from gpuhunt._internal.validate import parse_version as parse_version
