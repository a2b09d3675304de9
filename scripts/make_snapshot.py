#!/usr/bin/env python3
"""Regenerate the catalog snapshot bundled in the package (`src/gpuhunt/resources/catalog.zip`).

    python scripts/make_snapshot.py                 # from the project's real sources (the default)
    python scripts/make_snapshot.py --from URL_OR_DIR   # from a published catalog version

The snapshot is what a user gets with no network and no cache, so every offer in it comes from a
real source: a recorded API answer, a public price list, or a published third-party catalog. The
default runs each provider's real collector over its recordings (`scripts/replay/`), leaving out
every price the recordings mark as illustrative, or converts a published catalog (`SOURCES`
below). A provider without real prices is left out (`LEFT_OUT`) rather than invented.

The manifest records per provider its `source` (`kind`, `name`, `note`) and `collected_at`: the
date its data was recorded, or null when that date is not known (never the build date in its
place); the CLI and `catalog status` report the age from it. This script imports no test code.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from gpuhunt._internal import registry  # noqa: E402
from gpuhunt._internal.formats.archive import FORMAT_VERSION, sha256, write_archive  # noqa: E402
from gpuhunt._internal.formats.csv import csv_bytes  # noqa: E402
from gpuhunt._internal.load.fetch import fetch  # noqa: E402
from gpuhunt._internal.models import CatalogItem  # noqa: E402
from gpuhunt._internal.publish.build import column_file  # noqa: E402
from gpuhunt._version import __version__  # noqa: E402

OUT = ROOT / "src" / "gpuhunt" / "resources" / "catalog.zip"

RECORDED = "recorded API answers"
PRICE_LIST = "public price list"
CATALOG = "published third-party catalog"


@dataclass(frozen=True)
class Source:
    collect: Callable[[], list[CatalogItem]]
    kind: str  # RECORDED, PRICE_LIST or CATALOG (the main one; `note` names the others)
    name: str  # which: a URL, a repository file at a commit, a recording
    collected_at: str | None  # when the data was recorded (ISO date), None if not known
    note: str = ""


def _aws() -> list[CatalogItem]:
    from scripts.replay import replay_aws

    return replay_aws.collect(replay_aws.FULL_PRICE_LIST)


def _azure() -> list[CatalogItem]:
    from scripts.replay import replay_azure

    return replay_azure.collect()


def _gcp() -> list[CatalogItem]:
    from scripts.replay import replay_gcp

    origin = replay_gcp.sku_sources()

    def real(sku: dict[str, Any]) -> bool:
        # Illustrative SKUs (e.g. the N1 GPU spot prices) only exercise code paths; K80 is past
        # its end of life and its recorded prices are of no use to anyone.
        return origin.get(sku["skuId"]) != "ILL" and "K80" not in sku["description"]

    return replay_gcp.collect(keep_sku=real)


def _oci() -> list[CatalogItem]:
    from scripts.replay import replay_oci

    return replay_oci.collect()


def _nebius() -> list[CatalogItem]:
    from scripts.replay import skypilot_nebius

    return skypilot_nebius.collect()


def _lambdalabs() -> list[CatalogItem]:
    from scripts.replay import skypilot_lambdalabs

    return skypilot_lambdalabs.collect()


SOURCES: dict[str, Source] = {
    "aws": Source(
        _aws,
        CATALOG,
        "tsaol/aws-gpu data/all_gpu_instances.js@77fcd9fe1d0652fd07b830e5ed030d61da87923e "
        "(instances.vantage.sh data, 92 GPU/accelerator types, 1,157 region prices)",
        "2026-01-21",
        "every on-demand region price of that catalog, written as an EC2 Price List file "
        "(tests/providers/data/aws/price_list_full_2026-01-21.csv.gz) and read by the AWS "
        "collector, with instance details from moto's copy of DescribeInstanceTypes; no spot "
        "prices (none recorded)",
    ),
    "azure": Source(
        _azure,
        PRICE_LIST,
        "Azure Retail Prices API: two recorded pages (Ev3/Esv3 in eastus, Dv4 in westeurope) "
        "and public GPU prices written in its item format (tests/providers/data/azure/README.md)",
        None,
        "recording dates unknown: the recorded pages' prices are effective since 2019-01-01 and "
        "2020-08-01; of the GPU prices only ND96isr H100 v5 comes from a dated capture "
        "(2026-09-16)",
    ),
    "gcp": Source(
        _gcp,
        PRICE_LIST,
        "Cloud Billing Catalog prices via Cyclenerd/google-cloud-pricing-cost-calculator "
        "pricing.yml@0166a59 (generated 2025-03-06), in recorded SKU format; machine types from "
        "gcloud exports (tests/providers/data/gcp/make_replay_data.py)",
        "2025-03-06",
        "also GCP's spot and GPU/TPU pricing pages and SkyPilot's catalog, undated; SKUs tagged "
        "illustrative and K80 SKUs are left out, and with them every offer they would price",
    ),
    "oci": Source(
        _oci,
        PRICE_LIST,
        "Oracle Cost Estimator (shapes.json/products.json) GPU shape prices as reported on "
        "2026-09-18, and Oracle's compute price list for E4 (tests/providers/data/oci/README.md)",
        "2026-09-18",
    ),
    "lambdalabs": Source(
        _lambdalabs,
        CATALOG,
        "skypilot-org/skypilot-catalog catalogs/v7/lambda/vms.csv"
        "@11580132cea293395776b033c8533714d42abb4e",
        None,
        "read 2026-12-01; the commit's date is not known. SkyPilot lists every type in every "
        "region; disk sizes are not in it",
    ),
    "nebius": Source(
        _nebius,
        CATALOG,
        "skypilot-org/skypilot-catalog catalogs/v7/nebius/vms.csv"
        "@22fd1feab9aa97a155f0f5a9d39351d9aa8ae9be",
        None,
        "read 2026-12-01; the commit's date is not known. GPU memory per model from Nebius's "
        "documentation (SkyPilot lists the preset's RAM there); no InfiniBand fabrics",
    ),
}

# Offline providers the snapshot leaves out, and why: no real prices at hand.
LEFT_OUT: dict[str, str] = {
    "verda": "its recordings are test fixtures modelled on the API, not real prices",
    "runpod": "its recordings are test fixtures and plausible values, except one RTX 3080 quote",
    "cloudrift": "its answer was built from public notes; sizes and 2-GPU prices are illustrative",
    "scaleway": "its answer was built from the API's documented example; GPU prices are illustrative",
    "ovhcloud": "its catalog was rebuilt from a dated third-party table of its prices, not recorded",
}


def from_sources(
    names: list[str] | None = None,
) -> tuple[dict[str, bytes], dict[str, dict[str, Any]]]:
    csvs: dict[str, bytes] = {}
    entries: dict[str, dict[str, Any]] = {}
    for name in registry.OFFLINE_PROVIDERS:
        if names is not None and name not in names:
            continue
        src = SOURCES.get(name)
        if src is None:
            why = LEFT_OUT.get(name, "no real source is registered in scripts/make_snapshot.py")
            print(f"left out {name}: {why}", file=sys.stderr)
            continue
        items = sorted(src.collect(), key=lambda i: (i.price, i.instance_name, i.location))
        data = csv_bytes(items)
        csvs[name] = data
        entries[name] = {
            "rows": len(items),
            "sha256": sha256(data),
            "collected_at": src.collected_at,
            "status": "snapshot",
            "source": {"kind": src.kind, "name": src.name, "note": src.note},
        }
        print(f"{name}: {len(items)} offers ({src.kind}, recorded {src.collected_at or 'unknown'})")
    return csvs, entries


def from_published(url: str) -> tuple[dict[str, bytes], dict[str, dict], str]:
    raw = fetch(
        url, registry.OFFLINE_PROVIDERS, version=None, cache=None, timeout=(5, 60), retries=2
    )
    entries = {}
    for name, data in raw.csvs.items():
        given = ((raw.manifest or {}).get("providers") or {}).get(name) or {}
        entries[name] = {
            "rows": data.count(b"\n") - 1,
            "sha256": sha256(data),
            # What the published manifest says (None for a bucket without one): a version name
            # is when the catalog was built, not when the data was recorded.
            "collected_at": given.get("collected_at"),
            "status": "published",
            "source": given.get("source")
            or {"kind": "published gpuhunt catalog", "name": f"{url} version {raw.version}"},
        }
    return raw.csvs, entries, raw.version


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--from", dest="source", help="a published catalog (URL or folder) instead of recordings"
    )
    parser.add_argument("--output", default=str(OUT))
    args = parser.parse_args()
    if args.source:
        csvs, entries, version = from_published(args.source)
        version = f"snapshot-{version}"
    else:
        csvs, entries = from_sources()
        # Named after the newest recording, never the build date.
        dates = [e["collected_at"] for e in entries.values() if e["collected_at"]]
        version = f"snapshot-{max(dates).replace('-', '')[:8] if dates else 'undated'}"
    if not csvs:
        print("no providers collected; snapshot unchanged", file=sys.stderr)
        return 1
    packed = {p: column_file(p, data) for p, data in csvs.items()}
    for p, data in packed.items():
        entries[p]["columns_sha256"] = sha256(data)
    manifest = {
        "format_version": FORMAT_VERSION,
        "version": version,
        "gpuhunt_version": __version__,
        "built_at": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        "providers": entries,
    }
    Path(args.output).write_bytes(write_archive(csvs, manifest, packed))
    print(
        f"wrote {args.output}: {sum(e['rows'] for e in entries.values())} offers, {len(csvs)} providers"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
