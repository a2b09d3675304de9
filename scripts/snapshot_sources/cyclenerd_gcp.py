"""Cyclenerd's `pricing.yml` (Cyclenerd/google-cloud-pricing-cost-calculator, generated from
Google's Cloud Billing Catalog) -> the GCP part of the bundled snapshot.

The stored input is `data/cyclenerd_pricing_fd66b26_excerpt.yml` (how it was cut is in that
folder's README): `compute.instance.<machine type>` with its `cpu`, `ram` (GB), GPU count under
the GPU's key and `cost.<region>.hour` / `hour_spot` (USD per hour for the whole machine:
vCPUs, memory, GPUs and any bundled local SSD, as Cyclenerd totals them). Decisions:

- One on-demand offer per machine type and region from `hour`, one spot offer from `hour_spot`;
  a missing or non-positive price makes no offer.
- Only in the regions where Compute Engine has that machine type: `pricing.yml` prices a SKU in
  every region whether or not the type is sold there, so the region list of the SAME commit
  (`tools/machinetyperegion.csv`, gcloud's machine-types list by region) decides; a type the
  list does not name at all makes no offer (nothing says where it is sold).
- The location is the region: the file prices regions. The live GCP collector makes one offer
  per zone, but which zones of a region have a type is not known for 2026 here: Cyclenerd's
  zone lists (`tools/machinetypezone.csv`, `acceleratortypezone.csv`) were last updated in
  2023-05, and writing every zone of a region would present an enumeration as availability.
- G4 offers once, with the `gcp-g4` flag dstack 0.21/0.22 ask for. The collector also writes a
  copy flagged `gcp-g4-preview` for dstack 0.19.33; in the bundled catalog that copy would be
  the same offer twice (one key: provider, instance, location, spot), so it is not made.
- GPUs through the GCP collector's accelerator table (`gcp.GCP_ACCELERATORS`, the keys below
  name its accelerator types), flags as the collector gives them (`gcp.offer_flags`), then the
  collector's `filter()`, so the offers are what the collector would publish at these prices.
- G4 shapes with a fraction of a GPU (`rtx6000: 0.125` for g4-standard-6) are written as the
  collector writes them: one RTX PRO 6000 with the VRAM of the share (12, 24, 48 GB); any other
  fractional GPU would be left out (`Converted.fractional`).
- `disk_size` is unknown (not in the file); CPU architecture x86 (no Arm type is kept);
  `provider_data` is the collector's `{"is_dws_calendar_mode": false}` (no DWS prices here);
  `observed_at` (the offer's own field) is the file's own `about.timestamp` (2026-07-30T06:13:17Z, the `generated`
  line's time): the GCP part mixes two dates (the N1+GPU, A4 and TPU offers are of 2026-05-20),
  so each offer carries its own and the manifest gives the older as a lower bound.
- The excerpt keeps the GPU machine types (A2, A3, G2, G4) and E2; other CPU families are not
  in this snapshot (as before this file was converted). TPUs, N1 GPUs and A4 are not in
  `pricing.yml`: the snapshot has them from anycloud's dated GCP table (`skypilot_gcp`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.models import CatalogItem, CPUArchitecture
from gpuhunt._internal.observed import iso_z

DATA = Path(__file__).resolve().parent / "data"
REPOSITORY = "Cyclenerd/google-cloud-pricing-cost-calculator"
PATH = "pricing.yml"
COMMIT = "fd66b26ff84fee5cdd94f341ea89206e76c06b99"
STORED = DATA / "cyclenerd_pricing_fd66b26_excerpt.yml"
# gcloud's machine types per region at the same commit (a ';'-separated CLI export whose last
# column is headed ZONE but holds regions), cut to the types the pricing excerpt keeps.
REGIONS_PATH = "tools/machinetyperegion.csv"
REGIONS_STORED = DATA / "cyclenerd_machinetyperegion_fd66b26_excerpt.csv"
# Where in a region each type is sold: the GCP collector (and 0.1.x) writes zones. Cyclenerd's
# zone list at the same commit was last changed on 2023-05-02, so it misses newer types and
# regions; SkyPilot's GCP catalog (undated) names zones for the A2, A3 and G2 types. Both
# only ever narrow the dated 2026-07-30 region list above, never add to it (data/README.md).
ZONES_STORED = DATA / "cyclenerd_machinetypezone_fd66b26_excerpt.csv"
SKYPILOT_ZONES_STORED = DATA / "skypilot_v8_gcp_zones_excerpt.csv"
SKYPILOT_ZONES_COMMIT = "006059e0f18acb1341e22a27751e9f80df6ba92f"

# pricing.yml's GPU keys -> Compute Engine accelerator types (GCP's own names).
GPU_KEYS = {
    "a100": "nvidia-tesla-a100",
    "a100-80gb": "nvidia-a100-80gb",
    "h100-80gb": "nvidia-h100-80gb",
    "h100-80gb-mega": "nvidia-h100-mega-80gb",
    "l4": "nvidia-l4",
    "rtx6000": "nvidia-rtx-pro-6000",
}


@dataclass
class Converted:
    items: list[CatalogItem]
    generated: str  # the file's own `about.generated`
    fractional: list[str] = field(default_factory=list)  # machine types left out, a GPU share
    unknown_keys: list[str] = field(default_factory=list)
    not_sold: int = 0  # (type, region) prices left out: the type is not in that region
    # (type, region) prices left out: the type is sold in the region, but no zone list read
    # names a zone of it there (a zone is never guessed).
    no_zone: int = 0
    # Types no zone list names at all (G4, newer than every zone list read): located by region.
    region_located: set[str] = field(default_factory=set)


def read(path: Path = STORED) -> dict[str, Any]:
    with path.open() as f:
        data = yaml.safe_load(f)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a pricing.yml mapping")
    return data


def read_regions(path: Path = REGIONS_STORED) -> dict[str, frozenset[str]]:
    """Machine type -> the regions gcloud lists it in (deprecated types are left out)."""
    regions: dict[str, set[str]] = {}
    with path.open(newline="") as f:
        header = f.readline().rstrip("\n").split(";")
        if header[:1] != ["NAME"] or "ZONE" not in header:
            raise ValueError(f"{path}: not a machinetyperegion.csv header: {header}")
        for n, line in enumerate(f, start=2):
            cells = line.rstrip("\n").split(";")
            if len(cells) != len(header):
                raise ValueError(f"{path}:{n}: {len(cells)} cells, expected {len(header)}")
            row = dict(zip(header, cells))
            if row.get("DEPRECATED"):
                continue
            regions.setdefault(row["NAME"], set()).add(row["ZONE"])
    return {name: frozenset(r) for name, r in regions.items()}


def read_zones(
    path: Path = ZONES_STORED, skypilot_path: Path | None = SKYPILOT_ZONES_STORED
) -> dict[str, frozenset[str]]:
    """Machine type -> the zones either zone list names it in."""
    zones = {name: set(z) for name, z in read_regions(path).items()}
    if skypilot_path is not None:
        with skypilot_path.open(newline="") as f:
            header = f.readline().strip()
            if header != "InstanceType,AvailabilityZone":
                raise ValueError(f"{skypilot_path}: unexpected header {header!r}")
            for n, line in enumerate(f, start=2):
                cells = line.strip().split(",")
                if len(cells) != 2 or not all(cells):
                    raise ValueError(f"{skypilot_path}:{n}: expected InstanceType,AvailabilityZone")
                zones.setdefault(cells[0], set()).add(cells[1])
    return {name: frozenset(z) for name, z in zones.items()}


def convert(
    path: Path = STORED,
    regions_path: Path | None = REGIONS_STORED,
    zones: dict[str, frozenset[str]] | None = None,
) -> Converted:
    """`regions_path=None` converts every priced region (what the file alone says); `zones`
    (type -> zones) locates each offer in the zones of its region, as the collector does."""
    from gpuhunt.providers import gcp

    data = read(path)
    sold = read_regions(regions_path) if regions_path is not None else None
    out = Converted(items=[], generated=str(data["about"]["generated"]))
    observed = iso_z(dt.datetime.fromtimestamp(int(data["about"]["timestamp"]), dt.timezone.utc))
    for name, machine in data["compute"]["instance"].items():
        keys = [k for k in machine if k in GPU_KEYS]
        others = set(machine) - set(GPU_KEYS) - {"cpu", "ram", "cost", "local-ssd", "type"}
        if others:
            out.unknown_keys.append(f"{name}: {sorted(others)}")
            continue
        count: float = float(machine[keys[0]]) if keys else 0.0
        share = 1.0
        if count != int(count):
            # As the collector writes a G4 with a share of one RTX PRO 6000: one GPU, the
            # VRAM of its share (gcp.FRACTIONAL_GPU_SHARE); any other fraction is left out.
            if gcp.FRACTIONAL_GPU_SHARE.get(name) != count:
                out.fractional.append(name)
                continue
            share, count = count, 1.0
        gpu = None
        if keys:
            accelerator = GPU_KEYS[keys[0]]
            gpu = resolve_gpu(*gcp.GCP_ACCELERATORS[accelerator])
            if gpu is None:
                raise ValueError(f"{name}: {accelerator} is not in the accelerators table")
        for region, cost in machine["cost"].items():
            if sold is not None and region not in sold.get(name, ()):
                out.not_sold += 1
                continue
            locations = [region]
            if zones is not None:
                if name not in zones:
                    out.region_located.add(name)
                else:
                    locations = sorted(z for z in zones[name] if gcp.zone_region(z) == region)
                    if not locations:
                        out.no_zone += 1
                        continue
            for location, column, spot in (
                (loc, col, sp)
                for loc in locations
                for col, sp in (("hour", False), ("hour_spot", True))
            ):
                price = cost.get(column)
                if not isinstance(price, (int, float)) or price <= 0:
                    continue
                capacity = gcp.Capacity.SPOT if spot else gcp.Capacity.ON_DEMAND
                out.items.append(
                    CatalogItem(
                        provider="gcp",
                        instance_name=name,
                        location=location,
                        price=float(price),
                        cpu=int(machine["cpu"]),
                        memory=float(machine["ram"]),
                        gpu_count=int(count),
                        gpu_name=gpu.name if gpu else None,
                        gpu_memory=gpu.memory * share if gpu and gpu.memory else None,
                        gpu_vendor=gpu.vendor if gpu else None,
                        spot=spot,
                        disk_size=None,
                        flags=gcp.offer_flags(name, capacity),
                        cpu_arch=CPUArchitecture.X86,
                        # As the collector writes it on every VM offer (dstack reads it); the
                        # file has no DWS calendar-mode prices.
                        provider_data={"is_dws_calendar_mode": False},
                        observed_at=observed,
                    )
                )
    return out


def collect() -> list[CatalogItem]:
    """GCP's snapshot offers: the stored excerpt converted, the collector's filter applied."""
    from gpuhunt.providers import gcp

    converted = convert(zones=read_zones())
    if converted.unknown_keys:
        raise ValueError(f"gcp: unknown pricing.yml keys: {'; '.join(converted.unknown_keys)}")
    return gcp.GCPProvider.filter(converted.items)
