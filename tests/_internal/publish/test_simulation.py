"""Months of the hourly pipeline on a simulated clock: every hour the providers that are due
(`freshness.due`, as `scripts/ci_matrix.py --due` decides) are collected from a simulated world,
`catalog build` runs (`publish.run.run_build`, the command without its printing) with the
previous version read from a local folder that stands for the bucket, and the build is copied
into it as `catalog publish` would upload it.

The world, over six weeks: GCP (daily) from two real price lists (`data/gcp_pricing_*.json`,
trimmed from Cyclenerd's `pricing.yml` of 2025-03-06 and 2026-07-30, between which 36 instance
types' median price moved more than 2x: a real repricing), switched from the old to the new one
on day 10, broken for two days (every price x100, a unit bug), down for 40 hours later on;
Lambda (every 6 hours; made-up offers, for the test only) drifting by a few percent every
collection, retiring its A10 models, collecting an empty list for a day, failing for three
days. (An hourly marketplace would make ten times the builds; the gate's unit tests cover
them.) Kept on tmpfs when there is one: the bucket collects every version. Asserted: no provider is ever stale while its
collections are consistent; a broken collection is never published; the repricing and the
retirement are published by the third agreeing collection; the price history stays readable
(also after it is corrupted once) and bounded.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from gpuhunt._internal import freshness, registry
from gpuhunt._internal.formats import archive
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.history import remote
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.publish import gate, run
from gpuhunt._internal.publish.verify import verify
from tests.helpers import item

DATA = Path(__file__).parent / "data"
PROVIDERS = ["gcp", "lambdalabs"]
START = dt.datetime(2026, 8, 1, 0, 17, tzinfo=dt.timezone.utc)  # the workflow runs at :17
DAYS = 42
GPUS = {"a100": ("A100", 40.0), "a100-80gb": ("A100", 80.0), "h100-80gb": ("H100", 80.0)}
GPUS["l4"] = ("L4", 24.0)


def _day(now: dt.datetime) -> float:
    return (now - START).total_seconds() / 86400


# --------------------------------------------------------------------------- the world


def gcp_offers(date: str, factor: float = 1.0) -> list[CatalogItem]:
    doc = json.loads((DATA / f"gcp_pricing_{date}.json").read_text())
    out = []
    for name, spec in sorted(doc["instances"].items()):
        gpu = next(((k, v) for k, v in spec.items() if k in GPUS), None)
        gpu_name, gpu_memory = GPUS[gpu[0]] if gpu else (None, None)
        for region, cost in sorted(spec["cost"].items()):
            for key, spot in (("hour", False), ("hour_spot", True)):
                if key in cost:
                    out.append(
                        item(
                            "gcp",
                            instance_name=name,
                            location=region,
                            price=round(cost[key] * factor, 6),
                            cpu=int(spec["cpu"]),
                            memory=float(spec["ram"]),
                            gpu_count=int(gpu[1]) if gpu else 0,
                            gpu_name=gpu_name,
                            gpu_memory=gpu_memory,
                            spot=spot,
                        )
                    )
    return out


LAMBDA = [("gpu_1x_a10", "A10", 1, 0.75), ("gpu_1x_h100_sxm5", "H100", 1, 2.99)]
LAMBDA += [("gpu_8x_h100_sxm5", "H100", 8, 23.92), ("gpu_1x_gh200", "GH200", 1, 1.49)]
LAMBDA_REGIONS = ("us-east-1", "us-west-1", "europe-central-1")


def lambda_offers(n: int, *, retired: bool) -> list[CatalogItem]:
    drift = 1 + 0.03 * ((n * 7) % 5 - 2) / 2  # within +-3%, changing every collection
    return [
        item(
            "lambdalabs",
            instance_name=name,
            location=r,
            gpu_name=g,
            gpu_count=c,
            price=round(p * drift, 4),
        )
        for name, g, c, p in LAMBDA
        if not (retired and g == "A10")
        for r in LAMBDA_REGIONS
    ]


class World:
    """What each provider's collector returns at a given time (None: the collection fails)."""

    def __init__(self) -> None:
        self.lambda_runs = 0
        self.broken: set[str] = set()  # sha256 of every broken collection handed out

    def collect(self, provider: str, now: dt.datetime) -> bytes | None:
        day = _day(now)
        if provider == "gcp":
            if 30 <= day < 30 + 40 / 24:
                return None  # API down for 40 hours: under the 72-hour limit
            date = "2025-03-06" if day < 10 else "2026-07-30"
            if 20 <= day < 22:
                return self._broken(csv_bytes(gcp_offers(date, factor=100)))  # cents
            return csv_bytes(gcp_offers(date))
        if provider == "lambdalabs":
            if 33 <= day < 36:
                return None  # three days of failures: beyond its 18 hours, stale and loud
            self.lambda_runs += 1
            if 25 <= day < 26:
                return self._broken(csv_bytes([]))  # an empty answer
        return csv_bytes(lambda_offers(self.lambda_runs, retired=day >= 15))

    def _broken(self, data: bytes) -> bytes:
        self.broken.add(archive.sha256(data))
        return data

    def consistent(self, provider: str, since: dt.datetime, now: dt.datetime) -> bool:
        """Whether every collection in (since, now] succeeded with good data."""
        bad = {"gcp": [(20, 22), (30, 30 + 40 / 24)], "lambdalabs": [(25, 26), (33, 36)]}
        a, b = _day(since), _day(now)
        return not any(lo <= b and a < hi for lo, hi in bad[provider])


# --------------------------------------------------------------------------- the pipeline


def publish(build_dir: Path, bucket: Path) -> None:
    """`catalog publish` to a folder: version objects first, then the pointers."""
    version = (build_dir / "version").read_text()
    pointers = [p for p in build_dir.rglob("version") if p.is_file()]
    for path in sorted(build_dir.rglob("*")):
        if path.is_file() and path not in pointers:
            target = bucket / path.relative_to(build_dir)
            assert not target.exists(), f"{target} would change a published version"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    for path in sorted(pointers, key=lambda p: p.parent == build_dir):
        target = bucket / path.relative_to(build_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(version)


def _manifest(bucket: Path) -> dict[str, Any] | None:
    version = bucket / "version"
    if not version.exists():
        return None
    got = archive.read_archive((bucket / version.read_text() / "catalog.zip").read_bytes())
    return got.manifest


@pytest.fixture(autouse=True)
def _only_these_providers(monkeypatch):
    # The build covers every offline provider of the registry; the world has three.
    monkeypatch.setattr(registry, "OFFLINE_PROVIDERS", PROVIDERS)
    monkeypatch.setattr(run.registry, "OFFLINE_PROVIDERS", PROVIDERS)


@pytest.fixture
def fast_tmp(tmp_path):
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="gpuhunt-sim-", dir=shm))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_weeks_of_hourly_builds(fast_tmp):
    tmp_path = fast_tmp
    world = World()
    bucket = tmp_path / "bucket"
    bucket.mkdir()
    published: dict[str, list[tuple[dt.datetime, dict[str, Any]]]] = {p: [] for p in PROVIDERS}
    stale_seen: set[tuple[str, int]] = set()
    gcp_new = archive.sha256(csv_bytes(gcp_offers("2026-07-30")))
    gcp_new_collections = 0
    gcp_new_published: dict[str, Any] | None = None
    lambda_retired_published: dict[str, Any] | None = None
    history_reset_version = None
    corrupted = False
    builds = 0
    for hour in range(DAYS * 24):
        now = START + dt.timedelta(hours=hour)
        manifest = _manifest(bucket)
        due = freshness.due(manifest, now, PROVIDERS)
        if not due:
            continue
        folder = tmp_path / "in"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for p in due:
            data = world.collect(p, now)
            if data is None:
                continue
            if p == "gcp" and archive.sha256(data) == gcp_new:
                gcp_new_collections += 1
            (folder / f"{p}.csv").write_bytes(data)
            meta = {"provider": p, "started_at": (now + dt.timedelta(minutes=2)).isoformat()}
            (folder / f"{p}.csv.meta.json").write_text(json.dumps(meta))
        day_38 = not corrupted and _day(now) >= 38
        if day_38:
            corrupted = True
            # Someone's tool rewrote the latest history with garbage; the build goes on.
            latest = (bucket / "version").read_text()
            (bucket / latest / "history.zip").write_bytes(b"garbage")
        version = f"{now:%Y%m%d}-{hour}"
        out = tmp_path / "builds" / version
        build, summary = run.run_build(
            folder, version, out, previous_url=str(bucket) if manifest else None, now=now
        )
        publish(out, bucket)
        shutil.rmtree(out)
        builds += 1
        entries = build.manifest["providers"]
        if day_38:
            assert build.manifest["history_reset"]["kept_as"].startswith(f"{version}/")
            assert summary.history_reset and "could not be read" in summary.history_reset
            history_reset_version = version
        else:
            assert "history_reset" not in build.manifest
        for p, entry in entries.items():
            # A broken collection is never published, however often it comes.
            assert entry["sha256"] not in world.broken, (version, p)
            if entry["status"] == "fresh":
                published[p].append((now, entry))
                meta_start = (now + dt.timedelta(minutes=2)).isoformat()
                assert entry["collected_at"] == meta_start  # the collector's start time
            if p == "gcp" and entry["sha256"] == gcp_new and gcp_new_published is None:
                gcp_new_published = entry
            if p == "lambdalabs" and lambda_retired_published is None and entry.get("evidence"):
                lambda_retired_published = entry
        for line in summary.providers:
            if line.stale:
                stale_seen.add((line.provider, hour))
                when = freshness.recorded_at(entries[line.provider])
                assert when is not None
                # Stale only when the collections since its data were not all good.
                assert not world.consistent(line.provider, when, now), (line, hour)
        for p in PROVIDERS:
            entry = entries[p]
            limit = registry.spec(p).stale_limit_hours
            age = now - dt.datetime.fromisoformat(entry["collected_at"])
            if age > dt.timedelta(hours=limit):
                assert (p, hour) in stale_seen  # and then the summary says so

    # The repricing: refused twice, published by the third agreeing collection.
    assert gcp_new_published is not None
    assert gcp_new_collections >= 3
    assert [c["sha256"] for c in gcp_new_published["evidence"]] == [gcp_new] * 3
    assert "36 instance types moved beyond x2" in gcp_new_published["accepted_despite"]
    first_seen = START + dt.timedelta(days=10)
    published_at = dt.datetime.fromisoformat(gcp_new_published["collected_at"])
    assert published_at - first_seen < dt.timedelta(hours=3)
    # The retirement of Lambda's A10 (a GPU model vanished), likewise.
    assert lambda_retired_published is not None
    assert "1 GPU model vanished: A10" in lambda_retired_published["accepted_despite"]
    assert len(lambda_retired_published["evidence"]) == 3
    # Only Lambda's day of empty answers and its three-day outage made anything stale, once its
    # data was over 18 hours old; GCP's broken days and its 40-hour outage stayed within 72.
    assert {p for p, _ in stale_seen} == {"lambdalabs"}
    stale_days = sorted({int(h // 24) for _, h in stale_seen})
    assert stale_days == [25, 33, 34, 35], stale_days
    # Stale from 18 hours after its last good collection (at most 6 hours before the outage).
    first = min(h for _, h in stale_seen if h > 30 * 24)
    assert 33 * 24 + 12 <= first <= 33 * 24 + 19

    # The last version verifies, its history included; history stays readable and bounded.
    checked = verify(str(bucket))
    assert checked.history_rows > 0 and history_reset_version is not None
    spans = remote.fetch_history(str(bucket), providers=PROVIDERS).spans()
    for p in PROVIDERS:
        # Started again on day 38, from each provider's data then (GCP's of the day before).
        assert min(s.from_date for s in spans[p]) >= (START + dt.timedelta(days=37)).date()
        offers_now = len(gate.summarize(checked.csvs[p], p).median_price)
        assert offers_now and len(spans[p]) <= 4 * 24 * len(checked.csvs[p].splitlines()), p
    # GCP's prices held still since: exactly one row per offer.
    assert len(spans["gcp"]) == len(checked.csvs["gcp"].splitlines()) - 1
    # Lambda every 6 hours, GCP daily, and hourly retries while a provider is carried over.
    assert DAYS * 4 < builds < DAYS * 9
