"""`python -m gpuhunt PROVIDER --output FILE`, run in the caller's process (tests, a workflow
step calling `main`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import responses

from gpuhunt._internal import cli
from gpuhunt.providers.lium import NODES_URL

DATA = Path(__file__).parents[2] / "providers" / "data" / "lium"


@responses.activate
def test_collecting_logs_its_progress_and_leaves_the_root_logger_as_it_was(tmp_path, caplog):
    body = json.loads((DATA / "public_v1_nodes_2026-09-10_trimmed.json").read_text())
    responses.get(NODES_URL, json=body)
    root = logging.getLogger()
    before = root.level
    root.setLevel(logging.ERROR)
    try:
        with caplog.at_level(logging.INFO, logger="gpuhunt"):
            assert cli.main(["lium", "--output", str(tmp_path / "lium.csv")]) == 0
        assert root.level == logging.ERROR
    finally:
        root.setLevel(before)
    assert any("offers to" in r.getMessage() for r in caplog.records)
    assert (tmp_path / "lium.csv").exists()


@responses.activate
def test_a_failed_collection_also_restores_gpuhunt_s_logger(tmp_path):
    responses.get(NODES_URL, status=503)
    gpuhunt_log, root = logging.getLogger("gpuhunt"), logging.getLogger()
    before = (gpuhunt_log.level, root.level)
    assert cli.main(["lium", "--output", str(tmp_path / "lium.csv")]) == 1
    assert (gpuhunt_log.level, root.level) == before


class _WithTables:
    """A collector with tables beside its offers (the AWS collector's terms and bands)."""

    def __init__(self, tables):
        self.tables = tables

    def with_session(self, session):
        return self

    def get(self, apply_filter=True):
        return []

    def extra_tables(self):
        return self.tables


def test_extra_tables_are_written_beside_the_csv_which_is_unchanged(tmp_path, monkeypatch):
    from gpuhunt._internal import registry

    tables = {".terms": b"terms\n", ".interruption": b"bands\n"}
    fake = type("Fake", (), {"from_env": classmethod(lambda cls: _WithTables(tables))})
    monkeypatch.setattr(registry, "provider_class", lambda name: fake)
    assert cli.main(["aws", "--output", str(tmp_path / "aws.csv"), "--no-filter"]) == 0
    assert (tmp_path / "aws.terms").read_bytes() == b"terms\n"
    assert (tmp_path / "aws.interruption").read_bytes() == b"bands\n"
    plain = tmp_path / "plain"
    plain.mkdir()
    fake_plain = type("Plain", (), {"from_env": classmethod(lambda cls: _WithTables({}))})
    monkeypatch.setattr(registry, "provider_class", lambda name: fake_plain)
    assert cli.main(["aws", "--output", str(plain / "aws.csv"), "--no-filter"]) == 0
    assert (plain / "aws.csv").read_bytes() == (tmp_path / "aws.csv").read_bytes()
    assert not any(p.name.endswith((".terms", ".interruption")) for p in plain.iterdir())
