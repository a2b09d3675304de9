import json
import os
import subprocess
import sys

import pytest

from gpuhunt._internal import cli, registry
from gpuhunt._internal.cli import query as cli_query
from gpuhunt._internal.formats.csv import csv_bytes
from tests.helpers import item, publish_archive, serve_directory


@pytest.fixture
def catalog_dir(tmp_path, monkeypatch):
    publish_archive(
        tmp_path,
        "20261129-1",
        {
            "aws": csv_bytes(
                [
                    item(price=2.0, instance_name="p5.48xlarge", gpu_name="H100", gpu_count=8),
                    item(price=0.5, instance_name="m5.large", gpu_count=0),
                ]
            ),
            "lambdalabs": csv_bytes(
                [item("lambdalabs", price=2.49, instance_name="gpu_1x_h100_pcie", gpu_name="H100")]
            ),
        },
    )
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", str(tmp_path))
    return tmp_path


def test_table(catalog_dir, capsys):
    assert cli.main(["query", "--gpu", "H100"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["PROVIDER", "INSTANCE", "LOCATION", "PRICE/H"]
    assert "p5.48xlarge" in lines[1] and "8xH100 80GB" in lines[1]  # cheapest first
    assert "gpu_1x_h100_pcie" in lines[2]
    assert "2 of 2 offers" in out and "Catalog from" in out


def test_json_sort_and_limit(catalog_dir, capsys):
    assert (
        cli.main(["query", "--gpu", "h100", "--json", "--sort", "price-per-gpu", "--limit", "1"])
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert [d["instance_name"] for d in data] == ["p5.48xlarge"] and data[0][
        "price_per_gpu"
    ] == 0.25


def test_csv_output(catalog_dir, capsys):
    assert cli.main(["query", "--max-price", "1", "--csv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("provider,instance_name") and "m5.large" in out[1]


@pytest.mark.parametrize(
    "args, message",
    [
        (["query", "--provider", "nosuch"], "Unknown provider: 'nosuch'"),
        (["query", "--gpu", "H1OO"], "did you mean H100"),
    ],
)
def test_errors_are_one_line(catalog_dir, capsys, args, message):
    assert cli.main(args) == 2  # bad input
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_collector_missing_sdk_hint(monkeypatch, capsys):
    import builtins

    real_import = builtins.__import__

    def no_boto3(name, *a, **kw):
        if name.startswith("boto3"):
            raise ImportError("No module named 'boto3'", name="boto3")
        return real_import(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_boto3)
    monkeypatch.delitem(sys.modules, "gpuhunt.providers.aws", raising=False)
    assert cli.main(["aws", "--output", "/tmp/x.csv"]) == 2  # the user's to fix: pip install
    assert "pip install 'gpuhunt[aws]'" in capsys.readouterr().err


@pytest.mark.subprocess
def test_python_m_gpuhunt_runs(catalog_dir):
    out = subprocess.run(
        [sys.executable, "-m", "gpuhunt", "query", "--max-price", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and "m5.large" in out.stdout


def test_catalog_status_and_providers(catalog_dir, capsys):
    assert cli.main(["catalog", "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["version"] == "20261129-1" and status["source"] == "directory"
    assert status["offers"] == {"aws": 2, "lambdalabs": 1} and status["last_error"] is None
    assert cli.main(["providers"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("aws") and "gpuhunt[aws]" in line for line in lines)
    assert len(lines) == len(registry.PROVIDERS)


def test_every_query_filter_field_is_a_query_option():
    import argparse
    import dataclasses

    from gpuhunt import QueryFilter

    parser = argparse.ArgumentParser()
    cli_query.arguments(parser)
    args = parser.parse_args([])
    assert {f.name for f in dataclasses.fields(QueryFilter)} <= set(vars(args))


def test_catalog_alone_shows_the_catalog_subcommands(capsys):
    assert cli.main(["catalog"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("usage: gpuhunt catalog")
    assert all(name in out for name in ("status", "build", "publish", "verify", "diff"))


@pytest.mark.subprocess
def test_a_command_imports_only_what_it_runs():
    # Only the command run is imported to build the parser; what running it needs is imported
    # in its `run`, so `gpuhunt providers` loads no other command, catalog, engine (numpy),
    # history, build pipeline, site or SDK.
    code = (
        "import sys\n"
        "from gpuhunt._internal import cli\n"
        "assert cli.main(['providers']) == 0\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(out.splitlines()[-1].split())
    assert "gpuhunt._internal.cli.providers" in loaded
    assert "gpuhunt._internal.cli.history" not in loaded  # another command: not imported
    heavy = {
        "gpuhunt._internal.catalog",
        "gpuhunt._internal.history.api",
        "gpuhunt._internal.history.plot",
        "gpuhunt._internal.site.build",
        "gpuhunt._internal.publish.run",
        "gpuhunt._internal.publish.build",
        "gpuhunt._internal.load.fetch",
        "numpy",
        "matplotlib",
        "boto3",
    }
    assert heavy & loaded == set()


@pytest.mark.subprocess
def test_a_query_answered_from_the_disk_cache_imports_no_http_library(tmp_path):
    # requests (and the download code) cost a fifth of a warm CLI run: imported only when
    # something is downloaded. The first run downloads; the second answers from the disk cache.
    offers = [item("aws", gpu_name="H100", gpu_count=1, gpu_memory=80.0, price=2.5)]
    publish_archive(tmp_path / "pub", "20261129-1", {"aws": csv_bytes(offers)})
    code = (
        "import sys\n"
        "from gpuhunt._internal import cli\n"
        "assert cli.main(['query', '--gpu', 'H100', '--json']) == 0\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    with serve_directory(tmp_path / "pub") as (url, requested):
        env = dict(os.environ, GPUHUNT_CATALOG_URL=url, GPUHUNT_CACHE_DIR=str(tmp_path / "c"))
        runs = [
            subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            for _ in range(2)
        ]
    first, second = (set(r.stderr.splitlines()[-1].split()) for r in runs)
    assert "requests" in first and "gpuhunt._internal.load.fetch" in first  # it downloaded
    assert {"requests", "urllib3", "gpuhunt._internal.load.fetch"} & second == set()
    assert '"H100"' in runs[1].stdout
    assert len([p for p in requested if p.endswith("catalog.zip")]) == 1


@pytest.mark.subprocess
def test_a_warm_query_reads_only_what_it_answers_from(tmp_path):
    # The second run answers from the disk cache: what it does not need is not imported
    # (explaining, the price history, temporary files, the package's resource files: the
    # table names no offer's country, which --json does) and the
    # bundled snapshot is not opened (no online provider was named). It runs as the program
    # does, with the collector off, and ends at once.
    offers = [item("aws", gpu_name="H100", gpu_count=1, gpu_memory=80.0, price=2.5)]
    publish_archive(tmp_path / "pub", "20261129-1", {"aws": csv_bytes(offers)})
    code = (
        "import atexit, gc, sys, threading\n"
        "from gpuhunt._internal import cli\n"
        "from gpuhunt._internal.load import sources\n"
        "def opened(*a): raise AssertionError('the bundled snapshot was opened')\n"
        "sources.bundled = opened\n"
        "atexit.register(lambda: print(gc.isenabled(), threading.active_count(),"
        " ' '.join(sorted(sys.modules)), file=sys.stderr))\n"
        "sys.argv = ['gpuhunt', 'query', '--gpu', 'H100', '--limit', '10']\n"
        "cli.run()\n"
    )
    with serve_directory(tmp_path / "pub") as (url, _):
        env = dict(os.environ, GPUHUNT_CATALOG_URL=url, GPUHUNT_CACHE_DIR=str(tmp_path / "c"))
        runs = [
            subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            for _ in range(2)
        ]
    enabled, threads, *names = runs[1].stderr.splitlines()[-1].split()
    loaded = set(names)
    assert enabled == "False"  # the query program's collector is off (`cli.run`)
    assert threads == "1"  # nothing left running (a download, a reload) as it ends
    assert "gpuhunt._internal.catalog" in loaded and "1xH100" in runs[1].stdout
    unneeded = {
        "requests",
        "urllib3",
        "gpuhunt._internal.load.fetch",
        "gpuhunt._internal.explain",
        "gpuhunt._internal.history.daily",
        "importlib.resources",
        "tempfile",
        "zipfile",  # a warm start reads the derived table, no archive
        "typing_extensions",  # an annotation only
        "cachetools",  # the online answers cache, made when an online provider is asked
    }
    assert unneeded & loaded == set()
