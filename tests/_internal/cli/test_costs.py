"""`gpuhunt query` with a usage, a term, a job and `--max-interruption`, over a published
catalog carrying side files (read from the disk cache's copy of the downloaded zip)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuhunt._internal import cli
from gpuhunt._internal.costs import interruption
from gpuhunt._internal.costs.terms import Term
from gpuhunt._internal.formats.csv import csv_bytes
from gpuhunt._internal.formats.terms import write_terms
from tests.helpers import item, publish_archive

DATA = Path(__file__).parent.parent / "costs" / "data"
# The Azure sample's real prices (tests/_internal/costs/data/README.md), as an AWS-like term
# for the CLI's arithmetic: 0.46/h on demand, 2377 for a year upfront.
TERM = Term("azure", "Standard_D8_v4", "westeurope", "1y", "all", "", 0.0, 2377.0, "s", None)
AWS = [
    item("aws", instance_name="g5.xlarge", location="us-east-1", price=0.45, spot=True),
    item("aws", instance_name="p4de.24xlarge", location="us-east-1", price=10.0, spot=True),
    item("aws", instance_name="g6.xlarge", location="us-east-1", price=0.8),
]
AZURE = [item("azure", instance_name="Standard_D8_v4", location="westeurope", price=0.46)]


@pytest.fixture(autouse=True)
def catalog(tmp_path, monkeypatch):
    doc = json.loads((DATA / "spot_advisor_trimmed.json").read_text())
    bands = interruption.write_bands(interruption.parse_spot_advisor(doc, observed_at=None))
    publish_archive(
        tmp_path / "pub",
        "20261207-1",
        {"aws": csv_bytes(AWS), "azure": csv_bytes(AZURE)},
        sides={"aws.interruption": bands, "azure.terms": write_terms([TERM])},
    )
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path / "pub"))
    monkeypatch.setenv("GPUHUNT_CACHE_DIR", str(tmp_path / "cache"))
    return doc


def _json(capsys, *args):
    assert cli.main(["query", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_plain_json_has_no_cost_keys(capsys):
    rows = _json(capsys)
    assert all("interruption" not in r and "pay" not in r for r in rows)


def test_band_key_and_max_interruption(capsys, catalog):
    linux = catalog["spot_advisor"]["us-east-1"]["Linux"]
    labels = {r["index"]: r["label"] for r in catalog["ranges"]}
    rows = _json(capsys, "--spot", "--max-interruption", "100")
    assert {r["instance_name"]: r["interruption"] for r in rows} == {
        n: labels[linux[n]["r"]] for n in ("g5.xlarge", "p4de.24xlarge")
    }
    upper = {"<5%": 5, "5-10%": 10, "10-15%": 15, "15-20%": 20, ">20%": 100}
    kept = _json(capsys, "--spot", "--max-interruption", "10")
    assert {r["instance_name"] for r in kept} == {
        n for n in ("g5.xlarge", "p4de.24xlarge") if upper[labels[linux[n]["r"]]] <= 10
    }


def test_hours_per_month_switches_at_the_break_even(capsys):
    (row,) = _json(capsys, "--provider", "azure", "--hours-per-month", "430", "--months", "12")
    assert row["break_even_hours"] == pytest.approx(2377 / 12 / 0.46, abs=1e-6)
    assert row["pay"] == "on-demand" and row["monthly_cost"] == pytest.approx(430 * 0.46)
    (row,) = _json(capsys, "--provider", "azure", "--hours-per-month", "431", "--months", "12")
    assert row["pay"] == "1y all upfront" and row["monthly_cost"] == pytest.approx(2377 / 12)
    assert row["terms"][0]["upfront"] == 2377.0


def test_job_total_and_unknown_parts(capsys):
    rows = {
        r["instance_name"]: r
        for r in _json(capsys, "--on-demand", "--job-hours", "10", "--egress-gb", "200")
    }
    aws = rows["g6.xlarge"]
    assert aws["total"] == pytest.approx(0.8 * 10 + (200 - 100) * 0.09)
    azure = rows["Standard_D8_v4"]
    assert azure["egress"] is None and azure["total"] is None
    assert list(rows) == ["g6.xlarge", "Standard_D8_v4"]  # unknown last, not free


def test_table_shows_the_columns(capsys):
    assert cli.main(["query", "--provider", "azure", "--hours-per-month", "500"]) == 0
    out = capsys.readouterr().out
    assert "BREAK-EVEN" in out and "MONTHLY" in out
    assert cli.main(["query", "--spot", "--max-interruption", "100"]) == 0
    assert "INTERRUPT" in capsys.readouterr().out


def test_bad_usage_is_a_usage_error(capsys):
    assert cli.main(["query", "--egress-gb", "3"]) == 2
    assert "--job-hours" in capsys.readouterr().err


def test_explain_names_providers_without_terms(capsys):
    assert cli.main(["query", "--hours-per-month", "10", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "No commitment terms in this catalog for: aws" in out


def test_a_plain_query_reads_no_side_file(capsys, monkeypatch):
    from gpuhunt._internal.load import sides

    def refuse(self, name):
        raise AssertionError(f"read {name}")

    monkeypatch.setattr(sides.Sides, "terms", refuse)
    monkeypatch.setattr(sides.Sides, "bands", refuse)
    assert cli.main(["query"]) == 0 and cli.main(["query", "--json"]) == 0
    assert "INTERRUPT" not in capsys.readouterr().out
    with pytest.raises(AssertionError, match="aws.interruption|aws"):
        cli.main(["query", "--spot"])


@pytest.mark.subprocess
def test_the_cost_options_import_no_engine_for_help_or_a_usage_error():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from gpuhunt._internal import cli\n"
        "try:\n"
        "    cli.main(['query', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('numpy' in sys.modules, 'gpuhunt._internal.catalog_costs' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "False False"


def test_l4_spot_of_the_bundled_snapshot_answers_calm_bands(capsys, tmp_path, monkeypatch):
    """Over the bundled snapshot (no catalog to download), L4 spot offers of a band at most 10%
    are answered: exactly those the stored advisor copy rates <5% or 5-10%."""
    from scripts.snapshot_sources import spot_advisor

    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path / "nothing"))
    doc = json.loads(spot_advisor.STORED.read_text())
    labels = {r["index"]: r["label"] for r in doc["ranges"]}
    calm = {(t, region): labels[e["r"]] for region, v in doc["spot_advisor"].items()
            for t, e in v["Linux"].items() if labels[e["r"]] in ("<5%", "5-10%")}  # fmt: skip
    rows = _json(capsys, "--gpu", "L4", "--spot", "--max-interruption", "10")
    assert rows
    assert all(r["interruption"] in ("<5%", "5-10%") for r in rows)
    assert all(calm[(r["instance_name"], r["location"])] == r["interruption"] for r in rows)
    every = _json(capsys, "--gpu", "L4", "--spot", "--max-interruption", "100")
    assert {(r["instance_name"], r["location"]) for r in rows} == {
        (r["instance_name"], r["location"])
        for r in every
        if (r["instance_name"], r["location"]) in calm
    }
