"""What a newcomer hit in `gpuhunt query` (issue 37): the grouped view cut in name order, offers
without a TFLOPS figure ranked last unannounced, no "did you mean" for a provider, TPU marketing
names, online-capable providers answered from the catalog, and rows that differ only in price."""

from __future__ import annotations

import json

import pytest

from gpuhunt._internal import cli
from gpuhunt._internal.formats.csv import csv_bytes
from tests.helpers import item, publish_archive

# 60 GPU models in name order before "H100": the default table length (50) cut them all off.
MODELS = [f"A{n:03d}" for n in range(60)]
AWS = [
    *(item(price=0.5, instance_name=f"i-{m}", gpu_name=m, gpu_memory=16.0) for m in MODELS),
    item(price=2.0, instance_name="p5", gpu_name="H100", gpu_memory=80.0),
    item(price=4.0, instance_name="p4d", gpu_name="A100", gpu_memory=80.0),  # 312 TFLOPS
]


@pytest.fixture(autouse=True)
def catalog_dir(tmp_path, monkeypatch):
    publish_archive(tmp_path, "20261129-1", {"aws": csv_bytes(AWS)})
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path))
    return tmp_path


def test_group_by_gpu_shows_every_model_unless_limited(capsys):
    assert cli.main(["query", "--group-by", "gpu"]) == 0
    out = capsys.readouterr().out
    rows = [line.split()[0] for line in out.splitlines()[1:] if line and line[0].isupper()]
    assert "H100" in rows and len(set(rows) & set(MODELS)) == 60
    assert "62 of 62 GPU models and counts, cheapest first, from 62 offers" in out
    # Cut by --limit: the footer's count says it.
    assert cli.main(["query", "--group-by", "gpu", "--limit", "5"]) == 0
    assert (
        "5 of 62 GPU models and counts, cheapest first, from 62 offers" in capsys.readouterr().out
    )
    assert cli.main(["query", "--group-by", "gpu", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 62


def test_a_misspelt_provider_gets_did_you_mean_and_exit_2(capsys):
    assert cli.main(["query", "--provider", "lambda"]) == 2
    err = capsys.readouterr().err
    assert "Unknown provider: 'lambda'; did you mean 'lambdalabs'?" in err
    assert len(err.strip().splitlines()) == 1


def test_online_capable_providers_answered_from_the_catalog_say_online_asks_live(
    tmp_path, capsys, monkeypatch
):
    # Lium: an online provider the bundled snapshot holds (so `--provider lium` offline is a
    # question the catalog's copy can answer).
    lium = [item("lium", instance_name="h100-host", gpu_name="H100", gpu_memory=80.0)]
    publish_archive(
        tmp_path / "other", "20261129-1", {"lium": csv_bytes(lium), "aws": csv_bytes(AWS)}
    )
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path / "other"))
    monkeypatch.setenv("COLUMNS", "1000")
    note = "lium: a copy of its offers (data age above), not asked live; --online asks it."
    assert cli.main(["query", "--provider", "lium"]) == 0
    assert note in capsys.readouterr().out
    assert cli.main(["query", "--gpu", "H100", "--group-by", "gpu"]) == 0
    assert note in capsys.readouterr().out
    # No offer of an online-capable provider in the answer: nothing to say.
    assert cli.main(["query", "--provider", "aws"]) == 0
    assert "not asked live" not in capsys.readouterr().out
