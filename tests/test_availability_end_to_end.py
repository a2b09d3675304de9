"""Issue #38 as a user meets it, through the real code paths and nothing set by hand: the Lambda
collector (`python -m gpuhunt lambdalabs --output ...`) on Lambda's recorded answer, served at
its real URLs by `responses`; the CSV built and published hourly by `gpuhunt catalog build`
into a folder; that folder loaded as `GPUHUNT_CATALOG_URL`, asked `query(available=True)`,
`gpuhunt query --available --json` and `gpuhunt history --availability --json`.

The availability expected here is computed from the recorded JSON itself (which regions Lambda
named in `regions_with_capacity_available` for each type), never from what the collector made
of it. The second hour is the same recording with one type's capacity emptied, as Lambda
answers when a type sells out."""

from __future__ import annotations

import copy
import datetime as dt
import json
import logging
import os
import shutil
import types
from pathlib import Path
from typing import Any

import pytest
import responses
from scripts.replay import replay_lambdalabs as replay

import gpuhunt
from gpuhunt._internal import cli
from gpuhunt._internal.cli import collect
from gpuhunt._internal.formats.csv import write_csv_file
from gpuhunt.providers.lambdalabs import IMAGES_URL, INSTANCE_TYPES_URL, TOKEN_ENV
from tests.helpers import item

V1, V2 = "20261202-05", "20261202-06"
HOURS = {
    V1: dt.datetime(2026, 12, 2, 5, tzinfo=dt.timezone.utc),
    V2: dt.datetime(2026, 12, 2, 6, tzinfo=dt.timezone.utc),
}
SOLD_OUT = "gpu_1x_h100_sxm5"  # had capacity in the recording; none in the second hour

Key = tuple[str, str]  # (instance type, region)


# ------------------------------------------------------------- what the recording says


def recorded_types() -> dict[str, Any]:
    return copy.deepcopy(replay.load("instance_types.json"))


def with_capacity(answer: dict[str, Any]) -> set[Key]:
    """(type, region) pairs Lambda's answer names in `regions_with_capacity_available`."""
    return {
        (name, region["name"])
        for name, record in answer["data"].items()
        for region in record["regions_with_capacity_available"]
    }


def every_offer(answer: dict[str, Any]) -> set[Key]:
    """Each type in every region that publishes an x86_64 image (every recorded type is x86),
    plus wherever capacity is reported: what Lambda sells, busy or not."""
    images = replay.load("images.json")["data"]
    x86 = {i["region"]["name"] for i in images if (i.get("architecture") or "x86_64") == "x86_64"}
    return {(name, region) for name in answer["data"] for region in x86} | with_capacity(answer)


def sold_out(answer: dict[str, Any]) -> dict[str, Any]:
    answer = copy.deepcopy(answer)
    answer["data"][SOLD_OUT]["regions_with_capacity_available"] = []
    return answer


# ------------------------------------------------------------------- the pipeline, hourly


class _Clock(dt.datetime):
    """The collector's clock, stopped at the hour of the collection being replayed."""

    at: dt.datetime

    @classmethod
    def now(cls, tz: dt.tzinfo | None = None) -> Any:
        return cls.at.astimezone(tz)


def collect_lambda(
    monkeypatch: pytest.MonkeyPatch, answer: dict[str, Any], folder: Path, hour: dt.datetime
) -> Path:
    """`python -m gpuhunt lambdalabs --output FOLDER/lambdalabs.csv` against the answer."""
    folder.mkdir(parents=True)
    clock = type("Clock", (_Clock,), {"at": hour})
    monkeypatch.setattr(collect, "dt", types.SimpleNamespace(datetime=clock, timezone=dt.timezone))
    monkeypatch.setenv(TOKEN_ENV, replay.REPLAY_TOKEN)
    out = folder / "lambdalabs.csv"
    level = logging.root.level  # the collector, a program's entry point, sets it to INFO
    try:
        with responses.RequestsMock() as rsps:
            rsps.add(responses.GET, INSTANCE_TYPES_URL, json=answer)
            rsps.add(responses.GET, IMAGES_URL, json=replay.load("images.json"))
            assert cli.main(["lambdalabs", "--output", str(out)]) == 0
            assert {c.request.url for c in rsps.calls} == {INSTANCE_TYPES_URL, IMAGES_URL}
    finally:
        logging.root.setLevel(level)
    return folder


def add_aws(folder: Path, hour: dt.datetime) -> None:
    """An AWS collection in the same build: AWS does not report availability."""
    aws = [
        item(instance_name="p5.48xlarge", gpu_name="H100", gpu_count=8, price=98.32),
        item(instance_name="m5.large", gpu_count=0, price=0.096),
    ]
    write_csv_file(aws, str(folder / "aws.csv"))
    os.utime(folder / "aws.csv", (hour.timestamp(), hour.timestamp()))


def build_and_publish(collected: Path, version: str, work: Path, base: Path) -> None:
    """`gpuhunt catalog build` on top of what `base` publishes, then its objects copied into
    `base` (what `catalog publish` does into a bucket: the version, then the pointers)."""
    out = work / f"out-{version}"
    args = ["catalog", "build", "--input", str(collected), "--version", version]
    args += ["--output", str(out)]
    if any(base.iterdir()):
        args += ["--previous", str(base)]
    assert cli.main(args) == 0
    shutil.copytree(out, base, dirs_exist_ok=True)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert cli.main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def offer_keys(rows: list[Any]) -> set[Key]:
    return {(r.instance_name, r.location) for r in rows}


# -------------------------------------------------------------------------- the test


def test_lambda_availability_from_collection_to_query_and_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = recorded_types()
    second = sold_out(first)
    available = with_capacity(first)
    offers = every_offer(first)
    # The recording has what the test needs: capacity somewhere, not everywhere, and a type
    # that sells out having had some.
    assert available and available < offers
    assert any(name == SOLD_OUT for name, _ in available)
    assert with_capacity(second) == {k for k in available if k[0] != SOLD_OUT}

    base = tmp_path / "published"
    base.mkdir()
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(base))

    # Hour 1: collected, built, published, loaded from the folder.
    hour1 = collect_lambda(monkeypatch, first, tmp_path / "in-1", HOURS[V1])
    add_aws(hour1, HOURS[V1])
    build_and_publish(hour1, V1, tmp_path, base)

    with gpuhunt.Catalog(auto_reload=False) as catalog:
        catalog.load()
        every = catalog.query(provider="lambdalabs")
        yes = catalog.query(provider="lambdalabs", available=True)
        no = catalog.query(provider="lambdalabs", available=False)
        aws = catalog.query(provider="aws")
        assert catalog.status().version == V1

    assert offer_keys(yes) == available and len(yes) == len(available)
    assert offer_keys(every) == offers and len(every) == len(offers)  # every offer kept
    assert offer_keys(no) == offers - available
    assert all(i.available is False for i in no)
    assert {i.observed_at for i in every} == {HOURS[V1]}
    # A provider that does not report availability: unknown, neither kind of answer.
    assert aws and {i.available for i in aws} == {None}

    rows = run_json(capsys, "query", "--provider", "lambdalabs", "--available", "--json")
    assert {(r["instance_name"], r["location"]) for r in rows} == available
    assert len(rows) == len(available) and {r["available"] for r in rows} == {True}
    assert {r["observed_at"] for r in rows} == {"2026-12-02T05:00:00Z"}
    aws_rows = run_json(capsys, "query", "--provider", "aws", "--json")
    assert aws_rows and {r["available"] for r in aws_rows} == {None}
    assert run_json(capsys, "query", "--provider", "aws", "--available", "--json") == []

    # Hour 2: the same answer but SOLD_OUT has no capacity anywhere; built on top of hour 1.
    hour2 = collect_lambda(monkeypatch, second, tmp_path / "in-2", HOURS[V2])
    add_aws(hour2, HOURS[V2])
    build_and_publish(hour2, V2, tmp_path, base)

    rows = run_json(capsys, "query", "--provider", "lambdalabs", "--available", "--json")
    assert {(r["instance_name"], r["location"]) for r in rows} == with_capacity(second)
    assert {r["observed_at"] for r in rows} == {"2026-12-02T06:00:00Z"}

    history = run_json(capsys, "history", "--availability", "--json", "--provider", "lambdalabs")
    got = {(r["instance_name"], r["location"]): r for r in history["rows"]}
    assert set(got) == offers
    for key, r in got.items():
        if key in available and key[0] == SOLD_OUT:
            share = 0.5  # capacity once, sold out the next hour
        elif key in available:
            share = 1.0
        else:
            share = 0.0
        assert r["available_share"] == share, r
        assert r["observations"] == 2 and r["reported"] == 2, r
        assert (r["first_observed"], r["last_observed"]) == (
            "2026-12-02T05:00:00Z",
            "2026-12-02T06:00:00Z",
        )
    assert {k[0] for k, r in got.items() if r["available_share"] == 0.5} == {SOLD_OUT}
