"""Price history and catalog diffs end to end: three versions built by `gpuhunt catalog build`
from Lambda's recorded offers (what its collector makes of `scripts/replay/replay_lambdalabs`)
with changes made up for the test on top (a price cut, an offer removed, a new region),
published to a moto S3 server on 127.0.0.1 and read back over HTTP."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from gpuhunt import Catalog, CatalogError, CatalogIntegrityError
from gpuhunt._internal import errors
from gpuhunt._internal.formats import archive
from gpuhunt._internal.formats.csv import csv_bytes, write_csv_file
from gpuhunt._internal.history import api
from gpuhunt._internal.history import remote as tracking
from gpuhunt._internal.history import table as history
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.publish.verify import verify
from tests._internal.pipeline import Bucket, build, gpuhunt, publish
from tests.helpers import folder_transport, serve_directory

V1, V2, V3 = "20261129-1", "20261130-1", "20261201-1"
DAYS = {V1: "2026-11-29", V2: "2026-11-30", V3: "2026-12-01"}
CUT = ("gpu_1x_h100_sxm5", "us-east-1", 4.29, 3.99)
REMOVED = ("gpu_8x_a100", "me-west-1", 15.92)
NEW_REGION = ("gpu_1x_h100_sxm5", "us-east-2", 4.29)


def _night(items: list[CatalogItem], version: str) -> list[CatalogItem]:
    out = []
    for i in items:
        if version != V1 and (i.instance_name, i.location) == CUT[:2]:
            assert i.price == CUT[2]
            i = i.__class__(**{**i.__dict__, "price": CUT[3]})
        if version != V1 and (i.instance_name, i.location) == REMOVED[:2]:
            continue
        out.append(i)
    if version == V3:
        model = next(i for i in items if i.instance_name == NEW_REGION[0])
        out.append(model.__class__(**{**model.__dict__, "location": NEW_REGION[1]}))
    return sorted(out, key=lambda i: i.price)


def _collect(folder: Path, items: list[CatalogItem], version: str) -> Path:
    """The CSV a collection left on that night (its mtime is when it was collected)."""
    folder.mkdir(parents=True)
    path = folder / "lambdalabs.csv"
    write_csv_file(_night(items, version), str(path))
    at = dt.datetime.fromisoformat(f"{DAYS[version]}T05:00:00+00:00").timestamp()
    os.utime(path, (at, at))
    return folder


@pytest.fixture
def three_versions(tmp_path, replayed, bucket) -> Bucket:
    lam = replayed["lambdalabs"]
    assert len({(i.instance_name, i.location) for i in lam}) == len(lam)
    previous = None
    for v in (V1, V2, V3):
        build(_collect(tmp_path / f"in-{v}", lam, v), v, tmp_path / v, previous=previous)
        publish(tmp_path / v, bucket)
        previous = bucket.base
    return bucket


def _offer(o: dict[str, Any]) -> tuple[Any, ...]:
    return (o["provider"], o["instance_name"], o["location"])


@pytest.mark.moto
def test_diff_and_history_over_http(three_versions, replayed, tmp_path, capsys):
    b = three_versions
    lam = replayed["lambdalabs"]
    capsys.readouterr()
    assert gpuhunt("catalog", "verify", b.base) == 0
    # 56 offers seen in V1, a new row for the cut price, one for the new region.
    assert (
        f"version {V3}, 1 providers, price history {len(lam) + 2} rows" in capsys.readouterr().out
    )
    keys = b.object_keys()
    for rel in (f"{v}/history.zip" for v in (V1, V2, V3)):
        assert f"v3/{rel}" in keys
    assert f"v3/lambdalabs/{V3}/history.zip" in keys

    # catalog diff, version names at the catalog URL, over HTTP.
    assert gpuhunt("catalog", "diff", V1, V2, "--catalog-url", b.base, "--json") == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["old"], d["new"], d["added"]) == (V1, V2, [])
    assert [_offer(o) + (o["price"],) for o in d["removed"]] == [("lambdalabs", *REMOVED)]
    assert [
        (*_offer(c), c["old_price"], c["new_price"], c["change"], c["percent"])
        for c in d["changed"]
    ] == [("lambdalabs", *CUT, -0.3, -6.99)]
    assert [(g["gpu"], g["removed"], g["decreased"]) for g in d["summary"]] == [
        ("H100", 0, 1),
        ("A100", 1, 0),
    ]
    assert gpuhunt("catalog", "diff", V2, "latest", "--catalog-url", b.base, "--json") == 0
    d = json.loads(capsys.readouterr().out)
    assert d["new"] == V3 and (d["removed"], d["changed"]) == ([], [])
    assert [_offer(o) + (o["price"],) for o in d["added"]] == [("lambdalabs", *NEW_REGION)]

    # The table: the same changes, largest first.
    assert gpuhunt("catalog", "diff", V1, V3, "--catalog-url", b.base) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{V1} -> {V3}: 1 added, 1 removed, 1 price change\n")
    assert "gpu_1x_h100_sxm5  us-east-1  on-demand  1xH100  $4.29  $3.99  -$0.30  -7.0%" in out
    # On a 62-column terminal the least important columns go first (CHANGE, OLD, SPOT).
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "62")
        assert gpuhunt("catalog", "diff", V1, V3, "--catalog-url", b.base) == 0
    narrow = capsys.readouterr().out.splitlines()
    assert [x for x in narrow if len(x) > 62] == []
    assert "lambdalabs  gpu_1x_h100_sxm5  us-east-1  1xH100  $3.99  -7.0%" in narrow

    # gpuhunt.diff() on a base URL (its latest) and a local build folder.
    import gpuhunt as package

    py = package.diff(str(tmp_path / V1), b.base)
    assert [(c.offer.location, c.old_price, c.new_price) for c in py.changed] == [CUT[1:]]
    assert [o.location for o in py.added] == [NEW_REGION[1]]
    assert [o.location for o in py.removed] == [REMOVED[1]]

    # history, per GPU model: cheapest price per GPU per day.
    assert gpuhunt("history", "--catalog-url", b.base, "--provider", "lambdalabs", "--json") == 0
    h = json.loads(capsys.readouterr().out)
    assert h["days"] == list(DAYS.values()) and h["version"] == V3
    assert [(s["name"], s["prices"]) for s in h["series"]] == [
        ("A10", [0.75, 0.75, 0.75]),
        ("A100", [1.99, 1.99, 1.99]),
        ("H100", [4.29, 3.99, 3.99]),
    ]
    assert h["series"][2]["where"][1] == "lambdalabs/gpu_1x_h100_sxm5/us-east-1"

    # Per instance, one region: the removed offer stops after the first day.
    assert (
        gpuhunt(
            "history",
            "--catalog-url",
            b.base,
            "--by",
            "instance",
            "--location",
            REMOVED[1],
            "--csv",
        )
        == 0
    )
    rows = capsys.readouterr().out.splitlines()
    a100 = [r for r in rows if r.startswith(f"lambdalabs/{REMOVED[0]},")]
    assert a100 == [
        f"lambdalabs/{REMOVED[0]},{DAYS[V1]},{REMOVED[2]},lambdalabs/{REMOVED[0]}/{REMOVED[1]}"
    ]
    # The new region has offers from the day it appeared.
    got = Catalog(catalog_url=b.base).history(location=NEW_REGION[1], by="instance")
    assert got.days == [dt.date(2026, 12, 1)]
    assert [(s.name, s.prices) for s in got.series] == [(f"lambdalabs/{NEW_REGION[0]}", [4.29])]
    since = Catalog(catalog_url=b.base).history(gpu_name="h100", since="2026-11-30")
    assert [(s.name, s.prices) for s in since.series] == [("H100", [3.99, 3.99])]

    # The table with its sparkline, and the plot: one line per instance with an H100.
    plot_file = tmp_path / "h100.png"
    argv = ["history", "--catalog-url", b.base, "--gpu", "H100", "--by", "instance"]
    assert gpuhunt(*argv, "--plot", plot_file) == 0
    captured = capsys.readouterr()
    assert f"wrote {plot_file}: 2 lines" in captured.err
    lines = captured.out.splitlines()
    assert lines[0].split() == [
        "INSTANCE",
        "FIRST",
        "LAST",
        "MIN",
        "MAX",
        "CHANGE",
        "CHEAPEST",
        "PER",
        "DAY",
        "LAST",
        "AT",
    ]
    assert lines[1].split() == [
        "lambdalabs/gpu_1x_h100_sxm5",
        "$4.29",
        "$3.99",
        "$3.99",
        "$4.29",
        "-7.0%",
        "█▁▁",
        "lambdalabs/gpu_1x_h100_sxm5/us-east-1",
    ]
    assert lines[2].split() == [
        "lambdalabs/gpu_8x_h100_sxm5",
        "$35.92",
        "$35.92",
        "$35.92",
        "$35.92",
        "+0.0%",
        "▄▄▄",
        "lambdalabs/gpu_8x_h100_sxm5/asia-northeast-1",  # every region at $35.92: the first
    ]
    assert plot_file.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from gpuhunt._internal.history import plot

    h100 = Catalog(catalog_url=b.base).history(gpu_name="H100", by="instance")
    fig = plot.save(h100, tmp_path / "again.svg")
    assert [ln.get_label() for ln in fig.axes[0].get_lines()] == [
        "lambdalabs/gpu_1x_h100_sxm5",
        "lambdalabs/gpu_8x_h100_sxm5",
    ]
    assert (tmp_path / "again.svg").read_text().lstrip().startswith("<?xml")


@pytest.mark.moto
def test_history_in_the_per_provider_layout_and_from_the_disk_cache(three_versions, tmp_path):
    b = three_versions
    b.delete("version")  # read the layout gpuhunt 0.1.x reads
    got = tracking.fetch_history(b.base, cache=None)
    assert got.version == V3 and list(got.tables) == ["lambdalabs"]

    # Served from a folder over plain HTTP; then the server is gone: the disk cache answers.
    mirror = tmp_path / "mirror"
    shutil.copytree(tmp_path / V3, mirror)
    with serve_directory(mirror) as (url, requests):
        first = Catalog(catalog_url=url).history(gpu_name="H100")
        assert f"/{V3}/history.zip" in requests
        again = Catalog(catalog_url=url).history(gpu_name="H100")
        assert requests.count(f"/{V3}/history.zip") == 1  # cached by version
    offline = Catalog(catalog_url=url, retries=0).history(gpu_name="H100")
    assert offline.series == first.series == again.series
    assert offline.series[0].prices == [4.29, 3.99, 3.99]


def test_missing_history_is_a_clear_message(tmp_path, replayed, capsys, monkeypatch):
    legacy = tmp_path / "legacy"  # as gpuhunt 0.1.x's pipeline publishes: no manifest
    (legacy / "lambdalabs" / "20250101").mkdir(parents=True)
    (legacy / "lambdalabs" / "20250101" / "catalog.zip").write_bytes(
        archive.write_archive({"lambdalabs": csv_bytes(replayed["lambdalabs"])}, {})
    )
    (legacy / "lambdalabs" / "version").write_text("20250101")
    assert gpuhunt("history", "--catalog-url", legacy) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"gpuhunt: error: Catalog 20250101 at {legacy} has no price history (it was built "
        "before `gpuhunt catalog build` kept one, or by gpuhunt 0.1.x)"
    ]
    with pytest.raises(errors.HistoryUnavailable):
        Catalog(catalog_url=str(legacy)).history()
    # A path the user gave that is not there is theirs to fix (issue 40): 2.
    assert gpuhunt("history", "--catalog-url", tmp_path / "nothing") == 2
    assert capsys.readouterr().err.startswith("gpuhunt: error: The catalog folder ")
    with serve_directory(tmp_path / "nothing-here") as (url, _):
        pass
    assert gpuhunt("history", "--catalog-url", url) == 1  # nothing listening, nothing cached
    assert "Price history is unavailable" in capsys.readouterr().err
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(tmp_path))
    assert gpuhunt("history") == 1
    assert "plain CSVs, which have no price history" in capsys.readouterr().err
    monkeypatch.delenv("GPUHUNT_CATALOG_DIR")
    assert gpuhunt("history", "--catalog-url", legacy, "--since", "yesterday") == 2
    assert "Not a date: 'yesterday'" in capsys.readouterr().err
    assert gpuhunt("catalog", "diff", "nope!", "latest") == 2
    assert "'nope!' is not a folder, zip file, URL or catalog version" in capsys.readouterr().err


def _lambda_build(tmp_path: Path, replayed, version: str, previous: str | None, name: str) -> Path:
    build(
        _collect(tmp_path / f"in-{name}", replayed["lambdalabs"], version),
        version,
        tmp_path / name,
        previous=previous,
    )
    return tmp_path / name


def test_build_carries_history_and_verify_checks_it(tmp_path, replayed, capsys):
    one = _lambda_build(tmp_path, replayed, V1, None, "one")
    two = _lambda_build(tmp_path, replayed, V2, str(one), "two")
    # The first build of a catalog without history starts it; the next one carries it on.
    spans = tracking.fetch_history(str(two)).spans()["lambdalabs"]
    assert sorted(s.from_version for s in spans).count(V1) == len(replayed["lambdalabs"])
    assert {(s.location, s.from_version, s.to_version) for s in spans if s.price == CUT[3]} == {
        (CUT[1], V2, V2)
    }

    # A history that does not match the manifest: verify names it; the next build starts the
    # history again rather than stop, says so, and publishes the unreadable object aside.
    rel = f"{V2}/history.zip"
    good = (two / rel).read_bytes()
    table = archive.read_archive(good).csvs["lambdalabs"]
    forged = table.replace(b",3.99,", b",3.49,")
    (two / rel).write_bytes(history.pack({"lambdalabs": forged}, V2))
    with pytest.raises(
        CatalogIntegrityError, match=f"{rel}: lambdalabs.csv does not match history_sha256"
    ):
        verify(str(two))
    capsys.readouterr()
    args = ["catalog", "build", "--input", tmp_path / "in-one", "--version", V3, "--previous", two]
    assert gpuhunt(*args, "--output", tmp_path / "three") == 0
    out = capsys.readouterr().out
    assert (
        f"history: the price history starts again with this version: the price history of {V2} could not be read"
        in out
    )
    checked = verify(str(tmp_path / "three"))
    assert checked.history_rows == len(replayed["lambdalabs"])
    reset = checked.manifest["history_reset"]
    assert reset["previous_version"] == V2 and "does not match history_sha256" in reset["reason"]
    assert reset["kept_as"].startswith(f"{V3}/history-unreadable-{V2}-")
    assert (tmp_path / "three" / reset["kept_as"]).read_bytes() == (two / rel).read_bytes()
    assert gpuhunt(*args, "--output", tmp_path / "four", "--reset-history") == 0
    assert verify(str(tmp_path / "four")).manifest["history_reset"] == {
        "reason": "--reset-history",
        "previous_version": V2,
    }

    # A history whose current rows are not the catalog's offers is caught too.
    (two / rel).write_bytes(good)
    manifest_entry = verify(str(two)).manifest["providers"]["lambdalabs"]
    assert manifest_entry["history_rows"] == len(replayed["lambdalabs"]) + 1
    problem = history.check(
        history.loads(forged), history.offers_of(_csv_of(two, V2), "lambdalabs"), V2
    )
    assert problem is not None and "$3.99 in the catalog but $3.49 in its history" in problem


def _csv_of(folder: Path, version: str) -> bytes:
    return archive.read_archive((folder / version / "catalog.zip").read_bytes()).csvs["lambdalabs"]


def test_carried_over_provider_keeps_its_history(tmp_path, replayed):
    one = _lambda_build(tmp_path, replayed, V1, None, "one")
    (tmp_path / "empty").mkdir()
    build(tmp_path / "empty", V2, tmp_path / "two", previous=str(one))  # Lambda's collection failed
    got = tracking.fetch_history(str(tmp_path / "two"))
    assert got.entries["lambdalabs"]["status"] == "carried_over"
    assert got.tables == tracking.fetch_history(str(one)).tables
    assert verify(str(tmp_path / "two")).history_rows == len(replayed["lambdalabs"])


def test_plot_without_matplotlib_is_a_one_line_hint(tmp_path, replayed, capsys, monkeypatch):
    one = _lambda_build(tmp_path, replayed, V1, None, "one")
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *a, **kw):
        if name.startswith("matplotlib"):
            raise ImportError(f"No module named {name!r}", name=name)
        return real_import(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    capsys.readouterr()
    assert gpuhunt("history", "--catalog-url", one, "--plot", tmp_path / "x.png") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "gpuhunt: error: Plotting needs matplotlib, which is not installed: "
        "pip install 'gpuhunt[plot]'"
    ]
    monkeypatch.setattr(builtins, "__import__", real_import)
    assert gpuhunt("history", "--catalog-url", one, "--plot", tmp_path / "x.jpg") == 2
    assert "writes .png or .svg files" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_history_of_some_providers_downloads_only_theirs(tmp_path, replayed, capsys):
    folder = _collect(tmp_path / "in", replayed["lambdalabs"], V1)
    other = next(p for p in replayed if p != "lambdalabs")
    write_csv_file(replayed[other], str(folder / f"{other}.csv"))
    build(folder, V1, tmp_path / "out")
    with serve_directory(tmp_path / "out") as (url, requests):
        got = Catalog(catalog_url=url).history(provider="lambdalabs", by="instance")
        assert {s.name.split("/")[0] for s in got.series} == {"lambdalabs"}
        assert f"/lambdalabs/{V1}/history.zip" in requests
        assert f"/{V1}/history.zip" not in requests and f"/{other}/{V1}/history.zip" not in requests
        both = Catalog(catalog_url=url).history(by="instance")
        assert {s.name.split("/")[0] for s in both.series} == {"lambdalabs", other}
        assert f"/{V1}/history.zip" in requests
    capsys.readouterr()
    assert gpuhunt("history", "--catalog-url", tmp_path / "out", "--provider", "vastai") == 1
    assert "vastai is queried live" in capsys.readouterr().err


def test_diff_of_a_zip_and_a_csv_folder_and_a_partial_catalog(tmp_path, replayed, capsys):
    one = _lambda_build(tmp_path, replayed, V1, None, "one")
    later = _collect(tmp_path / "csvs", replayed["lambdalabs"], V2)
    d = api.diff(str(one / V1 / "catalog.zip"), str(later))
    assert d.old == f"{V1} ({one / V1 / 'catalog.zip'})" and d.new == str(later)
    assert [(c.offer.location, c.old_price, c.new_price) for c in d.changed] == [CUT[1:]]
    assert [o.location for o in d.removed] == [REMOVED[1]] and d.added == []

    # A catalog with a provider that failed to load would show its offers as all removed.
    other = next(p for p in replayed if p != "lambdalabs")
    write_csv_file(replayed[other], str(later / f"{other}.csv"))
    build(later, V2, tmp_path / "two")
    (tmp_path / "two" / "version").unlink()  # read in the per-provider layout
    (tmp_path / "two" / other / V2 / "catalog.zip").write_bytes(b"not a zip")
    capsys.readouterr()
    assert gpuhunt("catalog", "diff", one, tmp_path / "two") == 1
    err = capsys.readouterr().err
    assert err.startswith("gpuhunt: error: Cannot compare ") and f"{other}/{V2}/catalog.zip" in err


def test_a_published_table_that_does_not_parse_is_refused(tmp_path, replayed, capsys):
    """Its sha256 matches the manifest (it was published that way), but it is not a history."""
    one = _lambda_build(tmp_path, replayed, V1, None, "one")
    bad = b"instance_name,price\ngpu_1x_a10,0.75\n"
    for rel in (f"{V1}/catalog.zip", f"lambdalabs/{V1}/catalog.zip"):
        got = archive.read_archive((one / rel).read_bytes())
        manifest = got.manifest or {}
        manifest["providers"]["lambdalabs"]["history_sha256"] = archive.sha256(bad)
        (one / rel).write_bytes(archive.write_archive(got.csvs, manifest, got.columns))
        (one / rel.replace("catalog.zip", "history.zip")).write_bytes(
            history.pack({"lambdalabs": bad}, V1)
        )
    capsys.readouterr()
    assert gpuhunt("catalog", "verify", one) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1 and "history.zip: lambdalabs.csv: header is not the history format" in err[0]
    )
    assert gpuhunt("history", "--catalog-url", one) == 1
    assert "the lambdalabs history of 20261129-1: header is not" in capsys.readouterr().err
    args = ["catalog", "build", "--input", tmp_path / "in-one", "--version", V2, "--previous", one]
    assert gpuhunt(*args, "--output", tmp_path / "two") == 0
    assert "header is not the history format" in capsys.readouterr().out
    manifest = verify(str(tmp_path / "two")).manifest
    assert "header is not the history format" in manifest["history_reset"]["reason"]


def test_history_follows_the_catalogs_settings_not_the_environment(tmp_path, replayed, monkeypatch):
    """`Catalog.history()` loads by the catalog's rules: its settings (not the environment read
    again: GPUHUNT_CATALOG_DIR set, a catalog made with catalog_dir=None still has a history),
    its transport, `allow_http` and the size cap."""
    out = _lambda_build(tmp_path, replayed, V1, None, "out")
    monkeypatch.setenv("GPUHUNT_CATALOG_DIR", str(tmp_path))
    with pytest.raises(errors.HistoryUnavailable, match="plain CSVs"):
        Catalog().history()  # the environment, read by the catalog it made
    settings = Settings(allow_http=True, cache_dir=tmp_path / "cache")
    mock = folder_transport(out)
    got = Catalog(settings=settings, catalog_url="http://catalog.test/v3", transport=mock).history(
        gpu_name="H100"
    )
    assert got.version == V1 and got.series and got.series[0].prices == [4.29]
    assert mock.paths == ["/v3/version", f"/v3/{V1}/catalog.zip", f"/v3/{V1}/history.zip"]
    assert [r.url for r in mock.requests][0] == "http://catalog.test/v3/version"

    # Plain http is refused as a catalog load refuses it, unless the settings allow it.
    with pytest.raises(CatalogError, match="Refusing plain-http catalog URL"):
        Catalog(
            settings=Settings(cache_dir=tmp_path / "c2"),
            catalog_url="http://catalog.test/v3",
            transport=folder_transport(out),
        ).history()
    # The size cap of catalog downloads holds for history objects too.
    small = Settings(cache_dir=tmp_path / "c3", max_download_bytes=100)
    with pytest.raises(CatalogError, match="over the 100-byte cap"):
        Catalog(
            settings=small, catalog_url="https://catalog.test/v3", transport=folder_transport(out)
        ).history()
