"""The nightly catalog pipeline with real parts: the providers' collectors over their recorded
answers (`scripts/replay/replay_<name>.py`, whichever exist), `gpuhunt catalog build`,
`gpuhunt catalog publish` with boto3 against a moto S3 server on 127.0.0.1, and the loader (and
gpuhunt 0.1.30) reading the bucket back over HTTP."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuhunt import Catalog
from gpuhunt._internal import registry
from gpuhunt._internal.errors import CatalogIntegrityError, PipelineError
from gpuhunt._internal.formats import columns
from gpuhunt._internal.formats.archive import FORMAT_VERSION, read_archive, sha256, write_archive
from gpuhunt._internal.formats.csv import csv_bytes, write_csv_file
from gpuhunt._internal.formats.csv_table import build_table
from gpuhunt._internal.load.sources import snapshot_age_days
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.publish import s3
from gpuhunt._internal.publish.build import Collected, build_catalog, check_csv, column_file
from gpuhunt._internal.publish.files import load_previous, write_build
from gpuhunt._internal.publish.s3 import s3_client
from gpuhunt._internal.publish.verify import verify
from gpuhunt._internal.query.table import COLUMNS, STRING_LISTS, Table
from tests._internal.pipeline import Bucket, build, gpuhunt, publish

ROOT = Path(__file__).resolve().parents[3]
V1, V2, V3 = "20261129-1", "20261130-1", "20261201-1"


def offer_key(i: CatalogItem) -> tuple[Any, ...]:
    return (i.provider, i.instance_name, i.location, i.price, i.spot, i.gpu_count, i.gpu_name)


# --------------------------------------------------------------------------- fixtures


def manifest_in(bucket: Bucket, version: str) -> dict[str, Any]:
    archive = read_archive(bucket.get(f"{version}/catalog.zip"))
    assert archive.manifest is not None
    return archive.manifest


# --------------------------------------------------------------------------- end to end


@pytest.mark.slow
@pytest.mark.moto
@pytest.mark.parametrize("layout", ["archive", "per-provider"])
def test_collect_build_publish_and_load_over_http(
    layout, tmp_path, collected, replayed, bucket, capsys
):
    build(collected, V1, tmp_path / "out")
    publish(tmp_path / "out", bucket)
    out = capsys.readouterr().out
    assert f"published {V1} to s3://{bucket.name}/v3" in out

    keys = bucket.object_keys()
    assert f"v3/{V1}/catalog.zip" in keys and "v3/version" in keys
    for p in replayed:
        assert f"v3/{p}/{V1}/catalog.zip" in keys and f"v3/{p}/version" in keys
    assert bucket.get("version") == V1.encode()
    assert gpuhunt("catalog", "verify", bucket.base) == 0
    assert f"OK: {bucket.base} version {V1}" in capsys.readouterr().out

    manifest = manifest_in(bucket, V1)
    assert manifest["format_version"] == FORMAT_VERSION and manifest["version"] == V1
    assert set(manifest) == {
        "format_version",
        "version",
        "gpuhunt_version",
        "built_at",
        "providers",
    }
    for p, items in replayed.items():
        entry = manifest["providers"][p]
        assert entry["status"] == "fresh" and entry["rows"] == len(items)
        assert entry["from_version"] == V1
        # A fresh CSV's collected_at is when the collector wrote it (moments ago here).
        age = dt.datetime.now(dt.timezone.utc) - dt.datetime.fromisoformat(entry["collected_at"])
        assert dt.timedelta(0) <= age < dt.timedelta(minutes=30)

    if layout == "per-provider":
        # A bucket without the archive's pointer is read the way gpuhunt 0.1.x reads it.
        bucket.delete("version")
    catalog = Catalog(catalog_url=bucket.base, auto_reload=False)
    catalog.load()
    status = catalog.status()
    assert status.source == "network" and status.version == V1
    assert status.offers == {p: len(items) for p, items in replayed.items()}

    everything = [offer_key(i) for i in catalog.query()]
    expected = sorted(offer_key(i) for items in replayed.values() for i in items)
    assert sorted(everything) == expected
    assert [k[3] for k in everything] == sorted(k[3] for k in everything)  # cheapest first

    # Lambda's recorded price list: 8x H100 SXM5 at $35.92/h, in every Lambda region.
    eight_h100 = catalog.query(provider="lambdalabs", gpu_name="H100", min_gpu_count=8)
    assert {(i.instance_name, i.price, i.gpu_count, i.gpu_memory) for i in eight_h100} == {
        ("gpu_8x_h100_sxm5", 35.92, 8, 80.0)
    }
    assert len(eight_h100) == len({i.location for i in replayed["lambdalabs"]})
    cheap_h100 = catalog.query(gpu_name="H100", max_price=5, provider="lambdalabs")
    assert {(i.instance_name, i.price) for i in cheap_h100} == {("gpu_1x_h100_sxm5", 4.29)}


@pytest.mark.slow
@pytest.mark.moto
def test_failed_collection_is_carried_over(tmp_path, collected, replayed, bucket, capsys):
    build(collected, V1, tmp_path / "v1")
    publish(tmp_path / "v1", bucket)
    v1_lambda = read_archive(bucket.get(f"lambdalabs/{V1}/catalog.zip")).csvs["lambdalabs"]

    # Night 2: Lambda's collection failed (no CSV), another provider's CSV has a broken row.
    (collected / "lambdalabs.csv").unlink()
    broken = next(p for p in replayed if p != "lambdalabs")
    with open(collected / f"{broken}.csv", "a", encoding="utf-8") as f:
        f.write("half-a-row,somewhere,not-a-price\r\n")
    build(collected, V2, tmp_path / "v2", previous=bucket.base)
    out = capsys.readouterr().out
    assert "lambdalabs   carried_over" in out and "no CSV was collected" in out
    assert f"{broken}" in out and "malformed row" in out
    publish(tmp_path / "v2", bucket)

    manifest = manifest_in(bucket, V2)
    v1_manifest = manifest_in(bucket, V1)
    for p in ["lambdalabs", broken]:
        entry = manifest["providers"][p]
        assert entry["status"] == "carried_over" and entry["from_version"] == V1
        assert entry["sha256"] == v1_manifest["providers"][p]["sha256"]
        assert entry["collected_at"] == v1_manifest["providers"][p]["collected_at"]
    fresh = [p for p in replayed if p not in ("lambdalabs", broken)]
    assert all(manifest["providers"][p]["status"] == "fresh" for p in fresh)
    # Both layouts carry the old CSV under the new version.
    assert read_archive(bucket.get(f"lambdalabs/{V2}/catalog.zip")).csvs["lambdalabs"] == v1_lambda
    assert bucket.get("lambdalabs/version") == V2.encode()
    assert gpuhunt("catalog", "verify", bucket.base) == 0

    catalog = Catalog(catalog_url=bucket.base, auto_reload=False)
    catalog.load()
    assert catalog.status().version == V2
    assert len(catalog.query(provider="lambdalabs")) == len(replayed["lambdalabs"])
    assert not [i for i in catalog.query(provider=broken) if i.instance_name == "half-a-row"]

    # Night 3, still failing: the data keeps the version and date it was collected at.
    build(collected, V3, tmp_path / "v3", previous=bucket.base)
    night3 = read_archive((tmp_path / "v3" / V3 / "catalog.zip").read_bytes()).manifest
    assert night3 is not None
    entry = night3["providers"]["lambdalabs"]
    assert entry["status"] == "carried_over" and entry["from_version"] == V1
    assert entry["collected_at"] == v1_manifest["providers"]["lambdalabs"]["collected_at"]


def _integrity_dir(tmp_path: Path) -> Path:
    """The project's real shared invariants (`integrity_tests/base.py`) with a Lambda test file."""
    folder = tmp_path / "checks" / "integrity_tests"
    folder.mkdir(parents=True)
    for name in ["__init__.py", "base.py", "conftest.py"]:
        shutil.copy(ROOT / "integrity_tests" / name, folder / name)
    (folder / "test_lambdalabs.py").write_text(
        "from integrity_tests.base import BaseIntegrity\n\n\n"
        "class TestLambdaLabs(BaseIntegrity):\n"
        '    provider = "lambdalabs"\n\n'
        "    def test_regions(self, items):\n"
        '        assert {"us-east-1", "us-west-1"} <= {i.location for i in items}\n'
    )
    return folder


def _break_an_invariant(csv_path: Path) -> None:
    # Every row still parses (a zero price would not: the reader skips it since issue 40), but
    # the Lambda test file's region check must fail: us-west-1 is gone.
    text = csv_path.read_text(encoding="utf-8").replace("us-west-1", "us-west-9")
    csv_path.write_text(text, encoding="utf-8", newline="")


@pytest.mark.subprocess
@pytest.mark.moto
def test_integrity_failure_is_not_published(tmp_path, collected, replayed, bucket, capsys):
    checks = _integrity_dir(tmp_path)
    build(collected, V1, tmp_path / "v1", "--integrity", "--integrity-dir", checks)
    out = capsys.readouterr().out
    assert "lambdalabs   fresh" in out
    # Providers with no integrity test file are not trusted either.
    others = [p for p in replayed if p != "lambdalabs"]
    assert all(f"{p}" in out for p in others) and "no integrity tests" in out
    # Nothing published yet: publish a first version without the gate.
    build(collected, "20261128-1", tmp_path / "v0")
    publish(tmp_path / "v0", bucket)
    good = read_archive(bucket.get("20261128-1/catalog.zip")).csvs["lambdalabs"]

    _break_an_invariant(collected / "lambdalabs.csv")
    bad = (collected / "lambdalabs.csv").read_bytes()
    build(
        collected,
        V2,
        tmp_path / "v2",
        "--integrity",
        "--integrity-dir",
        checks,
        previous=bucket.base,
    )
    out = capsys.readouterr().out
    assert "lambdalabs   carried_over" in out and "integrity tests failed (1 failed" in out
    publish(tmp_path / "v2", bucket)
    assert manifest_in(bucket, V2)["providers"]["lambdalabs"]["status"] == "carried_over"
    for rel in [f"{V2}/catalog.zip", f"lambdalabs/{V2}/catalog.zip"]:
        csvs = read_archive(bucket.get(rel)).csvs
        assert csvs["lambdalabs"] == good and csvs["lambdalabs"] != bad
    catalog = Catalog(catalog_url=bucket.base, auto_reload=False)
    catalog.load()
    assert catalog.status().version == V2
    assert min(i.price for i in catalog.query(provider="lambdalabs")) > 0

    # Without a previous version the failing provider is left out altogether.
    other = others[0]
    (checks / f"test_{other}.py").write_text(
        f"from integrity_tests.base import load_catalog\n\n\n"
        f"def test_has_offers():\n    assert load_catalog({other!r})\n"
    )
    build(collected, V3, tmp_path / "v3", "--integrity", "--integrity-dir", checks)
    assert f"{other:12} fresh" in capsys.readouterr().out
    assert not (tmp_path / "v3" / "lambdalabs").exists()
    manifest = read_archive((tmp_path / "v3" / V3 / "catalog.zip").read_bytes()).manifest
    assert manifest is not None and "lambdalabs" not in manifest["providers"]


class _FailingPointers:
    """A boto3 client whose connection drops when the first `version` pointer is written."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.puts: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def put_object(self, **kw: Any) -> Any:
        if kw["Key"].endswith("version"):
            from botocore.exceptions import EndpointConnectionError

            raise EndpointConnectionError(endpoint_url="http://127.0.0.1")
        self.puts.append(kw["Key"])
        return self._client.put_object(**kw)


@pytest.mark.slow
@pytest.mark.moto
def test_interrupted_publish_leaves_previous_version(tmp_path, collected, replayed, bucket):
    build(collected, V1, tmp_path / "v1")
    publish(tmp_path / "v1", bucket)
    write_csv_file(
        [
            i.__class__(**{**i.__dict__, "price": round(i.price * 2, 4)})
            for i in replayed["lambdalabs"]
        ],
        str(collected / "lambdalabs.csv"),
    )
    build(collected, V2, tmp_path / "v2", previous=bucket.base)

    flaky = _FailingPointers(s3_client())
    with pytest.raises(PipelineError, match=r"PUT s3://.*/v3/.*version failed"):
        s3.publish(tmp_path / "v2", bucket.name, "v3", client=flaky)
    assert f"v3/{V2}/catalog.zip" in flaky.puts  # the archive went up ...
    assert bucket.get("version") == V1.encode()  # ... but nothing points at it
    assert all(bucket.get(f"{p}/version") == V1.encode() for p in replayed)
    catalog = Catalog(catalog_url=bucket.base, auto_reload=False)
    catalog.load()
    assert catalog.status().version == V1
    v1_prices = sorted(i.price for i in replayed["lambdalabs"])
    assert sorted(i.price for i in catalog.query(provider="lambdalabs")) == v1_prices

    # Publishing again finishes the job: intact objects are not uploaded twice.
    result = s3.publish(tmp_path / "v2", bucket.name, "v3")
    assert result.uploaded == [] and f"{V2}/catalog.zip" in result.skipped
    catalog.load()
    assert catalog.status().version == V2
    assert sorted(i.price for i in catalog.query(provider="lambdalabs")) == [
        round(p * 2, 4) for p in v1_prices
    ]


class _TamperingBucket(_FailingPointers):
    """Something else rewrites an object right after it was uploaded."""

    def put_object(self, **kw: Any) -> Any:
        answer = self._client.put_object(**kw)
        if kw["Key"].endswith(".zip") and "lambdalabs" in kw["Key"]:
            self._client.put_object(Bucket=kw["Bucket"], Key=kw["Key"], Body=kw["Body"][:-10])
        return answer


@pytest.mark.slow
@pytest.mark.moto
def test_publish_checks_every_object_before_the_pointers(tmp_path, collected, bucket):
    build(collected, V1, tmp_path / "v1")
    tampering = _TamperingBucket(s3_client())
    with pytest.raises(PipelineError, match=rf"lambdalabs/{V1}/catalog.zip is \d+ bytes"):
        s3.publish(tmp_path / "v1", bucket.name, "v3", client=tampering)
    assert not [k for k in bucket.object_keys() if k.endswith("version")]
    # A version object that exists with other content is never silently replaced.
    with pytest.raises(PipelineError, match="already exists with different content"):
        s3.publish(tmp_path / "v1", bucket.name, "v3")
    result = s3.publish(tmp_path / "v1", bucket.name, "v3", overwrite=True)
    # Both of Lambda's objects were cut short: its catalog and its price history.
    assert result.uploaded == [f"lambdalabs/{V1}/catalog.zip", f"lambdalabs/{V1}/history.zip"]
    assert gpuhunt("catalog", "verify", bucket.base) == 0


def _tampered_zip(data: bytes) -> bytes:
    """A well-formed zip whose CSV no longer matches the sha256 in its manifest."""
    archive = read_archive(data)
    csvs = {p: c.replace(b"gpu_", b"gpv_", 1) for p, c in archive.csvs.items()}
    return write_archive(csvs, archive.manifest or {})


@pytest.mark.slow
@pytest.mark.moto
def test_corrupted_archive_is_rejected_and_cached_version_served(
    tmp_path, collected, replayed, bucket, capsys
):
    build(collected, V1, tmp_path / "v1")
    publish(tmp_path / "v1", bucket)
    serving = Catalog(catalog_url=bucket.base, auto_reload=False)
    serving.load()
    assert serving.status().version == V1
    build(collected, V2, tmp_path / "v2", previous=bucket.base)
    publish(tmp_path / "v2", bucket)
    capsys.readouterr()
    bucket.put(f"{V2}/catalog.zip", bucket.get(f"{V2}/catalog.zip")[:-100])  # truncated

    assert gpuhunt("catalog", "verify", bucket.base) == 1
    err = capsys.readouterr().err.strip()
    assert f"{bucket.base}/{V2}/catalog.zip" in err and len(err.splitlines()) == 1

    # The loader refuses it: a running catalog keeps its version, and says why.
    serving.load()
    status = serving.status()
    assert status.version == V1 and f"{V2}/catalog.zip" in (status.last_error or "")
    assert len(serving.query(provider="lambdalabs")) == len(replayed["lambdalabs"])
    # A new process with the good version in its disk cache starts from it.
    restarted = Catalog(catalog_url=bucket.base, auto_reload=False)
    restarted.load()
    assert (restarted.status().source, restarted.status().version) == ("disk-cache", V1)
    with pytest.raises(CatalogIntegrityError, match=f"{V2}/catalog.zip"):
        Catalog(catalog_url=bucket.base, auto_reload=False).load(version=V2)


@pytest.mark.slow
@pytest.mark.moto
def test_corrupted_per_provider_object_is_rejected(tmp_path, collected, bucket, capsys):
    build(collected, V1, tmp_path / "v1")
    publish(tmp_path / "v1", bucket)
    capsys.readouterr()
    rel = f"lambdalabs/{V1}/catalog.zip"
    bucket.put(rel, _tampered_zip(bucket.get(rel)))

    assert gpuhunt("catalog", "verify", bucket.base) == 1
    err = capsys.readouterr().err
    assert f"{rel}: lambdalabs.csv does not match the sha256 in its manifest" in err
    # The loader reading that layout leaves Lambda out and names the file.
    bucket.delete("version")
    catalog = Catalog(catalog_url=bucket.base, auto_reload=False)
    catalog.load()
    assert "lambdalabs" not in catalog.status().offers
    assert rel in (catalog.status().last_error or "")


# --------------------------------------------------------------------------- gpuhunt 0.1.30


_READ_WITH_0130 = """
import json, logging, sys
logging.disable(logging.CRITICAL)  # it logs a traceback for each provider not published here
import gpuhunt, importlib.metadata
assert importlib.metadata.version("gpuhunt") == "0.1.30"
catalog = gpuhunt.Catalog(balance_resources=False, auto_reload=False)
catalog.load()
providers = []
for name in sys.argv[1].split(","):
    try:  # providers added after 0.1.30 are unknown to it: their CSVs are ignored, not an error
        catalog.query(provider=name)
    except ValueError:
        continue
    providers.append(name)
offers = catalog.query(provider=providers)
h100 = catalog.query(provider="lambdalabs", gpu_name="H100", min_gpu_count=8)
key = lambda i: [i.provider, i.instance_name, i.location, i.price, i.spot, i.gpu_count, i.gpu_name]
print(json.dumps({"offers": [key(i) for i in offers], "h100": [key(i) for i in h100],
                  "known": providers}))
"""

# Offline providers added after gpuhunt 0.1.30 (issue 30): it does not know their names.
NEWER_THAN_0130 = {"scaleway", "ovhcloud"}


@pytest.mark.moto
@pytest.mark.pypi
def test_gpuhunt_0130_reads_the_published_bucket(
    tmp_path, collected, replayed, bucket, gpuhunt_0130
):
    build(collected, V1, tmp_path / "v1")
    publish(tmp_path / "v1", bucket)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GPUHUNT_", "PYTHON")) and k not in ("VIRTUAL_ENV",)
    }
    env.update(
        GPUHUNT_CATALOG_URL=bucket.base,
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    out = subprocess.run(
        [str(gpuhunt_0130), "-c", _READ_WITH_0130, ",".join(replayed)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout)
    assert set(replayed) - set(got["known"]) <= NEWER_THAN_0130
    expected = sorted(list(offer_key(i)) for name in got["known"] for i in replayed[name])
    assert sorted(got["offers"]) == expected
    assert {(o[1], o[3]) for o in got["h100"]} == {("gpu_8x_h100_sxm5", 35.92)}


# --------------------------------------------------------------------------- build rules


def _csv(*items: CatalogItem) -> bytes:
    return csv_bytes(items)


def _lambda_items(replayed: dict[str, list[CatalogItem]]) -> bytes:
    return _csv(*replayed["lambdalabs"])


def test_check_csv_rules(replayed):
    good = _lambda_items(replayed)
    assert check_csv(good, "lambdalabs") == (len(replayed["lambdalabs"]), None)
    header = good.split(b"\r\n", 1)[0]
    rows, reason = check_csv(good + b"x,y,not-a-price\r\n", "lambdalabs")
    assert rows == len(replayed["lambdalabs"]) and "1 malformed row(s): line" in (reason or "")
    assert check_csv(header + b"\r\n", "lambdalabs") == (0, "no offers")
    assert "header is not the catalog format" in (
        check_csv(good.replace(b"instance_name,", b"name,", 1), "lambdalabs")[1] or ""
    )
    assert "not UTF-8" in (check_csv(good + b"\xff\xfe", "lambdalabs")[1] or "")


def test_unreadable_previous_blocks_a_partial_build(replayed):
    fresh = {"lambdalabs": Collected(_lambda_items(replayed), "2026-11-30T00:00:00+00:00")}
    providers = ["lambdalabs", "verda"]
    with pytest.raises(PipelineError, match="verda cannot be published fresh .* HTTP 503"):
        build_catalog(V2, fresh, None, providers=providers, previous_error="version: HTTP 503")
    # When nothing needs carrying over, the previous catalog is not needed.
    ok = build_catalog(V2, fresh, None, providers=["lambdalabs"], previous_error="HTTP 503")
    assert list(ok.manifest["providers"]) == ["lambdalabs"]
    assert list(ok.pointers) == ["lambdalabs/version", "version"]  # the archive pointer last


def test_published_versions_are_immutable(tmp_path, replayed):
    fresh = {"lambdalabs": Collected(_lambda_items(replayed), "2026-11-29T00:00:00+00:00")}
    first = build_catalog(V1, fresh, None, providers=["lambdalabs"])
    write_build(first, tmp_path / "v1")
    previous, error = load_previous(str(tmp_path / "v1"), ["lambdalabs"])
    assert error is None and previous is not None
    with pytest.raises(PipelineError, match=f"Version {V1} is already published"):
        build_catalog(V1, fresh, previous, providers=["lambdalabs"])
    with pytest.raises(PipelineError, match="is not empty"):
        write_build(first, tmp_path / "v1")
    with pytest.raises(PipelineError, match="Not a valid catalog version"):
        build_catalog("../etc", fresh, None)


def test_carry_over_from_a_per_provider_only_bucket(tmp_path, replayed):
    """The bucket gpuhunt 0.1.x publishes has no archive and no manifest."""
    legacy = tmp_path / "legacy"
    data = _lambda_items(replayed)
    (legacy / "lambdalabs" / "20250101").mkdir(parents=True)
    (legacy / "lambdalabs" / "20250101" / "catalog.zip").write_bytes(
        write_archive({"lambdalabs": data}, {})
    )
    (legacy / "lambdalabs" / "version").write_text("20250101")
    previous, error = load_previous(str(legacy), ["lambdalabs", "verda"])
    assert error is None and previous is not None
    b = build_catalog(V1, {}, previous, providers=["lambdalabs", "verda"])
    entry = b.manifest["providers"]["lambdalabs"]
    assert entry == {
        "rows": len(replayed["lambdalabs"]),
        "sha256": sha256(data),
        "collected_at": None,
        "status": "carried_over",
        "from_version": "20250101",
        "reason": "no CSV was collected",
        "columns_sha256": sha256(column_file("lambdalabs", data)),
        "history_sha256": entry["history_sha256"],
        "history_rows": len(replayed["lambdalabs"]),
    }
    assert [(o.provider, o.status) for o in b.outcomes] == [
        ("lambdalabs", "carried_over"),
        ("verda", "missing"),
    ]


def test_cli_errors_are_one_line(tmp_path, capsys, monkeypatch):
    assert (
        gpuhunt(
            "catalog",
            "build",
            "--input",
            tmp_path / "nope",
            "--version",
            V1,
            "--output",
            tmp_path / "o",
        )
        == 2
    )
    assert "Input folder" in capsys.readouterr().err
    # A path the user gave that is not there is theirs to fix (issue 40): 2.
    assert gpuhunt("catalog", "verify", tmp_path / "nothing-here") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gpuhunt: error:") and len(err.splitlines()) == 1

    import builtins

    real_import = builtins.__import__

    def no_boto3(name, *a, **kw):
        if name.startswith("boto3"):
            raise ImportError("No module named 'boto3'", name="boto3")
        return real_import(name, *a, **kw)

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "lambdalabs.csv").write_bytes(_csv(*_some_lambda_offers()))
    build(tmp_path / "in", V1, tmp_path / "out")
    capsys.readouterr()
    monkeypatch.setattr(builtins, "__import__", no_boto3)
    assert gpuhunt("catalog", "publish", tmp_path / "out", "--bucket", "gpuhunt-x") == 1
    assert "pip install 'gpuhunt[aws]'" in capsys.readouterr().err


def _some_lambda_offers() -> list[CatalogItem]:
    from tests.helpers import item

    return [
        item("lambdalabs", instance_name="gpu_1x_a10", gpu_name="A10", gpu_memory=24.0, price=0.75)
    ]


def test_publish_refuses_a_broken_build_folder(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "lambdalabs.csv").write_bytes(_csv(*_some_lambda_offers()))
    build(tmp_path / "in", V1, tmp_path / "out")
    (tmp_path / "out" / "lambdalabs" / V1 / "catalog.zip").write_bytes(b"not a zip")
    with pytest.raises(PipelineError, match=f"Refusing to publish .*lambdalabs/{V1}/catalog.zip"):
        s3.publish(tmp_path / "out", "gpuhunt-x", client=object())


def test_verify_checks_each_column_file_against_its_csv(tmp_path, replayed):
    """A column file must be there when the manifest lists one and hold its CSV's offers."""
    data = _lambda_items(replayed)
    fresh = {"lambdalabs": Collected(data, "2026-11-29T00:00:00+00:00")}
    b = build_catalog(V1, fresh, None, providers=["lambdalabs"])
    write_build(b, tmp_path / "ok")
    assert verify(str(tmp_path / "ok")).version == V1

    def rewrite(folder, packed):
        manifest = dict(b.manifest)
        entry = dict(manifest["providers"]["lambdalabs"])
        entry["columns_sha256"] = sha256(packed) if packed else entry["columns_sha256"]
        manifest["providers"] = {"lambdalabs": entry}
        write_build(b, tmp_path / folder)
        zipped = write_archive(
            {"lambdalabs": data}, manifest, {"lambdalabs": packed} if packed else None
        )
        for rel in (f"{V1}/catalog.zip", f"lambdalabs/{V1}/catalog.zip"):
            (tmp_path / folder / rel).write_bytes(zipped)
        return str(tmp_path / folder)

    with pytest.raises(CatalogIntegrityError, match="lambdalabs.columns is missing"):
        verify(rewrite("missing", None))
    # Built from the same CSV (so bound to it by sha256) but holding one offer less.
    table = build_table(data.decode(), provider="lambdalabs")
    fewer = table.part("lambdalabs")
    assert fewer is not None
    short = columns.encode(
        Table(
            **{k: getattr(fewer, k)[1:] for k in COLUMNS},
            **{k: getattr(fewer, k) for k in STRING_LISTS.values()},
        ),
        sha256(data),
    )
    with pytest.raises(CatalogIntegrityError, match="holds other offers than lambdalabs.csv"):
        verify(rewrite("short", short))


# --------------------------------------------------------------------------- snapshot, CI


@pytest.mark.subprocess
def test_make_snapshot_from_a_published_catalog(tmp_path, collected, replayed):
    build(collected, V1, tmp_path / "published")
    real = ROOT / "src" / "gpuhunt" / "resources" / "catalog.zip"
    before = real.read_bytes()
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "make_snapshot.py"),
            "--from",
            str(tmp_path / "published"),
            "--output",
            str(tmp_path / "snapshot.zip"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert real.read_bytes() == before
    snapshot = read_archive((tmp_path / "snapshot.zip").read_bytes())
    published = read_archive((tmp_path / "published" / V1 / "catalog.zip").read_bytes())
    assert snapshot.csvs == published.csvs and set(snapshot.csvs) == set(replayed)
    assert snapshot.manifest is not None and snapshot.manifest["version"] == f"snapshot-{V1}"
    for p, entry in snapshot.manifest["providers"].items():
        assert entry["collected_at"] == published.manifest["providers"][p]["collected_at"]  # type: ignore[index]
    assert snapshot_age_days(snapshot.manifest) is not None


@pytest.mark.subprocess
def test_ci_matrix_comes_from_the_registry():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "ci_matrix.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    jobs = json.loads(out.stdout)["include"]
    assert [j["provider"] for j in jobs] == registry.OFFLINE_PROVIDERS
    for job in jobs:
        spec = registry.spec(job["provider"])
        assert job["extra"] == (spec.extra or "")
        assert [job[f"cred_{n}"] for n in range(1, 7) if job[f"cred_{n}"]] == list(spec.env)


def test_workflows():
    yaml = pytest.importorskip("yaml")
    catalogs = yaml.safe_load((ROOT / ".github" / "workflows" / "catalogs.yml").read_text())
    triggers = catalogs[True]  # YAML 1.1 reads the key `on` as a boolean
    assert "schedule" in triggers and "workflow_dispatch" in triggers
    text = (ROOT / ".github" / "workflows" / "catalogs.yml").read_text()
    assert "python scripts/ci_matrix.py" in text and "fromJSON(needs.matrix.outputs.matrix)" in text
    collect_steps = " ".join(json.dumps(s) for s in catalogs["jobs"]["collect"]["steps"])
    for n in range(1, 7):  # every credential slot the matrix can fill is mapped from a secret
        assert f"secrets[matrix.cred_{n}]" in collect_steps
    publish_steps = json.dumps(catalogs["jobs"]["publish"]["steps"])
    for command in ["catalog build", "catalog publish", "catalog verify"]:
        assert command in publish_steps
    assert "staging" in publish_steps
    release = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    assert "gpuhunt/resources/catalog.zip" in release and "python -m build" in release


ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"


def _public_reads(bucket: Bucket, key: str) -> list[str]:
    grants = bucket.client.get_object_acl(Bucket=bucket.name, Key=key)["Grants"]
    return [g["Permission"] for g in grants if g["Grantee"].get("URI") == ALL_USERS]


@pytest.mark.slow
@pytest.mark.moto
def test_uploads_are_public_read_unless_told_not_to(tmp_path, collected, bucket, capsys):
    """As the reference workflow (`aws s3 cp --acl public-read`): every object, pointers
    included, is readable by everyone, without relying on a bucket policy."""
    build(collected, V1, tmp_path / "v1")
    publish(tmp_path / "v1", bucket)
    keys = [k for k in bucket.object_keys()]
    assert f"v3/{V1}/catalog.zip" in keys and "v3/version" in keys
    for key in keys:
        assert _public_reads(bucket, key) == ["READ"], key

    # A bucket with ACLs disabled refuses them: --no-acl uploads without one.
    bucket.prefix = "plain"
    args = ["catalog", "publish", tmp_path / "v1", "--bucket", bucket.name, "--prefix", "plain"]
    assert gpuhunt(*args, "--no-acl") == 0
    plain = [k for k in bucket.object_keys() if k.startswith("plain/")]
    assert f"plain/{V1}/catalog.zip" in plain and "plain/version" in plain
    for key in plain:
        assert _public_reads(bucket, key) == [], key
