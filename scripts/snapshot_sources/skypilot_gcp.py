"""A GCP `vms.csv` in SkyPilot's catalog columns (anycloud-sh/catalog's `gcp/vms.csv`, dated) ->
the GCP snapshot's N1+GPU, A4 and TPU offers.

Cyclenerd's `pricing.yml` (the rest of the GCP part, `cyclenerd_gcp`) prices whole machine
types only: it has no price of a GPU attached to an N1 machine, of an A4 or of a Cloud TPU.
A GCP table in SkyPilot's catalog columns has them, in rows with an empty `InstanceType`: one
per accelerator, count and zone (`,,,T4,2,...,us-central1-a,0.7,0.35`: the price of 2 T4s), and
one per TPU slice and zone (`,,,tpu-v5litepod-4,1,tpu-v5litepod-4,...`: the price of the whole
slice). The table read is anycloud-sh/catalog's `gcp/vms.csv` at anycloud-bot's commit "Update
catalogs 2026-05-20" (62ff0a98, 2026-05-20 04:50:10 UTC, the newest commit that changes the
file): the same columns and rows as SkyPilot's `catalogs/v8/gcp/vms.csv`, but dated. The stored
inputs (rows verbatim, how they were cut: `data/README.md`):

- `anycloud_gcp_vms_62ff0a98_n1_gpus_excerpt.csv`: every `n1-standard-*`, `n1-highmem-*` and
  `n1-highcpu-*` row in the zones the file lists a T4 in (the V100 zones are among them), and
  every `T4` and `V100` row;
- `anycloud_gcp_vms_62ff0a98_a4_excerpt.csv`: every `a4-highgpu-8g` row and every `B200` row;
- `anycloud_gcp_vms_62ff0a98_tpu_excerpt.csv`: every row of the single-host TPU types the GCP
  collector publishes (`gcp.TPU_HOSTS`).

SkyPilot's undated `catalogs/v8/gcp/vms.csv`@006059e0, which these offers came from before, is
kept for comparison only (`COMPARED_*`): on every row both files have, the on-demand prices are
equal and most spot prices differ (spot prices move daily).

Decisions:

- An N1 offer is an N1 machine with `count` GPUs attached, in a zone with rows for both, where
  GCP allows that count on that machine (`gcp.N1_GPU_LIMITS`, as the collector does). Its price
  is the machine row's price plus the GPU row's price for that count, BOTH from this one file
  (same commit), on-demand from `Price`, spot from `SpotPrice`; a missing price makes no offer.
  Nothing here is mixed with `pricing.yml`'s prices (another source, another date).
- Only T4 and V100 (`gcp.N1_PUBLISHED_GPUS`, what gpuhunt 0.1.34 published on N1; the file's
  P100 and P4 rows are not stored, the collector does not publish them). The N1 types are the
  ones Compute Engine lists (`N1_TYPES`: standard, highmem, highcpu), as the collector reads
  them from the machine-types API; the file's TPU-host rows (`n1-340-48-tpu`) are not machine
  types (gcloud's list at Cyclenerd fd66b26 has none) and the megamem/ultramem aliases take no
  GPU: neither is stored.
- A4 (`a4-highgpu-8g`, 8 B200) is billed per GPU slice, the slices covering the whole VM (the
  collector prices it so): the file writes its machine row at 0.0 and the VM's price in the
  B200 row, so the offer is that row; a machine row with a price of its own is left out
  (counted). The collector's filter keeps its spot offers only (A4 is not sold on demand).
- A TPU offer is what the collector writes (`gcp.make_tpu_offers`): instance and `gpu_name` the
  type (`v5litepod-4`, the file's name without `tpu-`), one "GPU" of vendor google, the host's
  vCPUs and RAM (`gcp.TPU_HOSTS`), the slice's HBM as `gpu_memory` (`gcp.TPU_HBM_GIB_PER_CHIP`
  x chips). The chip count is read from the name as Google names slices: v2, v3, v4 and v5p
  count TensorCores (two per chip: v5p-8 is 4 chips), v5e (`v5litepod`) and v6e count chips.
  In some zones every v6e size has the price 700.0 (a spot 700.0 beside a real on-demand price,
  too): one price for 1 chip and for 8 is a placeholder, so that price makes no offer.
- Located by zone, as the collector writes them, and only in a region where gcloud's accelerator
  list at Cyclenerd's fd66b26 (`tools/acceleratortyperegion.csv`, last changed 2026-07-26) has
  the accelerator, for the accelerators that list names (T4, V100, B200, TPU v3 `ct3`, v5e
  `ct5lp`, v5p `ct5p`, v6e `ct6e`); TPU v2 and v4 are Cloud TPU only, not in that list: their
  zones are the file's. The list narrows, never adds.
- Dated: every offer carries `observed_at` = the commit's time
  (`OBSERVED_AT`), which the loader keeps instead of stamping the GCP part's `collected_at`.
  A row that repeats another exactly (the file lists some zones twice) is counted and made once;
  two rows of one key with different prices make none.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem, CPUArchitecture

DATA = Path(__file__).resolve().parent / "data"
REPOSITORY = "anycloud-sh/catalog"
PATH = "gcp/vms.csv"
COMMIT = "62ff0a987e0c257a89235415d2877812fb1aaf29"
# The commit's time (author and committer alike): anycloud-bot's "Update catalogs 2026-05-20".
OBSERVED_AT = "2026-05-20T04:50:10Z"
SOURCE = f"{REPOSITORY} {PATH}@{COMMIT}"
N1_STORED = DATA / "anycloud_gcp_vms_62ff0a98_n1_gpus_excerpt.csv"
TPU_STORED = DATA / "anycloud_gcp_vms_62ff0a98_tpu_excerpt.csv"
A4_STORED = DATA / "anycloud_gcp_vms_62ff0a98_a4_excerpt.csv"
# The same rows of SkyPilot's undated file, the source before: compared with, not shipped.
COMPARED_SOURCE = "skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv@006059e0"
COMPARED_N1 = DATA / "skypilot_v8_gcp_n1_gpus_excerpt.csv"
COMPARED_TPU = DATA / "skypilot_v8_gcp_tpu_excerpt.csv"
COMPARED_A4 = DATA / "skypilot_v8_gcp_a4_excerpt.csv"
# gcloud's accelerator types by region (';'-separated, `NAME;ZONE` with regions in ZONE), from
# Cyclenerd's repository at the commit of the pricing.yml the rest of GCP comes from.
ACCELERATOR_REGIONS_STORED = DATA / "cyclenerd_acceleratortyperegion_fd66b26_excerpt.csv"
HEADER = [
    "InstanceType",
    "vCPUs",
    "MemoryGiB",
    "AcceleratorName",
    "AcceleratorCount",
    "GpuInfo",
    "Region",
    "AvailabilityZone",
    "Price",
    "SpotPrice",
]
# The file's GPU names (SkyPilot's) -> Compute Engine accelerator types (the collector's keys).
GPU_TYPES = {"T4": "nvidia-tesla-t4", "V100": "nvidia-tesla-v100", "B200": "nvidia-b200"}
# Machines GCP bills per GPU slice (the slices cover the whole VM): the file writes their machine
# row at 0.0 and the VM's price in the GPU row for their count, as the GCP collector prices A4.
SLICE_BILLED = {"a4-highgpu-8g": ("B200", 8)}
# TPU versions -> the Compute Engine accelerator type gcloud lists for them by region.
TPU_ACCELERATOR_TYPES = {"v3": "ct3", "v5litepod": "ct5lp", "v5p": "ct5p", "v6e": "ct6e"}
# Versions whose slice name counts TensorCores (two per chip) rather than chips.
TPU_CORES_NAMED = frozenset({"v2", "v3", "v4", "v5p"})
DATED = {"observed_at": OBSERVED_AT}  # the offers' own field (`CatalogItem.observed_at`)
# The N1 machine types Compute Engine lists (gcloud's machine-types list); n1-megamem/ultramem
# are m1 aliases (no GPU) and the file's `n1-<RAM>-<vCPUs>-tpu` rows are TPU hosts, not types.
N1_TYPES = re.compile(r"^n1-(?:standard|highmem|highcpu)-\d+$")
K = TypeVar("K", bound=Hashable)


@dataclass
class Converted:
    items: list[CatalogItem]
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> rows left out

    def skip(self, reason: str, n: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + n


Prices = tuple[float | None, float | None]  # on-demand, spot


def read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != HEADER:
            raise ValueError(f"{path}: not a SkyPilot vms.csv header: {reader.fieldnames}")
        return list(reader)


def read_accelerator_regions(path: Path = ACCELERATOR_REGIONS_STORED) -> dict[str, frozenset[str]]:
    """Accelerator type -> the regions gcloud lists it in."""
    regions: dict[str, set[str]] = {}
    with path.open(newline="") as f:
        header = f.readline().rstrip("\n")
        if header != "NAME;ZONE":
            raise ValueError(f"{path}: not an acceleratortyperegion.csv header: {header!r}")
        for n, line in enumerate(f, start=2):
            cells = line.rstrip("\n").split(";")
            if len(cells) != 2 or not all(cells):
                raise ValueError(f"{path}:{n}: expected NAME;REGION, got {line!r}")
            regions.setdefault(cells[0], set()).add(cells[1])
    return {name: frozenset(r) for name, r in regions.items()}


def _price(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value > 0 else None


def _keyed(
    rows: Iterable[dict[str, str]], key_of: Callable[[dict[str, str]], K], out: Converted
) -> dict[K, Prices]:
    """Rows by key: an exact repeat counted and kept once, a key with two prices dropped."""
    seen: dict[K, tuple[str, str]] = {}
    conflicting: set[K] = set()
    for row in rows:
        key = key_of(row)
        prices = (row["Price"], row["SpotPrice"])
        if key in seen:
            if seen[key] == prices:
                out.skip("repeated row")
            else:
                conflicting.add(key)
            continue
        seen[key] = prices
    for key in conflicting:
        del seen[key]
        out.skip("one key, two prices")
    return {k: (_price(p), _price(s)) for k, (p, s) in seen.items()}


def _listed(accelerator: str | None, region: str, listed: dict[str, frozenset[str]] | None) -> bool:
    if listed is None or accelerator is None or accelerator not in listed:
        return True
    return region in listed[accelerator]


def tpu_chips(name: str) -> int:
    version, size = name.rsplit("-", 1)
    n = int(size)
    return n // 2 if version in TPU_CORES_NAMED else n


def _without_placeholders(
    keyed: dict[tuple[str, str], Prices], out: Converted
) -> dict[tuple[str, str], Prices]:
    """The same price for slices of different sizes of one version in one zone (v6e: 700.0 for
    1 chip and for 8) is a placeholder, not a price: it is left out (counted), per column."""
    sizes: dict[tuple[str, str, int, float], set[str]] = {}
    for (accelerator, zone), prices in keyed.items():
        version = accelerator.rsplit("-", 1)[0]
        for column, price in enumerate(prices):
            if price is not None:
                sizes.setdefault((version, zone, column, price), set()).add(accelerator)
    result: dict[tuple[str, str], Prices] = {}
    for (accelerator, zone), prices in keyed.items():
        version = accelerator.rsplit("-", 1)[0]
        kept = [
            None if p is not None and len(sizes[(version, zone, column, p)]) > 1 else p
            for column, p in enumerate(prices)
        ]
        out.skip(
            "placeholder price (one price for slices of different sizes)",
            kept.count(None) - [*prices].count(None),
        )
        result[(accelerator, zone)] = (kept[0], kept[1])
    return result


def convert_tpus(
    path: Path = TPU_STORED, listed: dict[str, frozenset[str]] | None = None
) -> Converted:
    from gpuhunt.providers import gcp

    out = Converted(items=[])
    tpu_rows = []
    for row in read(path):
        name = row["AcceleratorName"].removeprefix("tpu-")
        if row["InstanceType"] or not row["AcceleratorName"].startswith("tpu-"):
            out.skip("not a TPU row")
        elif name not in gcp.TPU_HOSTS:
            out.skip("not a single-host TPU type the collector publishes")
        else:
            tpu_rows.append(row)
    keyed = _keyed(tpu_rows, lambda r: (r["AcceleratorName"], r["AvailabilityZone"]), out)
    keyed = _without_placeholders(keyed, out)
    for (accelerator, zone), prices in keyed.items():
        name = accelerator.removeprefix("tpu-")
        version = gcp.tpu_version(name)
        if not _listed(TPU_ACCELERATOR_TYPES.get(version), gcp.zone_region(zone), listed):
            out.skip("region not in gcloud's accelerator list")
            continue
        host, chips = gcp.TPU_HOSTS[name], tpu_chips(name)
        hbm = gcp.TPU_HBM_GIB_PER_CHIP.get(version)
        for price, spot in zip(prices, (False, True)):
            if price is None:
                continue
            out.items.append(
                CatalogItem(
                    provider="gcp",
                    instance_name=name,
                    location=zone,
                    price=price,
                    cpu=host.cpu,
                    memory=host.memory,
                    gpu_count=1,
                    gpu_name=name,
                    gpu_memory=hbm * chips if hbm else None,
                    spot=spot,
                    disk_size=None,
                    gpu_vendor=AcceleratorVendor.GOOGLE,
                    provider_data={"is_dws_calendar_mode": False},
                    **DATED,
                )
            )
    return out


def _machine_row(row: dict[str, str]) -> bool:
    name = row["InstanceType"]
    return bool(N1_TYPES.match(name) or name in SLICE_BILLED) and not row["AcceleratorName"]


def convert_attached(
    paths: Iterable[Path] = (N1_STORED, A4_STORED),
    listed: dict[str, frozenset[str]] | None = None,
) -> Converted:
    """Machines with GPUs: N1 with attachable T4/V100, and the slice-billed A4 with its B200s."""
    from gpuhunt.providers import gcp

    out = Converted(items=[])
    machine_rows, gpu_rows = [], []
    for row in (r for path in paths for r in read(path)):
        if _machine_row(row):
            machine_rows.append(row)
        elif not row["InstanceType"] and row["AcceleratorName"] in GPU_TYPES:
            gpu_rows.append(row)
        else:
            out.skip("not an N1/A4 machine or a T4/V100/B200 row")
    specs = {
        r["InstanceType"]: (int(float(r["vCPUs"])), float(r["MemoryGiB"])) for r in machine_rows
    }
    slices = {
        (r["InstanceType"], r["AvailabilityZone"])
        for r in machine_rows
        if r["InstanceType"] in SLICE_BILLED
    }
    machines = _keyed(
        (r for r in machine_rows if r["InstanceType"] not in SLICE_BILLED),
        lambda r: (r["InstanceType"], r["AvailabilityZone"]),
        out,
    )
    for r in machine_rows:
        if r["InstanceType"] in SLICE_BILLED and (r["Price"], r["SpotPrice"]) != ("0.0", "0.0"):
            # A price of its own would mean the slices do not cover the machine: unknown.
            slices.discard((r["InstanceType"], r["AvailabilityZone"]))
            out.skip("a slice-billed machine row with a price of its own")
    gpus = _keyed(
        gpu_rows,
        lambda r: (r["AcceleratorName"], int(r["AcceleratorCount"]), r["AvailabilityZone"]),
        out,
    )
    by_zone: dict[str, list[tuple[str, Prices]]] = {}
    for (name, zone), prices in sorted(machines.items()):
        by_zone.setdefault(zone, []).append((name, prices))
    for name, zone in sorted(slices):
        by_zone.setdefault(zone, []).append((name, (0.0, 0.0)))
    for (gpu_name, count, zone), gpu_prices in sorted(gpus.items()):
        accelerator = GPU_TYPES[gpu_name]
        if not _listed(accelerator, gcp.zone_region(zone), listed):
            out.skip("region not in gcloud's accelerator list")
            continue
        gpu = resolve_gpu(*gcp.GCP_ACCELERATORS[accelerator])
        if gpu is None:
            raise ValueError(f"{accelerator} is not in the accelerators table")
        fits = [
            (machine, prices)
            for machine, prices in by_zone.get(zone, [])
            if _takes(machine, specs[machine], accelerator, gpu_name, count)
        ]
        if not fits:
            out.skip("no machine row in the zone takes that many of that GPU")
            continue
        for machine, machine_prices in fits:
            for spot, machine_price, gpu_price in zip((False, True), machine_prices, gpu_prices):
                if machine_price is None or gpu_price is None:
                    continue
                out.items.append(
                    CatalogItem(
                        provider="gcp",
                        instance_name=machine,
                        location=zone,
                        price=round(machine_price + gpu_price, 6),
                        cpu=specs[machine][0],
                        memory=specs[machine][1],
                        gpu_count=count,
                        gpu_name=gpu.name,
                        gpu_memory=gpu.memory,
                        gpu_vendor=gpu.vendor,
                        spot=spot,
                        disk_size=None,
                        flags=gcp.offer_flags(
                            machine, gcp.Capacity.SPOT if spot else gcp.Capacity.ON_DEMAND
                        ),
                        cpu_arch=CPUArchitecture.X86,
                        provider_data={"is_dws_calendar_mode": False},
                        **DATED,
                    )
                )
    return out


def _takes(
    machine: str, spec: tuple[int, float], accelerator: str, gpu_name: str, count: int
) -> bool:
    """Whether GCP sells `machine` with `count` of that GPU: an A4 with exactly its own, an
    N1 within the limits GCP publishes per count (`gcp.N1_GPU_LIMITS`)."""
    from gpuhunt.providers import gcp

    if machine in SLICE_BILLED:
        return SLICE_BILLED[machine] == (gpu_name, count)
    limit = gcp.N1_GPU_LIMITS.get(accelerator, {}).get(count)
    return limit is not None and spec[0] <= limit[0] and spec[1] <= limit[1]


def collect() -> list[CatalogItem]:
    """The N1+GPU and TPU offers, the collector's filter applied."""
    from gpuhunt.providers import gcp

    listed = read_accelerator_regions()
    items = convert_attached(listed=listed).items + convert_tpus(listed=listed).items
    return gcp.GCPProvider.filter(items)


def is_from_here(item: CatalogItem) -> bool:
    """Whether a GCP snapshot offer is one of this module's (the rest are `pricing.yml`'s)."""
    from gpuhunt.providers import gcp

    name = item.instance_name
    return name.startswith("n1-") or name in gcp.TPU_HOSTS or name in SLICE_BILLED
