"""The bundled snapshot (`src/gpuhunt/resources/catalog.zip`) is honest: every offer comes from a
real source named in its manifest, with the date of that data and how the date is known (or none,
with the reason, never the build date), and it is exactly what `scripts/make_snapshot.py` makes of
the trimmed copies of its sources stored in this repository."""

from __future__ import annotations

import csv
import gzip
import hashlib
import importlib.util
import io
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from scripts.replay import replay_aws, replay_gcp
from scripts.snapshot_sources import skypilot_vms

from gpuhunt._internal import registry
from gpuhunt._internal.formats import archive
from gpuhunt._internal.formats.csv import load as csv_load

ROOT = Path(__file__).resolve().parent.parent
KINDS = {"recorded API answers", "public price list", "published third-party catalog"}
SKYPILOT = ["lambdalabs", "verda", "nebius", "oci", "runpod"]

# The stored SkyPilot files, as the file reader served them: their length in characters (the
# reader's `total_chars`, CRLF line ends counted). The RunPod file is an excerpt (rows verbatim).
SERVED_LENGTH = {
    "skypilot_v8_lambda_vms.csv": 73947,
    "skypilot_v8_verda_vms.csv": 4997,
    "skypilot_v8_nebius_vms.csv": 6302,
    "skypilot_v8_hyperbolic_vms.csv": 717,
}
# ... and their sha256, so that an edit to a stored input fails here, not silently.
PINNED = {
    "skypilot_v8_hyperbolic_vms.csv": "5997cc2b8505d5d0c120b44f58bd253bbfdaad6b838f5728466b653826faa4a9",
    "skypilot_v8_lambda_vms.csv": "036573edf39d8acff895c3f0d0906c00f5ec60e7969c63832727f3c2c1afb8ef",
    "skypilot_v8_nebius_vms.csv": "eb3007fb983a2fcb7ea17f2cab3c4c40eb0b10813cb851d7e1bc1ec0dc608564",
    "skypilot_v8_oci_vms_gpu.csv": "25b1817e9b001f93e22565e187640e1eaa85aef242df00bfb0324c4e681403f3",
    "skypilot_v8_runpod_vms_excerpt.csv": "5a682b59d844c44c985efffc95635a878b380d90d35a3f9ce54d272786c2d519",
    "skypilot_v8_verda_vms.csv": "05edb56cef6e749ac5bdf926c4947264a2229f1dbeffc58065ff04fa969926fd",
}


def make_snapshot():
    spec = importlib.util.spec_from_file_location(
        "make_snapshot", ROOT / "scripts" / "make_snapshot.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_snapshot"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def snapshot() -> archive.Archive:
    data = resources.files("gpuhunt.resources").joinpath("catalog.zip").read_bytes()
    return archive.read_archive(data)


def offers(snapshot: archive.Archive, provider: str):
    return csv_load(io.StringIO(snapshot.csvs[provider].decode()), provider=provider)


def rows(name: str) -> list[dict[str, str]]:
    with (skypilot_vms.DATA / name).open(newline="") as f:
        return list(csv.DictReader(f))


def test_manifest_names_each_source_and_how_its_date_is_known(snapshot):
    script = make_snapshot()
    manifest = snapshot.manifest
    assert manifest is not None
    entries = manifest["providers"]
    assert set(entries) == set(script.SOURCES)
    assert set(script.SOURCES) | set(script.LEFT_OUT) == set(registry.OFFLINE_PROVIDERS)
    for name, entry in entries.items():
        source = script.SOURCES[name]
        given = entry["source"]
        assert given["kind"] in KINDS and given["name"] and given["label"], name
        assert given["date_basis"] == source.date_basis and given["date_basis"], name
        assert given["stored"], name  # the copy the snapshot is rebuilt from
        for part in given["stored"].split(", "):
            assert (ROOT / part.split(" (")[0]).is_file(), (name, part)
        assert entry["collected_at"] == source.collected_at, name
        assert entry["collected_at"] != manifest["built_at"][:10], name  # never the build date
        if entry["collected_at"] is None:
            assert given["date_basis"].startswith("unknown: "), name  # null says why
    assert {n: e["collected_at"] for n, e in entries.items()} == {
        "aws": "2026-01-21",
        "gcp": "2025-03-06",
        "oci": None,
        "lambdalabs": "2026-05-04",
        "verda": None,
        "nebius": None,
        "runpod": None,
    }
    assert entries["lambdalabs"]["source"]["date_is_lower_bound"] is True
    assert entries["lambdalabs"]["source"]["date_basis"].startswith("2026-05-04 or later")
    assert not entries["aws"]["source"]["date_is_lower_bound"]
    # Named after the OLDEST dated provider (GCP), not the newest (Lambda).
    assert manifest["version"] == "snapshot-20250306"
    for name in SKYPILOT:
        c = skypilot_vms.CONVERSIONS[name]
        given = entries[name]["source"]
        assert (given["repository"], given["path"], given["commit"]) == (
            "skypilot-org/skypilot-catalog",
            c.path,
            c.commit,
        )
        assert re.fullmatch(r"[0-9a-f]{40}", c.commit)


def test_no_price_without_a_real_source(snapshot):
    # CloudRift's answer was built from notes; Azure has no recorded price item of a GPU size
    # (the Low Priority/"public facts" items of the test recordings must not ship).
    assert set(snapshot.csvs) == {"aws", "gcp", "oci", "lambdalabs", "verda", "nebius", "runpod"}
    script = make_snapshot()
    assert "Retail Prices" in script.LEFT_OUT["azure"]
    gcp = list(offers(snapshot, "gcp"))
    assert gcp and not [i for i in gcp if i.gpu_name == "K80"]
    # N1 GPU spot prices were illustrative ("40% of on-demand") and their on-demand prices "as
    # widely quoted", never checked against a dated source: no N1 GPU offer is left.
    assert not [i for i in gcp if i.instance_name.startswith("n1-") and i.gpu_count]
    unsourced = script.UNSOURCED_SKUS
    assert unsourced == {"ILL", "PUB"}
    assert unsourced <= set(replay_gcp.sku_sources().values())


@pytest.mark.parametrize("name", sorted(SERVED_LENGTH))
def test_stored_inputs_are_the_files_as_read(name):
    text = (skypilot_vms.DATA / name).read_bytes().decode()
    assert len(text) == SERVED_LENGTH[name]
    assert text.count("\r\n") == text.count("\n")  # the served line ends, kept


def test_lambda_prices_are_the_newest_stored_skypilot_lambda_catalog(snapshot):
    assert skypilot_vms.CONVERSIONS["lambdalabs"].commit.startswith("0f40703")
    listed = {
        (r["InstanceType"], r["Region"]): float(r["Price"])
        for r in rows("skypilot_v8_lambda_vms.csv")
    }
    lambdalabs = list(offers(snapshot, "lambdalabs"))
    assert {(i.instance_name, i.location): i.price for i in lambdalabs} == listed
    assert len(lambdalabs) == 408 == 24 * 17  # every type in every region
    assert not [i for i in lambdalabs if i.spot]
    price = {i.instance_name: i.price for i in lambdalabs if i.location == "us-east-1"}
    # The prices the old (v7) snapshot had 2.49, 23.92, 14.32, 0.75, 1.49 for.
    assert price["gpu_1x_h100_pcie"] == 3.29
    assert price["gpu_8x_h100_sxm5"] == 31.92
    assert price["gpu_8x_a100_80gb_sxm4"] == 22.32
    assert price["gpu_1x_a10"] == 1.29
    assert price["gpu_1x_gh200"] == 2.29
    assert price["gpu_8x_b200_sxm6"] == 53.52
    gh200 = next(i for i in lambdalabs if i.instance_name == "gpu_1x_gh200")
    assert gh200.cpu_arch.value == "arm" and gh200.flags == ["lambda-arm"]
    a100 = next(i for i in lambdalabs if i.instance_name == "gpu_8x_a100_80gb_sxm4")
    assert (a100.gpu_name, a100.gpu_memory, a100.gpu_count) == ("A100", 80.0, 8)


def test_runpod_has_consumer_gpus_at_the_listed_prices(snapshot):
    runpod = list(offers(snapshot, "runpod"))
    listed = {
        (r["InstanceType"], r["AvailabilityZone"]): float(r["Price"])
        for r in rows("skypilot_v8_runpod_vms_excerpt.csv")
    }
    assert {(i.instance_name, i.location): i.price for i in runpod} == listed
    assert not [i for i in runpod if i.spot]  # SkyPilot's RunPod SpotPrice is a copy of Price
    rtx = {i.location: i for i in runpod if i.instance_name == "1x_RTX4090_SECURE"}
    assert len(rtx) == 34  # the zones read: EUR-IS-1 to US-WA-1
    assert (rtx["EUR-NO-1"].price, rtx["EUR-NO-1"].gpu_name, rtx["EUR-NO-1"].gpu_memory) == (
        0.74,
        "RTX4090",
        24.0,
    )
    assert (rtx["US-TX-3"].cpu, rtx["US-TX-3"].memory) == (5, 29.0)
    rtx5090 = {i.location: i for i in runpod if i.instance_name == "1x_RTX5090_SECURE"}
    assert len(rtx5090) == 30 and {i.price for i in rtx5090.values()} == {0.99}
    assert (rtx5090["US-KS-1"].gpu_name, rtx5090["US-KS-1"].gpu_memory) == ("RTX5090", 32.0)
    h200 = next(i for i in runpod if i.instance_name == "3x_H200-SXM_SECURE")
    assert (h200.gpu_name, h200.gpu_count, h200.gpu_memory, h200.price) == ("H200", 3, 141.0, 13.77)
    a100 = [i for i in runpod if i.instance_name == "1x_A100-80GB_SECURE"]
    assert len(a100) == 48 and {(i.price, i.gpu_name, i.gpu_memory) for i in a100} == {
        (1.39, "A100", 80.0)
    }


def test_verda_and_nebius_on_demand_and_spot_prices_are_as_listed(snapshot):
    for name, file, key in [
        ("verda", "skypilot_v8_verda_vms.csv", lambda r: r["InstanceType"]),
        ("nebius", "skypilot_v8_nebius_vms.csv", lambda r: r["InstanceType"].replace("_", " ", 1)),
    ]:
        listed = {}
        for r in rows(file):
            for column, spot in (("Price", False), ("SpotPrice", True)):
                if r[column]:
                    listed[(key(r), r["Region"], spot)] = float(r[column])
        got = {(i.instance_name, i.location, i.spot): i.price for i in offers(snapshot, name)}
        assert got == listed, name
    verda = {(i.instance_name, i.location, i.spot): i for i in offers(snapshot, "verda")}
    b300 = verda[("2B300.60V", "FIN-03", True)]  # listed spot only
    assert (b300.price, b300.gpu_name, b300.gpu_count) == (4.893, "B300", 2)
    assert ("2B300.60V", "FIN-03", False) not in verda


def test_oci_is_every_gpu_shape_of_the_skypilot_catalog_once_per_region(snapshot):
    listed: dict[tuple[str, str, bool], float] = {}
    domains: dict[str, set[str]] = {}
    for r in rows("skypilot_v8_oci_vms_gpu.csv"):
        domains.setdefault(r["Region"], set()).add(r["AvailabilityZone"])
        for column, spot in (("Price", False), ("SpotPrice", True)):
            if r[column]:
                key = (r["InstanceType"], r["Region"], spot)
                assert listed.setdefault(key, float(r[column])) == float(r[column]), key
    oci = list(offers(snapshot, "oci"))
    got = {(i.instance_name, i.location, i.spot): i.price for i in oci}
    assert got == listed and len(oci) == len(listed)  # one offer per region, not per domain
    assert len(domains) == 44 and len(domains["us-ashburn-1"]) == 3
    b200 = {i.location for i in oci if i.instance_name == "BM.GPU.B200.8" and i.price == 112}
    assert len(b200) == 44
    by_name = {i.instance_name: i for i in oci if i.location == "eu-frankfurt-1" and not i.spot}
    assert (by_name["BM.GPU.H200.8"].gpu_name, by_name["BM.GPU.H200.8"].gpu_memory) == ("H200", 141)
    assert by_name["BM.GPU.L40S.4"].price == 14 and by_name["BM.GPU.L40S.4"].gpu_count == 4
    assert by_name["BM.GPU.GB200.4"].cpu_arch.value == "arm"  # a Grace superchip
    assert by_name["BM.GPU.MI300X.8"].gpu_vendor.value == "amd"
    spot = [i for i in oci if i.spot]
    assert spot and all(i.flags == ["oci-spot"] for i in spot)


def test_aws_is_built_from_every_real_region_price(snapshot):
    text = gzip.decompress(replay_aws.FULL_PRICE_LIST.read_bytes()).decode()
    price_rows = list(csv.DictReader(io.StringIO(text.split("\n", 5)[5])))
    prices = {(r["Instance Type"], r["Region Code"]): float(r["PricePerUnit"]) for r in price_rows}
    assert len(price_rows) == len(prices) == 1157  # the 2026-01-21 catalog's region prices
    aws = list(offers(snapshot, "aws"))
    assert len(aws) > 700
    for item in aws:
        assert prices[(item.instance_name, item.location)] == item.price
        assert not item.spot  # no spot price was recorded


def test_gcp_sku_sources_match_the_generator():
    """The tags the snapshot filters on are the ones `make_replay_data.py` assigns."""
    path = ROOT / "tests" / "providers" / "data" / "gcp" / "make_replay_data.py"
    spec = importlib.util.spec_from_file_location("make_replay_data", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert replay_gcp.sku_sources() == module.sku_sources()
    assert "ILL" in replay_gcp.sku_sources().values()


@pytest.mark.slow
def test_the_bundled_snapshot_is_what_the_script_makes(snapshot):
    """The provenance test: the conversions re-run over the stored inputs give the bundled
    snapshot, offer by offer. Regenerate with `python scripts/make_snapshot.py` when a source
    or a collector changes."""
    csvs, entries = make_snapshot().from_sources()
    assert set(csvs) == set(snapshot.csvs)
    for name, data in csvs.items():
        made = offers_of(data, name)
        bundled = offers_of(snapshot.csvs[name], name)
        assert made == bundled, f"{name}: the bundled snapshot is stale; run make_snapshot.py"
        assert archive.sha256(data) == archive.sha256(snapshot.csvs[name]), name
        assert entries[name]["rows"] == len(made) == snapshot.manifest["providers"][name]["rows"]


def offers_of(data: bytes, provider: str):
    return list(csv_load(io.StringIO(data.decode()), provider=provider))


def test_skypilot_conversion_skips_and_counts_an_unknown_gpu(tmp_path):
    path = tmp_path / "vms.csv"
    path.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,"
        "SpotPrice\n"
        "gpu_1x_zz9,ZZ9000,1.0,8.0,32.0,1.5,us-east-1,\"{'Gpus': [{'Name': 'ZZ9000', "
        "'Manufacturer': 'NVIDIA', 'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 24576}}], "
        "'TotalGpuMemoryInMiB': 24576}\",\n"
        "gpu_1x_a10,A10,1.0,30.0,200.0,1.29,us-east-1,\"{'Gpus': [{'Name': 'A10', "
        "'Manufacturer': 'NVIDIA', 'Count': 1.0, 'MemoryInfo': {'SizeInMiB': 24576}}], "
        "'TotalGpuMemoryInMiB': 24576}\",0.5\n"
    )
    out = skypilot_vms.convert(skypilot_vms.CONVERSIONS["lambdalabs"], path)
    assert out.rows == 2
    assert out.skipped == ["gpu_1x_zz9: GPU 'ZZ9000' is not known"]
    assert [(i.instance_name, i.price, i.spot, i.gpu_memory) for i in out.items] == [
        ("gpu_1x_a10", 1.29, False, 24.0),
        ("gpu_1x_a10", 0.5, True, 24.0),
    ]


def test_pending_providers_convert_cleanly():
    """The hook for providers whose module lands on another branch (scripts/snapshot_sources)."""
    assert set(skypilot_vms.PENDING_CONVERSIONS) <= set(skypilot_vms.PENDING)
    assert not set(skypilot_vms.PENDING) & set(registry.ALL_PROVIDERS) - {
        "hyperbolic",
        "primeintellect",
        "shadeform",
        "fluidstack",
        "paperspace",
        "scaleway",
        "ovhcloud",
    }
    out = skypilot_vms.convert(skypilot_vms.PENDING_CONVERSIONS["hyperbolic"])
    assert not out.skipped
    assert [(i.instance_name, i.price, i.gpu_name, i.gpu_memory) for i in out.items] == [
        ("1x-H100-75-722", 1.29, "H100", 80.0),
        ("2x-H100-149-1443", 2.58, "H100", 80.0),
        ("3x-H100-224-2165", 3.87, "H100", 80.0),
    ]


def test_every_new_location_has_a_geography_row(snapshot):
    path = ROOT / "src" / "gpuhunt" / "resources" / "geography.csv"
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == ["provider", "location", "country", "area", "source"]
        table = {(r["provider"], r["location"]): r for r in reader}
    areas = {"north-america", "south-america", "europe", "middle-east", "africa", "asia-pacific"}
    for name in ["runpod", "verda", "oci"]:  # the providers (and regions) this snapshot adds
        for item in offers(snapshot, name):
            row = table[(name, item.location)]
            assert re.fullmatch(r"[A-Z]{2}", row["country"]) and row["area"] in areas
            assert row["source"]
    assert table[("runpod", "EUR-IS-1")]["country"] == "IS"
    assert table[("verda", "FIN-03")]["country"] == "FI"
    assert table[("oci", "me-jeddah-1")]["area"] == "middle-east"


def test_readme_table_matches_the_manifest(snapshot):
    """README's snapshot table gives each provider's offer count and date as the manifest."""
    readme = (ROOT / "README.md").read_text()
    manifest = snapshot.manifest
    assert manifest is not None
    for name, entry in manifest["providers"].items():
        date = entry["collected_at"] or "unknown"
        pattern = rf"\| {name} \| [^|]+ \| {re.escape(date)}[^|]* \| {entry['rows']:,} \|"
        assert re.search(pattern, readme), name
    total = sum(e["rows"] for e in manifest["providers"].values())
    assert f"{total:,} offers" in readme and manifest["version"] in readme
    size = len(resources.files("gpuhunt.resources").joinpath("catalog.zip").read_bytes())
    assert f"{round(size / 1024)} KB" in readme


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_script_imports_no_test_code():
    code = (
        "import runpy, sys\n"
        "ns = runpy.run_path('scripts/make_snapshot.py', run_name='not_main')\n"
        "ns['from_sources'](['lambdalabs', 'gcp', 'runpod'])\n"
        "bad = sorted(m for m in sys.modules if m == 'tests' or m.startswith('tests.'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, timeout=300
    )


def test_stored_input_hashes_are_pinned():
    digests = {
        name: hashlib.sha256((skypilot_vms.DATA / name).read_bytes()).hexdigest()
        for name in sorted(p.name for p in skypilot_vms.DATA.glob("*.csv"))
    }
    assert digests == PINNED
