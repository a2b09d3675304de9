"""`Catalog.explain`: offers left after each filter in the order given, the filter that removed
the last, the cheapest offers failing exactly one filter, who lists a GPU no offer has; and the
CLI printing it for an empty answer and with --explain (test data, not real prices)."""

from __future__ import annotations

import re

import pytest

from gpuhunt import Catalog, Explanation, UnknownProviderError
from gpuhunt._internal import cli
from gpuhunt._internal.explain import GpuSource, NearMiss, Step
from gpuhunt._internal.formats.archive import sha256, write_archive
from gpuhunt._internal.formats.csv import csv_bytes
from tests.helpers import item, publish_archive

AWS = [
    item(instance_name="h100-us", gpu_name="H100", location="us-east-1", price=3.0),
    item(instance_name="h100-us", gpu_name="H100", location="us-west-2", price=3.0),
    item(instance_name="h100-eu", gpu_name="H100", location="eu-central-1", price=4.0),
    item(instance_name="a100-eu", gpu_name="A100", location="eu-west-1", price=1.5),
    item(instance_name="cpu-eu", gpu_count=0, location="eu-west-1", price=0.1),
]
LAMBDA = [
    item("lambdalabs", instance_name="h100-l", gpu_name="H100", location="us-east-1", price=2.0)
]


@pytest.fixture()
def catalog(tmp_path, monkeypatch):
    publish_archive(
        tmp_path, "20261201-1", {"aws": csv_bytes(AWS), "lambdalabs": csv_bytes(LAMBDA)}
    )
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path))
    with Catalog(catalog_url=str(tmp_path), auto_reload=False) as c:
        c.load()
        yield c


def test_steps_in_the_order_given_and_the_filter_that_emptied_the_answer(catalog):
    e = catalog.explain(gpu_name="H100", area="europe", max_price=3.5)
    assert isinstance(e, Explanation) and e.offers == 6
    assert e.steps == [
        Step("gpu_name", "H100", 4),
        Step("area", "europe", 1),
        Step("max_price", 3.5, 0),
    ]
    assert e.emptied_by == Step("max_price", 3.5, 0) and e.left == 0
    # the other order tells another story
    e2 = catalog.explain(max_price=3.5, gpu_name="H100", area="europe")
    assert [s.left for s in e2.steps] == [5, 3, 0] and e2.emptied_by.filter == "area"


def test_the_cheapest_offers_failing_exactly_one_filter(catalog):
    e = catalog.explain(gpu_name="H100", area="europe", max_price=3.5)
    got = [(m.offer.instance_name, m.offer.location, m.filter) for m in e.near_misses]
    assert got == [
        ("a100-eu", "eu-west-1", "gpu_name"),  # the CPU machine is no near miss of a GPU
        ("h100-l", "us-east-1", "area"),
        ("h100-us", "us-east-1", "area"),  # once, at its cheapest region
        ("h100-eu", "eu-central-1", "max_price"),
    ]
    assert isinstance(e.near_misses[0], NearMiss) and e.near_misses[0].value == "H100"
    text = "\n".join(e.lines())
    assert "max_price=3.5 removed the last." in text
    assert "aws h100-eu eu-central-1 $4/h 1xH100: fails max_price=3.5" in text


def test_one_filter_has_no_near_misses_and_a_thin_answer_no_emptier(catalog):
    e = catalog.explain(gpu_name="A100")
    assert e.steps == [Step("gpu_name", "A100", 1)] and e.emptied_by is None
    assert e.near_misses == [] and e.gpu_sources == {}
    assert catalog.explain().steps == [] and catalog.explain().left == 6


def test_a_gpu_no_offer_has_names_who_lists_it(catalog):
    e = catalog.explain(gpu_name="RTX 4090")
    assert e.gpu_sources == {
        "RTX 4090": [
            GpuSource(
                "RTX4090",
                "runpod",
                False,
                False,
                "https://github.com/skypilot-org/skypilot-catalog/blob/01acdfd4/catalogs/v8/runpod/"
                "vms.csv (the GPU models of its rows)",
            ),
            GpuSource(
                "RTX4090", "vastai", True, False, "gpuhunt.providers.vastai.LISTED_GPU_NAMES"
            ),
        ]
    }
    line = [x for x in e.lines() if x.startswith("No offer")]
    assert line == [
        "No offer in this catalog is a 'RTX 4090' (RTX4090). Listed by: runpod (offline "
        "provider; this catalog has none of its offers); vastai (online: asked live with "
        "--online)."
    ]


def test_providers_without_offers_and_bad_input(catalog):
    e = catalog.explain(provider="vastai")
    assert e.providers_without_offers == {"vastai": True}
    assert catalog.explain(provider="RunPod").providers_without_offers == {"runpod": False}
    with pytest.raises(UnknownProviderError):
        catalog.explain(provider="nope")
    with pytest.raises(ValueError, match="Invalid area"):
        catalog.explain(area="eu")


def test_cli_explains_an_empty_answer_and_on_demand(catalog, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert cli.main(["query", "--gpu", "RTX 4090"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("0 of 0 offers.")
    assert "  gpu_name=['RTX 4090']" not in out
    # The steps' counts line up after the widest step (the doors' `include`, rentable only).
    assert re.search(r"^  gpu_name='RTX 4090' +0 left$", out, re.M)
    assert re.search(r"^  include=\(rentable only\) +0 left$", out, re.M)
    assert "Listed by: runpod" in out
    assert cli.main(["query", "--gpu", "H100", "--max-price", "2.5"]) == 0
    assert "each filter, in order" not in capsys.readouterr().out  # not empty: not explained
    assert cli.main(["query", "--gpu", "H100", "--max-price", "2.5", "--explain"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\n  max_price=2\.5 +1 left\n", out) and "fails max_price=2.5" in out
    # after --json the explanation goes to stderr: stdout stays JSON
    assert cli.main(["query", "--gpu", "RTX 4090", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "[]\n" and "removed the last" in captured.err


def test_the_public_names():
    import gpuhunt
    from gpuhunt._internal import default

    assert gpuhunt.explain is default.explain and gpuhunt.Explanation is Explanation
    assert (
        gpuhunt.collapse_regions([]) == [] and gpuhunt.CollapsedOffer.__name__ == "CollapsedOffer"
    )


def test_a_gpu_name_is_shown_with_the_canonical_name_it_was_read_as(catalog):
    # "TPU v5e" is v5litepod (the alias table); the line says so, and who lists it (GCP, whose
    # offers this catalog lacks), and says when a name is no GPU gpuhunt knows.
    lines = catalog.explain(gpu_name=["TPU v5e", "Quantum9"]).lines()
    assert (
        "No offer in this catalog is a 'TPU v5e' (v5litepod). Listed by: gcp (offline provider; "
        "this catalog has none of its offers)." in lines
    )
    assert any("'Quantum9' (a name gpuhunt does not know)" in x for x in lines)


def test_the_offer_state_filters_count_what_each_removed(tmp_path):
    import datetime as dt

    recent = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    offers = [
        item(instance_name="fresh", available=True, observed_at=recent),
        item(instance_name="old", available=True, observed_at="2020-01-01"),
        item(instance_name="sold", available=False, observed_at=recent),
        item(instance_name="quiet"),
    ]
    shadeform = [item("shadeform", instance_name="resold", resold_from="x")]
    publish_archive(
        tmp_path, "20261202-1", {"aws": csv_bytes(offers), "shadeform": csv_bytes(shadeform)}
    )
    with Catalog(catalog_url=str(tmp_path), auto_reload=False) as c:
        c.load()
        e = c.explain(resale=False, available=True, max_age=dt.timedelta(days=1))
    assert [(s.filter, s.left) for s in e.steps] == [
        ("resale", 4),
        ("available", 2),
        ("max_age", 1),
    ]
    line = [x for x in e.lines() if x.lstrip().startswith("max_age")]
    assert line and line[0].split() == ["max_age=1d", "1", "left"]


def test_a_near_miss_whose_provider_says_nothing_is_not_said_to_fail(tmp_path):
    """An offer with no availability reading (or no date) misses available=True (max_age) by
    what its provider does not say, and the line says that instead of "fails"."""
    import datetime as dt

    recent = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    offers = [
        item(instance_name="sold", price=1.0, available=False),
        item(instance_name="quiet", price=2.0),
        item(instance_name="free", price=3.0, available=True),
        item(instance_name="dated", price=4.0, observed_at=recent),
    ]
    data = csv_bytes(offers)
    # A provider whose data has no date (collected_at null), as SkyPilot's parts of the snapshot
    manifest = {
        "format_version": 1,
        "version": "20261202-1",
        "providers": {
            "aws": {"rows": 4, "sha256": sha256(data), "collected_at": None, "status": "fresh"}
        },
    }
    (tmp_path / "20261202-1").mkdir()
    (tmp_path / "20261202-1" / "catalog.zip").write_bytes(write_archive({"aws": data}, manifest))
    (tmp_path / "version").write_text("20261202-1")
    with Catalog(catalog_url=str(tmp_path), auto_reload=False) as c:
        c.load()
        e = c.explain(gpu_name="A100", available=True)
        f = c.explain(gpu_name="A100", max_age=dt.timedelta(days=1))
    lines = {ln.split(":")[0].split()[1]: ln.split(": ", 1)[1] for ln in e.lines() if ": " in ln}
    assert lines["sold"] == "fails available=True"
    assert lines["quiet"] == "its provider does not report availability (available=True)"
    dated = {ln.split(":")[0].split()[1]: ln.split(": ", 1)[1] for ln in f.lines() if ": " in ln}
    assert dated["quiet"] == "its price has no date (max_age=1d)"
