"""The plausibility gate of `catalog build` (`publish/gate.py`), alone and inside a build: a fresh CSV
that lost most of its offers, whose prices jumped, or that lost a region or a GPU model keeps the
previous CSV (carried over, with the reason in the manifest and the build log), unless the
maintainer accepts it. The offers are made up for the test (they never ship)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from gpuhunt._internal import cli, registry
from gpuhunt._internal.formats import archive
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.publish import build as pipeline
from gpuhunt._internal.publish import files, gate
from tests.helpers import item

V1, V2 = "20261129-1", "20261130-1"
REGIONS = ("us-east-1", "us-west-2", "eu-west-1")
TYPES = (("p4d.24xlarge", "A100", 8, 21.96), ("g6.xlarge", "L4", 1, 0.80))


def offers(
    *,
    regions: tuple[str, ...] = REGIONS,
    types: tuple[tuple[str, str, int, float], ...] = TYPES,
    factor: float = 1.0,
) -> list[CatalogItem]:
    return [
        item(
            "aws",
            instance_name=name,
            location=region,
            gpu_name=gpu,
            gpu_count=count,
            price=round(price * factor, 4),
        )
        for region in regions
        for name, gpu, count, price in types
    ]


def csv(items: list[CatalogItem]) -> bytes:
    return csv_bytes(items)


# --------------------------------------------------------------------------- the comparison


def check(previous: list[CatalogItem], fresh: list[CatalogItem], **limits) -> list[str]:
    return gate.compare(
        gate.summarize(csv(previous), "aws"),
        gate.summarize(csv(fresh), "aws"),
        gate.Thresholds(**limits),
    )


def test_same_or_similar_data_passes():
    assert check(offers(), offers()) == []
    assert check(offers(), offers(factor=1.3)) == []  # a price change within x2
    more = offers(regions=(*REGIONS, "ap-south-1"))
    assert check(offers(), more) == []  # growth is never suspicious
    assert gate.review("aws", None, csv(offers())) is None  # nothing to compare with


def test_a_large_drop_in_offers_is_refused():
    fresh = offers()[:2]
    reasons = check(offers(), fresh, regions_may_vanish=True)
    assert reasons == ["offers dropped by 67% (6 -> 2; the limit is 50%)"]
    assert check(offers(), fresh, regions_may_vanish=True, max_offer_drop=0.7) == []


def test_a_vanished_region_or_gpu_model_is_refused():
    fresh = offers(regions=REGIONS[:2])
    assert check(offers(), fresh) == ["1 region vanished: eu-west-1"]
    assert check(offers(), fresh, regions_may_vanish=True) == []
    fresh = offers(types=TYPES[:1])
    assert check(offers(), fresh) == ["1 GPU model vanished: L4"]
    assert check(offers(), fresh, gpus_may_vanish=True) == []


def test_a_median_price_jump_either_way_is_refused():
    reasons = check(offers(), offers(factor=100))  # dollars read as cents
    assert len(reasons) == 1
    assert reasons[0].startswith("median price of 2 instance types moved beyond x2: ")
    assert "p4d.24xlarge 21.96 -> 2196" in reasons[0]
    assert check(offers(), offers(factor=0.4))[0].startswith("median price of 2 instance types")
    assert check(offers(), offers(factor=100), max_price_ratio=150) == []


def test_the_median_ignores_a_single_odd_region():
    """One region's price moving is a price change, not a broken collection."""
    fresh = offers()
    fresh[0].price *= 10
    assert check(offers(), fresh) == []


def test_spot_and_on_demand_medians_are_separate():
    previous = offers() + [
        item("aws", instance_name="p4d.24xlarge", location=r, price=8.0, spot=True) for r in REGIONS
    ]
    fresh = offers() + [
        item("aws", instance_name="p4d.24xlarge", location=r, price=30.0, spot=True)
        for r in REGIONS
    ]
    (reason,) = check(previous, fresh)
    assert "p4d.24xlarge (spot) 8 -> 30" in reason


def test_thresholds_come_from_the_registry():
    assert gate.limits("aws") == gate.Thresholds()
    runpod = gate.limits("runpod")
    assert runpod.regions_may_vanish and runpod.gpus_may_vanish
    for name in registry.OFFLINE_PROVIDERS:
        gate.limits(name)  # every entry is valid
    with pytest.raises(ValueError, match="max_price_ratio"):
        gate.Thresholds(max_price_ratio=0.5)


# --------------------------------------------------------------------------- inside a build


@pytest.fixture
def previous(tmp_path):
    """A published V1 with AWS and Lambda, read back the way `--previous` reads it."""
    collected = {
        "aws": pipeline.Collected(csv(offers()), "2026-11-29T02:40:00+00:00"),
        "lambdalabs": pipeline.Collected(
            csv([item("lambdalabs", instance_name="gpu_1x_a10", gpu_name="A10", price=0.75)]),
            "2026-11-29T02:41:00+00:00",
        ),
    }
    first = pipeline.build_catalog(V1, collected, None, providers=["aws", "lambdalabs"])
    files.write_build(first, tmp_path / "v1")
    raw, error = files.load_previous(str(tmp_path / "v1"), ["aws", "lambdalabs"])
    assert error is None and raw is not None
    return raw


def build_with(previous, fresh_aws: list[CatalogItem], **kw) -> pipeline.Build:
    collected = {"aws": pipeline.Collected(csv(fresh_aws), "2026-11-30T02:40:00+00:00")}
    return pipeline.build_catalog(V2, collected, previous, providers=["aws"], **kw)


@pytest.mark.parametrize(
    "fresh, why",
    [
        (offers()[:1], "offers dropped by 83% (6 -> 1"),
        (offers(factor=3), "median price of 2 instance types moved beyond x2"),
        (offers(types=TYPES[:1]), "1 GPU model vanished: L4"),
        (offers(regions=REGIONS[1:]), "1 region vanished: us-east-1"),
    ],
    ids=["lost-offers", "prices-jumped", "gpu-vanished", "region-vanished"],
)
def test_an_implausible_csv_is_not_published_and_the_manifest_says_why(
    previous, fresh, why, caplog
):
    with caplog.at_level(logging.WARNING, logger="gpuhunt._internal.publish.build"):
        b = build_with(previous, fresh)
    entry = b.manifest["providers"]["aws"]
    assert entry["status"] == "carried_over" and entry["from_version"] == V1
    assert entry["collected_at"] == "2026-11-29T02:40:00+00:00"  # when the kept data was made
    assert entry["sha256"] == archive.sha256(previous.csvs["aws"])
    assert entry["reason"].startswith("implausible next to the previous CSV: ")
    assert why in entry["reason"]
    assert why in caplog.text and "carrying over its CSV from " + V1 in caplog.text


def test_the_maintainer_can_accept_the_change(previous, caplog):
    fresh = offers(factor=3)
    with caplog.at_level(logging.WARNING, logger="gpuhunt._internal.publish.build"):
        b = build_with(previous, fresh, accept={"aws"})
    entry = b.manifest["providers"]["aws"]
    assert entry["status"] == "fresh" and entry["sha256"] == archive.sha256(csv(fresh))
    assert "moved beyond x2" in entry["accepted_despite"]  # the override is on record
    assert "accepted by the maintainer" in caplog.text
    assert build_with(previous, fresh, accept=gate.EVERY_PROVIDER).manifest["providers"]["aws"][
        "status"
    ] == ("fresh")
    # Another provider's override does not let this one through.
    assert build_with(previous, fresh, accept={"lambdalabs"}).outcomes[0].status == "carried_over"


def test_cli_accept_flags(tmp_path, previous, capsys):
    def run(*extra: str) -> tuple[int, str, str]:
        folder = tmp_path / f"in{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        (folder / "aws.csv").write_bytes(csv(offers(factor=3)))
        out = tmp_path / f"out-{folder.name}"
        code = cli.main(
            [
                "catalog",
                "build",
                "--input",
                str(folder),
                "--previous",
                str(tmp_path / "v1"),
                "--version",
                V2,
                "--output",
                str(out),
                *extra,
            ]
        )
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    code, out, _ = run()
    assert code == 0 and "aws          carried_over" in out and "implausible" in out
    code, out, _ = run("--accept", "AWS")
    assert code == 0 and "aws          fresh" in out and "accepted: implausible" in out
    code, out, _ = run("--accept-all")
    assert code == 0 and "aws          fresh" in out
    code, _, err = run("--accept", "vastai")
    assert code == 2 and "--accept vastai: not an offline provider" in err  # bad input
    code, _, err = run("--accept", "nosuch")
    assert code == 2 and "Unknown provider: 'nosuch'" in err


def test_a_first_build_has_nothing_to_compare_with(tmp_path: Path):
    b = pipeline.build_catalog(
        V1, {"aws": pipeline.Collected(csv(offers()[:1]), "x")}, None, providers=["aws"]
    )
    assert b.manifest["providers"]["aws"]["status"] == "fresh"


# --------------------------------------------------------------------------- convergence


def _chain(tmp_path: Path, previous_dir: Path, collections: list[list[CatalogItem]], **kw):
    """Build one version per collection, each from the one before (read back from its folder
    like `--previous`), and return the manifests' AWS entries."""
    out = []
    prev = previous_dir
    for n, fresh in enumerate(collections, start=2):
        version = f"20261130-{n}"
        raw, error = files.load_previous(str(prev), ["aws", "lambdalabs"])
        assert error is None and raw is not None
        collected = {"aws": pipeline.Collected(csv(fresh), f"2026-11-30T0{n}:00:00+00:00")}
        b = pipeline.build_catalog(
            version,
            collected,
            raw,
            providers=["aws"],
            candidates=files.load_candidates(str(prev), raw),
            **kw,
        )
        prev = tmp_path / version
        files.write_build(b, prev)
        out.append(b.manifest["providers"]["aws"])
    return out


def test_a_real_change_is_published_by_the_third_agreeing_collection(tmp_path, previous):
    repriced = offers(factor=3)
    first, second, third = _chain(tmp_path, tmp_path / "v1", [repriced] * 3)
    for n, entry in enumerate([first, second], start=1):
        assert entry["status"] == "carried_over" and entry["from_version"] == V1
        assert entry["reason"].endswith(
            f"(collection {n} of the 3 in a row that must agree with each other to publish it)"
        )
        assert entry["pending"]["confirmations"] == 3
        assert [c["version"] for c in entry["pending"]["collections"]] == [
            f"20261130-{i}" for i in range(2, n + 2)
        ]
    assert third["status"] == "fresh" and third["sha256"] == archive.sha256(csv(repriced))
    assert third["accepted_by"] == "3 consecutive collections that agree with each other"
    assert "moved beyond x2" in third["accepted_despite"]
    assert [(c["version"], c["sha256"]) for c in third["evidence"]] == [
        (f"20261130-{i}", archive.sha256(csv(repriced))) for i in (2, 3, 4)
    ]
    assert "pending" not in third


def test_collections_that_disagree_start_the_count_again(tmp_path, previous):
    entries = _chain(
        tmp_path,
        tmp_path / "v1",
        [offers(factor=3), offers(factor=9), offers(factor=9), offers(factor=9)],
    )
    assert [e["status"] for e in entries] == ["carried_over"] * 3 + ["fresh"]
    assert [len(e.get("pending", {}).get("collections", [])) for e in entries[:3]] == [1, 1, 2]


def test_a_blip_consistent_with_the_published_data_is_published_at_once(tmp_path, previous):
    entries = _chain(tmp_path, tmp_path / "v1", [offers()[:1], offers(factor=1.1)])
    assert [e["status"] for e in entries] == ["carried_over", "fresh"]
    assert "accepted_despite" not in entries[1]


def test_an_unconfirmed_change_waits_through_a_run_without_a_collection(tmp_path, previous):
    repriced = offers(factor=3)
    (first,) = _chain(tmp_path, tmp_path / "v1", [repriced])
    raw, _ = files.load_previous(str(tmp_path / "20261130-2"), ["aws"])
    assert raw is not None
    quiet = pipeline.build_catalog(
        "20261130-3",
        {},
        raw,
        providers=["aws"],
        candidates=files.load_candidates(str(tmp_path / "20261130-2"), raw),
    )
    files.write_build(quiet, tmp_path / "20261130-3")
    assert quiet.manifest["providers"]["aws"]["pending"] == first["pending"]
    later = _chain(tmp_path / "later", tmp_path / "20261130-3", [repriced, repriced])
    assert [e["status"] for e in later] == ["carried_over", "fresh"]


@pytest.mark.parametrize(
    "broken, why",
    [(offers(factor=100), "moved beyond x10"), (offers()[:0] + offers()[:0], None)],
    ids=["x100", "empty"],
)
def test_a_broken_collection_is_never_published_however_often_it_comes(
    tmp_path, previous, broken, why
):
    entries = _chain(tmp_path, tmp_path / "v1", [broken] * 5)
    assert all(e["status"] == "carried_over" and e["from_version"] == V1 for e in entries)
    if why:
        assert all(why in e["reason"] and "a broken collection" in e["reason"] for e in entries)
        assert all("pending" not in e for e in entries)
    else:
        assert all(e["reason"] == "no offers" for e in entries)


def test_an_operator_accepts_through_the_committed_file(tmp_path, previous, capsys):
    import datetime as dt
    import json

    from gpuhunt._internal.errors import PipelineError
    from gpuhunt._internal.publish import accept

    path = tmp_path / "catalog-accept.json"
    path.write_text(
        json.dumps({"accept": [{"provider": "aws", "until": "2026-11-30", "why": "AWS repriced"}]})
    )
    in_force = dt.datetime(2026, 11, 30, 23, 59, tzinfo=dt.timezone.utc)
    assert accept.active(path, in_force) == {
        "aws": f"{path} (until 2026-12-01T00:00:00+00:00): AWS repriced"
    }
    assert accept.active(path, in_force + dt.timedelta(minutes=1)) == {}  # expired
    assert accept.active(tmp_path / "none.json", in_force) == {}

    # The CLI runs on the real clock: an entry in force until tomorrow.
    tomorrow = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).date().isoformat()
    path.write_text(
        json.dumps({"accept": [{"provider": "aws", "until": tomorrow, "why": "AWS repriced"}]})
    )
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "aws.csv").write_bytes(csv(offers(factor=100)))  # even beyond the hard limits
    code = cli.main(
        ["catalog", "build", "--input", str(folder), "--previous", str(tmp_path / "v1")]
        + ["--version", V2, "--output", str(tmp_path / "out"), "--accept-file", str(path)]
    )
    assert code == 0 and "aws          fresh" in capsys.readouterr().out
    raw, _ = files.load_previous(str(tmp_path / "out"), ["aws"])
    assert raw is not None and raw.manifest is not None
    entry = raw.manifest["providers"]["aws"]
    assert entry["accepted_by"].endswith("): AWS repriced") and "x10" not in entry["accepted_by"]

    for bad, message in [
        ('{"accept": [{"provider": "aws", "until": "soon", "why": "x"}]}', "until 'soon'"),
        ('{"accept": [{"provider": "vastai", "until": "2026-12-01", "why": "x"}]}', "offline"),
        ('{"accept": [{"provider": "aws", "until": "2026-12-01"}]}', "say why"),
        ('{"accept": [{"provider": "aws", "untl": "2026-12-01"}]}', "unknown key 'untl'"),
        ("[", "not valid JSON"),
    ]:
        path.write_text(bad)
        with pytest.raises(PipelineError, match=message):
            accept.active(path, in_force)


def test_the_committed_accept_file_is_valid():
    import datetime as dt

    from gpuhunt._internal.publish import accept

    root = Path(__file__).resolve().parents[3]
    accept.active(root / accept.DEFAULT_PATH, dt.datetime.now(dt.timezone.utc))


def test_a_broken_collection_neither_counts_nor_breaks_a_count(tmp_path, previous):
    from gpuhunt._internal.publish.verify import verify

    repriced = offers(factor=3)
    entries = _chain(tmp_path, tmp_path / "v1", [repriced, offers(factor=300), repriced, repriced])
    assert [e["status"] for e in entries] == ["carried_over"] * 3 + ["fresh"]
    assert entries[1]["pending"] == entries[0]["pending"] and "broken" in entries[1]["reason"]
    assert len(entries[2]["pending"]["collections"]) == 2
    assert len(entries[3]["evidence"]) == 3
    # The version with the broken collection still holds the pending candidate, and verifies.
    assert verify(str(tmp_path / "20261130-3")).manifest["providers"]["aws"]["pending"]
