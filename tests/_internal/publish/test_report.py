"""The build's summary and alerts (`publish/report.py`), the staleness limits in the registry,
and the collection time the collector writes beside its CSV (`python -m gpuhunt P --output`)."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from gpuhunt._internal import registry
from gpuhunt._internal.publish import files, report

ROOT = Path(__file__).resolve().parents[3]
NOW = dt.datetime(2026, 12, 1, 12, 17, tzinfo=dt.timezone.utc)


def entry(status: str, hours_old: float, **kw: Any) -> dict[str, Any]:
    when = (NOW - dt.timedelta(hours=hours_old)).isoformat()
    return {"status": status, "rows": 10, "collected_at": when, "from_version": "v1", **kw}


def test_stale_limits_come_from_the_registry():
    assert registry.spec("gcp").stale_limit_hours == 72  # 3x its daily cadence
    assert registry.spec("lambdalabs").stale_limit_hours == 18
    assert registry.spec("runpod").stale_limit_hours == 12  # hourly: 12, not 3
    assert all(registry.spec(p).stale_limit_hours > 0 for p in registry.OFFLINE_PROVIDERS)


def test_the_summary_says_fresh_carried_over_refused_pending_and_stale():
    manifest = {
        "version": "20261201-9",
        "built_at": NOW.isoformat(),
        "providers": {
            "aws": entry("fresh", 0.5),
            "gcp": entry(
                "carried_over",
                71,
                reason="implausible next to the previous CSV: 1 region vanished: x",
                pending={"collections": [{}, {}], "confirmations": 3},
            ),
            "lambdalabs": entry("carried_over", 19, reason="no CSV was collected"),
            "verda": entry(
                "fresh", 0.1, accepted_despite="offers dropped", accepted_by="the maintainer"
            ),
        },
        "history_reset": {"reason": "corrupt", "kept_as": "20261201-9/history-unreadable.zip"},
    }
    r = report.build_report(manifest, NOW)
    assert [p.provider for p in r.stale] == ["lambdalabs"]  # 19h > 18h; GCP's 71h < 72h
    assert r.problems == [
        "gcp refused: implausible next to the previous CSV: 1 region vanished: x",
        "lambdalabs is stale: its data is 19h old (limit 18h), carried over from v1: no CSV "
        "was collected",
        "the price history starts again with this version: corrupt; the unreadable file is "
        "kept as 20261201-9/history-unreadable.zip",
    ]
    text = report.markdown(r)
    assert text.splitlines()[:3] == [
        "## Catalog 20261201-9",
        "",
        "**Stale: lambdalabs** (carried over longer than the limit)",
    ]
    lines = {line.split(" | ")[0].strip("| "): line for line in text.splitlines()}
    assert lines["aws"].startswith("| aws | fresh | 10 | 2026-12-01T11:47:00+00:00 | 30m | 72h |")
    assert "| gcp | carried over |" in lines["gcp"] and "2 of 3 collections" in lines["gcp"]
    assert "| lambdalabs | STALE | 10 |" in lines["lambdalabs"]
    assert "accepted by the maintainer: offers dropped" in lines["verda"]
    assert "**History:** the price history starts again" in text
    assert r.to_json()["stale"] == ["lambdalabs"]
    # Data of unknown age that is carried over counts as stale: nobody can say it is not.
    unknown = {"version": "v", "providers": {"aws": {"status": "carried_over", "rows": 1}}}
    assert [p.provider for p in report.build_report(unknown, NOW).stale] == ["aws"]


def test_the_job_summary_is_appended(tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    r = report.build_report({"version": "v", "providers": {"aws": entry("fresh", 0)}}, NOW)
    report.write(r, tmp_path / "file.md")
    assert summary.read_text() == "earlier step\n" + report.markdown(r) + "\n"
    assert (tmp_path / "file.md").read_text() == report.markdown(r)


def test_a_webhook_that_does_not_answer_is_a_message_not_an_error():
    r = report.build_report({"version": "v", "providers": {}}, NOW)
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert report.post(f"http://127.0.0.1:{port}/hook", r, timeout=(2, 2)) == "ConnectionError"


# --------------------------------------------------------------------------- collection time


def test_read_input_takes_the_collectors_start_time(tmp_path, caplog):
    (tmp_path / "aws.csv").write_bytes(b"x")
    (tmp_path / "aws.csv.meta.json").write_text(
        json.dumps({"provider": "aws", "started_at": "2026-12-01T10:00:00.5Z"})
    )
    (tmp_path / "gcp.csv").write_bytes(b"x")
    (tmp_path / "gcp.csv.meta.json").write_text(json.dumps({"provider": "aws", "started_at": "x"}))
    (tmp_path / "oci.csv").write_bytes(b"x")
    os.utime(tmp_path / "oci.csv", (1764583200, 1764583200))  # 2025-12-01T10:00:00Z
    got = files.read_input(tmp_path)
    assert got["aws"].collected_at == "2026-12-01T10:00:00+00:00"
    # A side file that is not this provider's, or not readable, falls back to the file time.
    assert (
        got["gcp"].collected_at
        == dt.datetime.fromtimestamp((tmp_path / "gcp.csv").stat().st_mtime, dt.timezone.utc)
        .replace(microsecond=0)
        .isoformat()
    )
    assert "Ignoring" in caplog.text and "gcp.csv.meta.json" in caplog.text
    assert got["oci"].collected_at == "2025-12-01T10:00:00+00:00"


class _CloudRift(http.server.BaseHTTPRequestHandler):
    """CloudRift's listing on 127.0.0.1, answering the recorded-from-docs payload."""

    def do_POST(self) -> None:  # noqa: N802 - the http.server API
        from scripts.replay import replay_cloudrift

        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps(replay_cloudrift.load()).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.subprocess
def test_the_collector_writes_its_start_time_beside_the_csv(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CloudRift)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUHUNT_")}
    env.update(
        CLOUDRIFT_SERVER_ADDRESS=f"http://127.0.0.1:{server.server_address[1]}",
        NO_PROXY="127.0.0.1",
        no_proxy="127.0.0.1",
    )
    before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    try:
        out = subprocess.run(
            [sys.executable, "-m", "gpuhunt", "cloudrift", "--output", "cloudrift.csv"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert out.returncode == 0, out.stderr[-2000:]
    meta = json.loads((tmp_path / "cloudrift.csv.meta.json").read_text())
    assert set(meta) == {"provider", "started_at", "gpuhunt_version"}
    assert meta["provider"] == "cloudrift"
    started = dt.datetime.fromisoformat(meta["started_at"])
    assert before <= started <= dt.datetime.now(dt.timezone.utc)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "cloudrift.csv",
        "cloudrift.csv.meta.json",
    ]
    assert files.read_input(tmp_path)["cloudrift"].collected_at == meta["started_at"]
