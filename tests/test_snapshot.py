"""The bundled snapshot (`src/gpuhunt/resources/catalog.zip`) is honest: every offer comes from a
real source named in its manifest, with the date that source was recorded (or none when unknown,
never the build date), and it is exactly what `scripts/make_snapshot.py` makes of the sources."""

from __future__ import annotations

import csv
import gzip
import importlib.util
import io
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from scripts.replay import replay_aws, replay_gcp, skypilot_lambdalabs, skypilot_nebius

from gpuhunt._internal import registry
from gpuhunt._internal.formats import archive
from gpuhunt._internal.formats.csv import load as csv_load

ROOT = Path(__file__).resolve().parent.parent
KINDS = {"recorded API answers", "public price list", "published third-party catalog"}


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


def test_manifest_names_each_source_and_when_it_was_recorded(snapshot):
    script = make_snapshot()
    manifest = snapshot.manifest
    assert manifest is not None
    entries = manifest["providers"]
    assert set(entries) == set(script.SOURCES)
    assert set(script.SOURCES) | set(script.LEFT_OUT) == set(registry.OFFLINE_PROVIDERS)
    for name, entry in entries.items():
        source = script.SOURCES[name]
        assert entry["source"]["kind"] in KINDS and entry["source"]["name"], name
        assert entry["collected_at"] == source.collected_at, name
        assert entry["collected_at"] != manifest["built_at"][:10], name  # never the build date
    dated = [e["collected_at"] for e in entries.values() if e["collected_at"]]
    assert manifest["version"] == "snapshot-" + max(dated).replace("-", "")
    assert entries["aws"]["collected_at"] == "2026-01-21"
    assert entries["lambdalabs"]["collected_at"] is None  # the catalog commit's date is unknown
    assert entries["nebius"]["collected_at"] is None


def test_no_illustrative_or_test_fixture_price_ships(snapshot):
    for name in ["verda", "runpod", "cloudrift"]:  # only test fixtures or built data
        assert name not in snapshot.csvs
    gcp = list(offers(snapshot, "gcp"))
    assert gcp and not [i for i in gcp if i.gpu_name == "K80"]
    # N1 GPU spot prices were illustrative ("40% of on-demand"): none is left.
    assert not [i for i in gcp if i.instance_name.startswith("n1-") and i.gpu_count and i.spot]
    # Lambda is SkyPilot's catalog, price for price (not the test fixture's $4.29 H100).
    listed = {
        (row["InstanceType"], row["Region"]): float(row["Price"])
        for row in csv.DictReader(skypilot_lambdalabs.CATALOG.open())
    }
    lambdalabs = list(offers(snapshot, "lambdalabs"))
    assert {(i.instance_name, i.location): i.price for i in lambdalabs} == listed
    assert not [i for i in lambdalabs if i.price == 4.29]
    # Nebius is SkyPilot's catalog too: on-demand and preemptible prices as listed.
    listed = {}
    for row in csv.DictReader(skypilot_nebius.CATALOG.open()):
        name = row["InstanceType"].replace("_", " ", 1)
        listed[(name, row["Region"], False)] = float(row["Price"])
        if row["SpotPrice"]:
            listed[(name, row["Region"], True)] = float(row["SpotPrice"])
    nebius = {(i.instance_name, i.location, i.spot): i.price for i in offers(snapshot, "nebius")}
    assert nebius == listed


def test_aws_is_built_from_every_real_region_price(snapshot):
    text = gzip.decompress(replay_aws.FULL_PRICE_LIST.read_bytes()).decode()
    rows = list(csv.DictReader(io.StringIO(text.split("\n", 5)[5])))
    prices = {(r["Instance Type"], r["Region Code"]): float(r["PricePerUnit"]) for r in rows}
    assert len(rows) == len(prices) == 1157  # the 2026-01-21 catalog's region prices, all of them
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


def test_the_bundled_snapshot_is_what_the_script_makes(snapshot):
    """Regenerate with `python scripts/make_snapshot.py` when a source or a collector changes."""
    csvs, entries = make_snapshot().from_sources()
    assert set(csvs) == set(snapshot.csvs)
    for name, data in csvs.items():
        assert archive.sha256(data) == archive.sha256(snapshot.csvs[name]), (
            f"{name}: the bundled snapshot is stale; run python scripts/make_snapshot.py"
        )


def test_the_script_imports_no_test_code():
    code = (
        "import runpy, sys\n"
        "ns = runpy.run_path('scripts/make_snapshot.py', run_name='not_main')\n"
        "ns['from_sources'](['lambdalabs', 'gcp'])\n"
        "bad = sorted(m for m in sys.modules if m == 'tests' or m.startswith('tests.'))\n"
        "assert not bad, bad\n"
    )
    subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, timeout=300
    )
