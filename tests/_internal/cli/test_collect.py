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
