"""What `gpuhunt query` and `gpuhunt providers` print, pinned byte for byte on a copy of the
bundled snapshot (`pinned/snapshot.zip`, src/gpuhunt/resources/catalog.zip as of 2026-12-02,
version in its manifest) so that moving the CLI into a package and its output formats into one
renderer table changes no byte of `--json`, `--csv` or the tables.

The copy, not the package's file: the bundled snapshot is refreshed on its own schedule, and a
new snapshot must not read as a change of output. Small answers are pinned as files in
`pinned/`; the whole catalog's `--json` and `--csv` by length and sha256. Tables are compared
without their footer (the lines after the last blank one), whose data ages depend on today's date (the footer's
wording has its own tests in test_query.py).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from gpuhunt._internal import cli

PINNED = Path(__file__).parent / "pinned"
VERSION = "snapshot-20250306"  # the version its manifest names

# (golden file, argv); the file holds stdout exactly.
SMALL = [
    ("h100.json", ["query", "--gpu", "H100", "--json"]),
    ("lambdalabs.csv", ["query", "--provider", "lambdalabs", "--csv"]),
    (
        "spot-per-gpu.json",
        ["query", "--spot", "--sort", "price-per-gpu", "--limit", "10", "--json"],
    ),
    ("tflops.csv", ["query", "--sort", "tflops-per-dollar", "--limit", "15", "--csv"]),
    ("groups.json", ["query", "--group-by", "gpu", "--json"]),
    ("groups.csv", ["query", "--group-by", "gpu", "--csv"]),
    ("groups-a100.csv", ["query", "--group-by", "gpu", "--gpu", "A100", "--csv"]),
    ("empty.csv", ["query", "--max-price", "0.0001", "--csv"]),
    ("empty.json", ["query", "--max-price", "0.0001", "--json"]),
    ("providers.txt", ["providers"]),
]
# Tables: stdout without the footer lines.
TABLES = [
    ("a100.table", ["query", "--gpu", "A100"]),
    ("per-gpu.table", ["query", "--sort", "price-per-gpu", "--limit", "20"]),
    ("all-regions.table", ["query", "--all-regions", "--gpu", "L4", "--limit", "0"]),
    ("gpu-memory.table", ["query", "--sort", "gpu-memory", "--limit", "12"]),
    ("groups.table", ["query", "--group-by", "gpu", "--limit", "0"]),
    ("cpu-only.table", ["query", "--max-gpu-count", "0", "--limit", "8"]),
]
# The whole catalog: (argv, length, sha256 of stdout). Re-pinned when every offer's
# provider_data gained `observed_at` (observed.py); with the stamp off, the old pins held.
# Re-pinned again when the library's keys left provider_data for fields of their own (issue
# 46): every row's provider_data lost them, the same values moved to their own keys, and the
# new own fields were appended; every other value of every row unchanged (checked row by
# row against the old pins before they were replaced). Re-pinned when `gpu_fraction`,
# `location_source` and `momentary` were appended (issue 48): every row has them empty (this
# catalog predates them), the small pins' rows equal the old ones without them.
WHOLE = [
    (
        ["query", "--json"],
        2368054,
        "61a42cc6514ac5a104c07f4ebb985273697aa81c26d1498aa9b2f3a3d915cd55",
    ),
    (
        ["query", "--csv"],
        395441,
        "67abb797f842ff9c1a132f69e71a4a3d29cf06e353e4114652da08499cdf0625",
    ),
    (
        ["query", "--sort", "gpu-memory", "--json"],
        2368054,
        "3b9a17e79ea4f1db043a7c450e79002121e1b016284d1df60f6f57bc50f03ce5",
    ),
]


@pytest.fixture(autouse=True)
def pinned_catalog(tmp_path, monkeypatch):
    (tmp_path / VERSION).mkdir()
    (tmp_path / VERSION / "catalog.zip").write_bytes((PINNED / "snapshot.zip").read_bytes())
    (tmp_path / "version").write_text(VERSION)
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path))
    monkeypatch.setenv("GPUHUNT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("COLUMNS", raising=False)
    return tmp_path


def _run(capsys, argv: list[str]) -> str:
    capsys.readouterr()
    assert cli.main(argv) == 0
    return capsys.readouterr().out


def _without_footer(text: str) -> str:
    table, _, footer = text.rpartition("\n\n")  # the footer: up to 3 lines after a blank one
    # The footer names the version: the answer came from the copy, not a fallback.
    assert footer[:1].isdigit() and f"(version {VERSION})" in " ".join(footer.split()), footer
    assert len(footer.splitlines()) <= 3
    return table + "\n\n"


@pytest.mark.parametrize(("name", "argv"), SMALL, ids=[n for n, _ in SMALL])
def test_small_answers_are_byte_identical(capsys, name, argv):
    assert _run(capsys, argv).encode("utf-8") == (PINNED / name).read_bytes()


@pytest.mark.parametrize(("name", "argv"), TABLES, ids=[n for n, _ in TABLES])
def test_tables_are_byte_identical(capsys, name, argv):
    assert _without_footer(_run(capsys, argv)).encode("utf-8") == (PINNED / name).read_bytes()


@pytest.mark.parametrize(
    ("argv", "length", "digest"), WHOLE, ids=[" ".join(a) for a, _, _ in WHOLE]
)
def test_whole_catalog_is_byte_identical(capsys, argv, length, digest):
    out = _run(capsys, argv).encode("utf-8")
    assert (len(out), hashlib.sha256(out).hexdigest()) == (length, digest)


def test_the_copy_is_what_the_pins_were_made_from(capsys):
    # A pin made from a catalog with few rows would pin little: the copy has every provider.
    out = _run(capsys, ["query", "--csv"])
    assert out.count("\n") - 1 == 3065


# `--help` of every command at COLUMNS=100, as Python 3.11's argparse writes it (other versions
# lay help out differently: 3.13 lists a short option's metavar once), and `gpuhunt` or
# `gpuhunt catalog` alone (the help, exit 2).
HELP = [
    [],
    ["catalog"],
    ["query"],
    ["providers"],
    ["history"],
    ["catalog", "status"],
    ["catalog", "build"],
    ["catalog", "publish"],
    ["catalog", "verify"],
    ["catalog", "report"],
    ["catalog", "diff"],
    ["catalog", "site"],
    ["catalog", "publish-site"],
    ["serve"],
    ["mcp"],
]


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="pinned with Python 3.11's argparse")
@pytest.mark.parametrize("argv", HELP, ids=[" ".join(["gpuhunt", *a]) for a in HELP])
def test_help_is_byte_identical(capsys, monkeypatch, argv):
    monkeypatch.setenv("COLUMNS", "100")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit:
        cli.main([*argv, "--help"])
    assert exit.value.code == 0
    name = "-".join(["gpuhunt", *argv]) + ".txt"
    assert capsys.readouterr().out.encode() == (PINNED / "help" / name).read_bytes()


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="pinned with Python 3.11's argparse")
@pytest.mark.parametrize("argv", [[], ["catalog"]], ids=["gpuhunt", "gpuhunt catalog"])
def test_a_group_alone_prints_its_help(capsys, monkeypatch, argv):
    monkeypatch.setenv("COLUMNS", "100")
    capsys.readouterr()
    assert cli.main(argv) == 2
    name = "bare-" + "-".join(["gpuhunt", *argv]) + ".txt"
    assert capsys.readouterr().out.encode() == (PINNED / "help" / name).read_bytes()
