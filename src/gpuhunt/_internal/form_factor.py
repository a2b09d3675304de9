"""GPU form factors: how an offer's GPUs are built and connected (SXM module, PCIe card, NVL
pair, Grace superchip, NVL72 rack, OAM module), known per offer where the provider's data or
instance family says it, None (unknown) otherwise (pure, no I/O).

The catalog CSVs keep the columns gpuhunt 0.1.x reads, so a form factor is not a column: it is
derived from what an offer already carries, in this order (the first that says wins):

1. the GPU model, where the model itself decides it: `H100NVL`/`H200NVL` are NVL boards,
   `GH200` a superchip, MI300X an OAM module, an L40S or an RTX 4090 a PCIe card
   (`_MODEL_FORM_FACTOR`);
2. `provider_data["form_factor"]` (`FORM_FACTOR_KEY`), written by collectors whose API names
   the board (RunPod's "H100 SXM", Vast.ai's "H100 PCIE"), else the words of
   `provider_data["gpu_type"]` (the provider's own GPU name: JarvisLabs, Daytona);
3. the instance type: a family known to be built one way (AWS p5 and GCP a3 are HGX machines
   with SXM GPUs, Azure's NC A100 v4 has PCIe cards: `_FAMILIES`), else the words of its name
   (Lambda's `gpu_1x_h100_pcie`, Nebius' `gpu-h100-sxm`).

A word "NVL" on a GB200/GB300 offer means the NVL72 rack (Crusoe's "GB200-NVL" slices).

A filter's GPU name may say the form factor ("H100 SXM", `h100-pcie`, `H100-SXM5`,
"A100 80GB SXM4"): it then matches offers of that form factor and offers whose form factor is
unknown, which are kept (as `min_cuda` keeps offers whose CUDA version is unknown). Names that
are a model of their own keep that meaning: "H100 NVL" is `H100NVL`, as before.

`query/table.py` computes the same per row of a table from the same functions; the property
and differential tests compare the two.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

# Lower-case values, in this order (the fast path stores an index into it).
FORM_FACTORS: tuple[str, ...] = ("sxm", "pcie", "nvl", "superchip", "nvl72", "oam")

# The `provider_data` key a collector may write (one of FORM_FACTORS).
FORM_FACTOR_KEY = "form_factor"

# Words in a name that say the form factor: "SXM5", "PCIe", "PCI-E", "NVL", "NVL72",
# "superchip", "OAM". A word is not part of a longer word ("epic" has no "pci").
_WORD = re.compile(
    r"(?<![a-z])(?:sxm\d*|pcie|pci-e|pci|nvl72|nvl|superchip|oam)(?![a-z])", re.IGNORECASE
)
_WORD_VALUE = {"pcie": "pcie", "pci-e": "pcie", "pci": "pcie", "nvl": "nvl", "nvl72": "nvl72"}

# Models that come in one form factor only (vendor product pages: every GeForce, RTX
# workstation and L-series card is a PCIe card; MI250/MI300X/MI325X/MI350X/MI355X are OAM
# modules; H100 NVL and H200 NVL are NVLink-bridged PCIe boards; GH200 is the Grace Hopper
# Superchip). Models also built another way (V100, A100, H100, H200, A800, H800) are absent:
# for them the provider or instance family decides.
_PCIE_ONLY = [
    "K80",
    "M60",
    "P4",
    "P40",
    "T4",
    "A2",
    "A10",
    "A16",
    "A30",
    "A40",
    "L4",
    "L20",
    "L40",
    "L40S",
    "RTX4000",
    "RTX5000",
    "RTX6000",
    "RTX8000",
    "A2000",
    "A4000",
    "A4500",
    "A5000",
    "A5500",
    "A6000",
    "RTX2000Ada",
    "RTX4000Ada",
    "RTX4500Ada",
    "RTX5000Ada",
    "RTX6000Ada",
    "RTXPRO4000",
    "RTXPRO4500",
    "RTXPRO5000",
    "RTXPRO6000",
    "TITANRTX",
    "MI100",
    "MI210",
]
_MODEL_FORM_FACTOR: dict[str, str] = {
    **{m.lower(): "pcie" for m in _PCIE_ONLY},
    "h100nvl": "nvl",
    "h200nvl": "nvl",
    "gh200": "superchip",
    **{m: "oam" for m in ("mi250", "mi250x", "mi300x", "mi325x", "mi350x", "mi355x")},
}
_GEFORCE = re.compile(r"^(gtx|rtx)\d{4}", re.IGNORECASE)  # GTX1080, RTX4090, RTX5090, ...
_NVL72_MODELS = {"gb200", "gb300"}

# Instance families built one way, per provider: (pattern on the instance name, form factor).
# Sources: AWS "Accelerated computing instances" (P3/P3dn V100, P4d/P4de A100, P5/P5e/P5en
# H100/H200, P6 B200/B300 on NVSwitch/HGX boards; P6e-GB200 UltraServers are NVL72); GCP
# "GPU machine types" (A2 A100, A3 H100/H200, A4 B200 are HGX; A4X is GB200 NVL72); Azure
# "ND A100 v4", "NDm A100 v4", "ND H100 v5", "ND H200 v5", "NDv2" (SXM on NVSwitch/NVLink),
# "NC A100 v4" and "NCv3" (PCIe; NC24rs_v3 is the RDMA size), "ND GB200 v6"/"ND GB300 v6" (NVL72); OCI "GPU shapes"
# (BM.GPU4.8, BM.GPU.A100-v2.8, BM.GPU.H100.8, BM.GPU.H200.8, BM.GPU.B200.8, BM.GPU.B300.8 are
# HGX; BM.GPU.GB200.4 and BM.GPU.GB300.4 are nodes of NVL72 racks).
_FAMILIES: dict[str, list[tuple[re.Pattern[str], str]]] = {
    "aws": [
        (re.compile(r"^p(3|3dn|4d|4de|5|5e|5en|6-b200|6-b300)\."), "sxm"),
        (re.compile(r"^p6e-gb[23]00\."), "nvl72"),
    ],
    "gcp": [
        (re.compile(r"^a(2|3)-(high|mega|ultra|edge)gpu-"), "sxm"),
        (re.compile(r"^a4-highgpu-"), "sxm"),
        (re.compile(r"^a4x-"), "nvl72"),
    ],
    "azure": [
        (re.compile(r"^standard_nd\d+\w*_(a100_v4|h100_v5|h200_v5)$", re.I), "sxm"),
        (re.compile(r"^standard_nd96asr_v4$|^standard_nd40rs_v2$", re.I), "sxm"),
        (re.compile(r"^standard_nc\d+ads_a100_v4$|^standard_nc\d+r?s_v3$", re.I), "pcie"),
        (re.compile(r"^standard_nd\d+\w*_gb[23]00_v6$", re.I), "nvl72"),
    ],
    # RunPod's GPU type id of the SXM board: its own gpuTypes list names it "H100 SXM"
    # (recorded in tests/providers/data/runpod/discovery.json); its PCIe and NVL ids say so.
    "runpod": [(re.compile(r"^NVIDIA H100 80GB HBM3$"), "sxm")],
    "oci": [
        (
            re.compile(
                r"^bm\.gpu(4\.8|\.a100-v2\.8|\.h100\.8|\.h200\.8|\.b200\.8|\.b300\.8)$", re.I
            ),
            "sxm",
        ),
        (re.compile(r"^bm\.gpu\.gb[23]00\.4$", re.I), "nvl72"),
    ],
}


def words_form_factor(text: str | None) -> str | None:
    """The form factor the words of `text` say ("H100 SXM5" -> "sxm", "gpu_1x_h100_pcie" ->
    "pcie"); None when they say none, or two different ones."""
    found = form_factor_words(text) if text else set()
    return found.pop() if len(found) == 1 else None


def form_factor_words(text: str) -> set[str]:
    """Every form factor the words of `text` say."""
    return {_word_value(word) for word in _WORD.findall(text)}


def _word_value(word: str) -> str:
    w = word.lower()
    if w.startswith("sxm"):
        return "sxm"
    return _WORD_VALUE.get(w, w)


def strip_form_factor_words(text: str) -> str:
    """`text` without its form-factor words ("GB200 NVL72" -> "GB200 ")."""
    return _WORD.sub(" ", text)


def model_form_factor(gpu_name: str | None) -> str | None:
    """The form factor a GPU model is always built in, or None when it comes in several (or
    is not known)."""
    if not gpu_name:
        return None
    name = gpu_name.lower()
    found = _MODEL_FORM_FACTOR.get(name)
    if found is None and _GEFORCE.match(name):
        return "pcie"
    return found


def data_form_factor(provider_data: Any) -> str | None:
    """What an offer's `provider_data` says: its `form_factor` key, else the words of its
    `gpu_type` (the provider's own GPU name)."""
    if not isinstance(provider_data, Mapping):
        return None
    value = provider_data.get(FORM_FACTOR_KEY)
    if isinstance(value, str) and value.lower() in FORM_FACTORS:
        return value.lower()
    gpu_type = provider_data.get("gpu_type")
    return words_form_factor(gpu_type) if isinstance(gpu_type, str) else None


@lru_cache(maxsize=4096)
def instance_form_factor(provider: str, instance_name: str) -> str | None:
    """What an offer's instance type says: a family known to be built one way, else the words
    of its name."""
    for pattern, value in _FAMILIES.get(provider.lower(), ()):
        if pattern.search(instance_name):
            return value
    return words_form_factor(instance_name)


def refine(gpu_name: str | None, value: str | None) -> str | None:
    """A form factor as it applies to this GPU: "NVL" on a GB200/GB300 is its NVL72 rack."""
    if value == "nvl" and gpu_name is not None and gpu_name.lower() in _NVL72_MODELS:
        return "nvl72"
    return value


def offer_form_factor(
    provider: str, instance_name: str, gpu_name: str | None, gpu_count: int, provider_data: Any
) -> str | None:
    """The form factor of an offer's GPUs (one of FORM_FACTORS), None when unknown or the
    offer has no GPU. See the module docstring for the order of the sources."""
    if not gpu_count or not gpu_name:
        return None
    found = model_form_factor(gpu_name) or data_form_factor(provider_data)
    if found is None:
        found = instance_form_factor(provider, instance_name)
    return refine(gpu_name, found)


def form_factor_matches(offer: str | None, wanted: str | None) -> bool:
    """Whether an offer of form factor `offer` is one a filter asking for `wanted` keeps:
    the same, or unknown (kept, as documented), or nothing asked."""
    return wanted is None or offer is None or offer == wanted


def label(value: str | None) -> str:
    """How the table shows a form factor: SXM, PCIe, NVL, NVL72, superchip, OAM; "" unknown."""
    return {"sxm": "SXM", "pcie": "PCIe", "nvl": "NVL", "nvl72": "NVL72", "oam": "OAM"}.get(
        value or "", value or ""
    )
