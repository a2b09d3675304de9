"""Data ages and the collection cadence (`freshness.py`, `scripts/ci_matrix.py --due`)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

from gpuhunt._internal import freshness, pipeline, registry, storage
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
        "future": "0m",
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
        # cloudrift absent from the previous manifest (a new provider): due
    )
    assert freshness.due(collected, NOW) == [
        "aws",
        "azure",
        "oci",
        "verda",
        "nebius",
        "runpod",
        "cloudrift",
    ]
    assert freshness.due(None, NOW) == registry.OFFLINE_PROVIDERS  # first run: everything
    assert freshness.due(collected, NOW, ["gcp", "runpod"]) == ["runpod"]


def test_a_carried_over_provider_stays_due_until_collected():
    """A carry-over keeps the time of the last good collection, so a provider whose job failed
    is retried in the next run instead of waiting a whole cadence."""
    fresh = pipeline.Collected(
        storage.dumps([item("aws", instance_name="g6.xlarge", gpu_name="L4", price=0.8)]),
        "2026-11-29T02:40:00+00:00",
    )
    first = pipeline.build_catalog("20261129-1", {"aws": fresh}, None, providers=["aws"])
    assert freshness.due(first.manifest, NOW - dt.timedelta(hours=12), ["aws"]) == []
    assert freshness.due(first.manifest, NOW, ["aws"]) == ["aws"]


def test_ci_matrix_lists_only_due_providers(tmp_path):
    now = dt.datetime.now(UTC).replace(microsecond=0)
    when = {"aws": now, "runpod": now - dt.timedelta(minutes=45)}
    fresh = {
        p: pipeline.Collected(
            storage.dumps([item(p, instance_name="x", gpu_name="L4", price=1.0)]), t.isoformat()
        )
        for p, t in when.items()
    }
    b = pipeline.build_catalog("20261129-1", fresh, None, providers=["aws", "runpod"])
    pipeline.write_build(b, tmp_path / "v3")
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
