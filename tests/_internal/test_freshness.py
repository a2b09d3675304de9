"""Data ages and the collection cadence (`freshness.py`, `scripts/ci_matrix.py --due`)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
import responses

from gpuhunt._internal import cli, freshness, registry
from gpuhunt._internal.formats import archive
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.publish import build as pipeline
from gpuhunt._internal.publish import files
from tests.helpers import item

ROOT = Path(__file__).resolve().parents[2]
UTC = dt.timezone.utc
NOW = dt.datetime(2026, 11, 30, 3, 17, tzinfo=UTC)  # an hourly run


def manifest(**collected_at: str | None) -> dict:
    return {"providers": {p: {"collected_at": when} for p, when in collected_at.items()}}


def test_recorded_at_reads_times_and_dates():
    assert freshness.recorded_at({"collected_at": "2026-11-30T02:40:00+00:00"}) == dt.datetime(
        2026, 11, 30, 2, 40, tzinfo=UTC
    )
    assert freshness.recorded_at({"collected_at": "2026-11-30T03:40:00+01:00"}) == dt.datetime(
        2026, 11, 30, 2, 40, tzinfo=UTC
    )
    assert freshness.recorded_at({"collected_at": "2026-01-21"}) == dt.datetime(
        2026, 1, 21, tzinfo=UTC
    )
    for missing in [None, {}, {"collected_at": None}, {"collected_at": "yesterday"}]:
        assert freshness.recorded_at(missing) is None


def test_ages_and_how_they_read():
    ages = freshness.ages(
        manifest(aws="2026-11-29T02:40:00+00:00", gcp="2026-01-21", oci=None, future="2027-01-01"),
        NOW,
    )
    assert {p: freshness.describe(a) for p, a in ages.items()} == {
        "aws": "24h",
        "gcp": "313d",
        "oci": "unknown",
        "future": "unknown",  # issue 50: never `0m`
    }
    assert freshness.describe(dt.timedelta(minutes=37)) == "37m"
    assert freshness.describe(dt.timedelta(hours=47, minutes=59)) == "47h"
    assert freshness.describe(dt.timedelta(hours=48)) == "2d"
    assert freshness.ages(None, NOW) == {}


def test_due_follows_each_providers_cadence():
    assert registry.spec("aws").cadence_hours == 24
    assert registry.spec("runpod").cadence_hours == 1
    collected = manifest(
        aws="2026-11-29T02:40:00+00:00",  # 24h37m ago: due (daily)
        azure="2026-11-29T03:40:00+00:00",  # 23h37m ago: due (within the tolerance)
        gcp="2026-11-29T04:10:00+00:00",  # 23h07m ago: not yet
        oci="2026-11-28",  # a date only: long due
        lambdalabs="2026-11-29T22:00:00+00:00",  # 5h17m ago, every 6h: not yet
        verda="2026-11-29T20:50:00+00:00",  # 6h27m ago: due
        nebius=None,  # unknown: due
        runpod="2026-11-30T02:40:00+00:00",  # 37m ago, hourly: due
        # cloudrift, scaleway, ovhcloud absent from the previous manifest (new providers): due
    )
    assert freshness.due(collected, NOW) == [
        "aws",
        "azure",
        "oci",
        "verda",
        "nebius",
        "runpod",
        "cloudrift",
        "scaleway",
        "ovhcloud",
    ]
    assert freshness.due(None, NOW) == registry.OFFLINE_PROVIDERS  # first run: everything
    assert freshness.due(collected, NOW, ["gcp", "runpod"]) == ["runpod"]


def test_a_carried_over_provider_stays_due_until_collected():
    """A carry-over keeps the time of the last good collection, so a provider whose job failed
    is retried in the next run instead of waiting a whole cadence."""
    fresh = pipeline.Collected(
        csv_bytes([item("aws", instance_name="g6.xlarge", gpu_name="L4", price=0.8)]),
        "2026-11-29T02:40:00+00:00",
    )
    first = pipeline.build_catalog("20261129-1", {"aws": fresh}, None, providers=["aws"])
    assert freshness.due(first.manifest, NOW - dt.timedelta(hours=12), ["aws"]) == []
    assert freshness.due(first.manifest, NOW, ["aws"]) == ["aws"]


@pytest.mark.subprocess
def test_ci_matrix_lists_only_due_providers(tmp_path):
    now = dt.datetime.now(UTC).replace(microsecond=0)
    when = {"aws": now, "runpod": now - dt.timedelta(minutes=45)}
    fresh = {
        p: pipeline.Collected(
            csv_bytes([item(p, instance_name="x", gpu_name="L4", price=1.0)]), t.isoformat()
        )
        for p, t in when.items()
    }
    b = pipeline.build_catalog("20261129-1", fresh, None, providers=["aws", "runpod"])
    files.write_build(b, tmp_path / "v3")
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "ci_matrix.py"), "--due", str(tmp_path / "v3")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    jobs = [j["provider"] for j in json.loads(out.stdout)["include"]]
    # AWS was collected just now (daily); runpod 45 minutes ago (hourly); the others are missing
    # from the previous catalog.
    assert "aws" not in jobs and "runpod" in jobs
    assert jobs == [p for p in registry.OFFLINE_PROVIDERS if p != "aws"]
    assert "due: " in out.stderr
    unreadable = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "ci_matrix.py"), "--due", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert [j["provider"] for j in json.loads(unreadable.stdout)["include"]] == (
        registry.OFFLINE_PROVIDERS
    )
    assert "collecting every provider" in unreadable.stderr


# --------------------------------------------------------------------------- what the CLI says

URL = "https://catalog.test/v3"


@pytest.fixture
def published(tmp_path, monkeypatch):
    """A catalog published at URL (served by `responses`), collected 3 hours (AWS) and 2 days
    (Lambda) ago; a fresh disk cache."""
    now = dt.datetime.now(UTC).replace(microsecond=0)
    fresh = {
        "aws": pipeline.Collected(
            csv_bytes([item("aws", instance_name="p5.48xlarge", gpu_name="H100", price=55.04)]),
            (now - dt.timedelta(hours=3, minutes=5)).isoformat(),
        ),
        "lambdalabs": pipeline.Collected(
            csv_bytes(
                [item("lambdalabs", instance_name="gpu_1x_h100_pcie", gpu_name="H100", price=2.49)]
            ),
            (now - dt.timedelta(days=2, hours=1)).isoformat(),
        ),
    }
    b = pipeline.build_catalog("20261201-7", fresh, None, providers=["aws", "lambdalabs"])
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", URL)
    return b


def serve(rsps: responses.RequestsMock, b: pipeline.Build) -> None:
    rsps.add(responses.GET, f"{URL}/version", body=b.pointers["version"])
    rsps.add(
        responses.GET, f"{URL}/{b.version}/catalog.zip", body=b.objects[f"{b.version}/catalog.zip"]
    )


def footer(capsys) -> str:
    """The footer's lines (after the table's blank line), joined into one."""
    assert cli.main(["query", "--gpu", "H100"]) == 0
    return " ".join(capsys.readouterr().out.rpartition("\n\n")[2].split())


def test_footer_says_where_the_catalog_came_from_and_why(published, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # the full wording (narrower: `test_footer.py`)
    ages = "Data age: aws 3h, lambdalabs 2d."
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        serve(rsps, published)
        line = footer(capsys)
        assert line == f"2 of 2 offers. Catalog 20261201-7 downloaded from {URL}. {ages}"
        # The next process, within the reload interval: no request; the footer says so.
        line = footer(capsys)
    assert line.startswith(
        f"2 of 2 offers. Catalog 20261201-7 from the disk cache: {URL} named it as the latest "
        "version "
    )
    assert line.endswith(f" ago (--refresh checks now). {ages}")
    assert "could not" not in line and "unavailable" not in line
    # The network is down (and the interval has passed): the cached copy is served, and the
    # footer says why.
    monkeypatch.setenv("GPUHUNT_RELOAD_INTERVAL", "0")
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, f"{URL}/version", status=503)
        line = footer(capsys)
    assert line.startswith(
        "2 of 2 offers. Catalog 20261201-7 from the disk cache, because the catalog could not "
        f"be loaded ({URL}/version: "
    )
    assert line.endswith(ages)


def test_footer_and_status_agree_on_the_bundled_snapshots_ages(
    published, capsys, tmp_path, monkeypatch
):
    monkeypatch.setenv("COLUMNS", "1000")  # the full wording, sources named
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, f"{URL}/version", status=503)
        assert cli.main(["catalog", "status", "--json"]) == 0
        status = json.loads(capsys.readouterr().out)
        assert cli.main(["query", "--provider", "aws", "--limit", "1"]) == 0
        line = " ".join(capsys.readouterr().out.rpartition("\n\n")[2].split())
    assert status["source"] == "bundled"
    assert status["why"].startswith("The snapshot bundled with gpuhunt (snapshot-")
    assert "no copy was cached" in status["why"]
    snapshot = archive.read_archive(
        resources.files("gpuhunt.resources").joinpath("catalog.zip").read_bytes()
    )
    assert snapshot.manifest is not None
    for name, entry in snapshot.manifest["providers"].items():
        when = freshness.recorded_at(entry)
        assert status["recorded_at"][name] == (when.isoformat() if when else None)
        age = status["data_age"][name]
        assert (age == "unknown") == (when is None)
        if name == "aws":  # the footer gives the same age, and where the data came from
            label = entry["source"]["label"]
            assert f"Data age: aws {age} ({label})." in line
    assert status["data_age_days"] == max(
        int(a[:-1]) for a in status["data_age"].values() if a.endswith("d")
    )
    assert cli.main(["catalog", "status"]) == 0  # the text form, one line per provider
    text = capsys.readouterr().out
    assert "PROVIDER" in text
    assert [line.split()[0] for line in text.splitlines()[-len(status["data_age"]) :]] == sorted(
        status["data_age"]
    )


def test_status_names_each_bundled_providers_source_and_date_basis(published, capsys):
    """`catalog status` on the bundled snapshot: every provider's source, how its date is known
    (or why it is not), and the lower-bound dates marked as such."""
    snapshot = archive.read_archive(
        resources.files("gpuhunt.resources").joinpath("catalog.zip").read_bytes()
    )
    assert snapshot.manifest is not None
    entries = snapshot.manifest["providers"]
    with responses.RequestsMock() as rsps:
        rsps.add(responses.GET, f"{URL}/version", status=503)
        assert cli.main(["catalog", "status", "--json"]) == 0
        status = json.loads(capsys.readouterr().out)
        assert cli.main(["catalog", "status"]) == 0
        text = capsys.readouterr().out
    assert status["sources"] == {p: e["source"] for p, e in entries.items()}
    lines = text.splitlines()
    start = lines.index("SOURCE")
    for name, entry in entries.items():
        source = entry["source"]
        i = lines.index(f"{name:13} {source['name']}", start)
        assert lines[i + 1] == f"{'':13} date: {source['date_basis']}"
    bounded = [p for p, e in entries.items() if e["source"]["date_is_lower_bound"]]
    # AWS: the oldest of its dated sources (spot prices of 2025-11-30, on-demand newer); GCP
    # too (anycloud's N1 GPU/A4/TPU table of 2026-05-20, pricing.yml of 2026-07-30).
    assert bounded == ["aws", "gcp", "lambdalabs", "lium"]
    dates = [
        ("aws", "2025-11-30"),
        ("gcp", "2026-05-20"),
        ("lambdalabs", "2026-05-04"),
        ("lium", "2026-08-24"),
    ]
    for name, date in dates:
        row = next(
            line
            for line in lines
            if line.startswith(name) and "RECORDED" not in line and line.split()[1].isdigit()
        )
        assert row.endswith(f"{date}T00:00:00+00:00 or later")


def test_a_provider_that_was_not_due_is_carried_over_saying_so(tmp_path, capsys):
    now = dt.datetime.now(UTC).replace(microsecond=0)
    fresh = {
        p: pipeline.Collected(
            csv_bytes([item(p, instance_name="x", gpu_name="L4", price=1.0)]),
            (now - dt.timedelta(hours=2)).isoformat(),
        )
        for p in ["aws", "runpod"]
    }
    first = pipeline.build_catalog("20261201-1", fresh, None, providers=["aws", "runpod"])
    files.write_build(first, tmp_path / "v3")
    (tmp_path / "in").mkdir()  # this run collected neither: AWS was not due, runpod failed
    argv = ["catalog", "build", "--input", str(tmp_path / "in"), "--previous", str(tmp_path / "v3")]
    assert cli.main([*argv, "--version", "20261201-2", "--output", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    manifest = archive.read_archive(
        (tmp_path / "out" / "20261201-2" / "catalog.zip").read_bytes()
    ).manifest
    assert manifest is not None
    entries = manifest["providers"]
    assert entries["aws"]["status"] == "carried_over"
    assert entries["aws"]["reason"] == (
        "no CSV was collected; not due by its cadence (data 2h old, collected every 24h)"
    )
    assert entries["runpod"]["reason"] == "no CSV was collected"  # hourly: it was due
    assert "not due by its cadence" in out


def test_the_workflow_runs_hourly_and_collects_the_due_providers():
    yaml = pytest.importorskip("yaml")
    text = (ROOT / ".github" / "workflows" / "catalogs.yml").read_text()
    workflow = yaml.safe_load(text)
    assert workflow[True]["schedule"] == [{"cron": "17 * * * *"}]
    matrix_steps = json.dumps(workflow["jobs"]["matrix"]["steps"])
    assert "scripts/ci_matrix.py" in matrix_steps and "--due" in matrix_steps
    assert workflow["jobs"]["matrix"]["outputs"]["jobs"]
    # An empty matrix is an error in GitHub Actions: nothing due means no collect, no publish.
    assert "needs.matrix.outputs.jobs != '0'" in workflow["jobs"]["collect"]["if"]
    assert "needs.matrix.outputs.jobs != '0'" in workflow["jobs"]["publish"]["if"]


# ------------------------------------------------------------ times in the future (issue 40)


def test_data_recorded_in_the_future_is_due_clamped_and_reported():
    import datetime as dt

    from gpuhunt._internal import freshness
    from gpuhunt._internal.load import sources
    from gpuhunt._internal.publish import report

    now = dt.datetime(2026, 12, 2, 8, 0, tzinfo=dt.timezone.utc)
    manifest = {
        "providers": {
            "aws": {"collected_at": "2029-01-01T00:00:00Z", "status": "carried", "rows": 1}
        }
    }
    assert freshness.ages(manifest, now)["aws"] is None  # unknown, never zero (issue 50)
    assert "aws" in freshness.due(manifest, now, ["aws"])  # never "fresh for years"
    built = report.build_report(manifest, now)
    assert [p.provider for p in built.stale] == ["aws"]
    assert any("in the future" in p for p in built.problems)
    assert sources.snapshot_age_days(manifest, now) is None  # never negative, nor 0 days


def test_a_time_in_the_future_by_any_amount_is_an_unknown_age_flagged_never_0m():
    """Issue 50: within `FUTURE_SKEW` a time ahead of the clock was clamped to age 0 and read
    `0m`; the CLI's footer did so for any time ahead. No age can be told from it."""
    import datetime as dt

    from gpuhunt._internal import freshness
    from gpuhunt._internal.catalog_status import CatalogStatus
    from gpuhunt._internal.cli.footer import data_ages
    from gpuhunt._internal.publish import report
    from gpuhunt._internal.site.data import provenance

    now = dt.datetime(2026, 12, 2, 8, 0, tzinfo=dt.timezone.utc)
    for ahead in (dt.timedelta(seconds=30), dt.timedelta(minutes=3), dt.timedelta(days=400)):
        when = now + ahead
        assert freshness.in_future(when, now) and freshness.age_at(when, now) is None
        assert freshness.describe_at(when, now) == freshness.FUTURE
        assert freshness.FUTURE.startswith("unknown")
        manifest = {"providers": {"aws": {"collected_at": when.isoformat(), "status": "fresh"}}}
        assert freshness.ages(manifest, now) == {"aws": None}
        built = report.build_report(manifest, now)
        assert built.providers[0].future and built.providers[0].age_hours is None
        text = report.markdown(built)
        assert "recorded in the future" in text and "0m" not in text
        assert any("aws was recorded at" in p for p in built.problems)
        assert provenance(manifest, {"aws": 1}, now)[0]["age"] == freshness.FUTURE
    assert freshness.describe_at(now, now) == "0m"  # the present is still an age
    assert freshness.describe_at(now - dt.timedelta(hours=3), now) == "3h"
    # The CLI's footer and `catalog status`, on the reader's clock.
    ahead = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=2)
    status = CatalogStatus(None, None, None, None, None, recorded_at={"aws": ahead})
    assert data_ages(status) == {"aws": freshness.FUTURE}
