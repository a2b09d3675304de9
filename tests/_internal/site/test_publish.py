"""`gpuhunt catalog publish-site` against a moto S3 server on 127.0.0.1: the page and its data
under `{prefix}/site/`, the page uploaded last, and the site readable over HTTP as a browser
reads it."""

from __future__ import annotations

import pytest
import requests

from gpuhunt._internal.cli import main as gpuhunt_main
from gpuhunt._internal.formats.csv import write_csv_file
from tests.helpers import item


@pytest.mark.moto
def test_publish_site_uploads_data_then_the_page(tmp_path, bucket, capsys):
    (tmp_path / "csv").mkdir()
    write_csv_file(
        [item("aws", price=1.5), item("aws", location="eu-west-1", price=1.75)],
        str(tmp_path / "csv" / "aws.csv"),
    )
    assert (
        gpuhunt_main(
            ["catalog", "site", str(tmp_path / "site"), "--catalog", str(tmp_path / "csv")]
        )
        == 0
    )
    calls = []
    real_put = bucket.client.put_object

    def put(**kw):
        calls.append(kw["Key"])
        return real_put(**kw)

    bucket.client.put_object = put
    from gpuhunt._internal.site.publish import publish_site

    keys = publish_site(tmp_path / "site", bucket.name, "v3", client=bucket.client)
    assert keys == calls == ["v3/site/offers.json", "v3/site/offers.js", "v3/site/index.html"]
    page = requests.get(f"{bucket.endpoint}/{bucket.name}/v3/site/index.html", timeout=10)
    assert page.headers["Content-Type"].startswith("text/html")
    assert "offers.js?v=" in page.text
    data = requests.get(f"{bucket.endpoint}/{bucket.name}/v3/site/offers.json", timeout=10).json()
    assert data["offers"]["price"] == [1.5, 1.75]


@pytest.mark.moto
def test_publish_site_refuses_a_folder_that_is_not_a_site(tmp_path, bucket, capsys):
    assert gpuhunt_main(["catalog", "publish-site", str(tmp_path), "--bucket", bucket.name]) == 1
    assert (
        "is not a written site: offers.json, offers.js, index.html missing"
        in capsys.readouterr().err
    )


def test_catalog_site_offline_falls_back_as_query_does_and_shows_every_provider(
    tmp_path, monkeypatch, capsys, caplog
):
    # Nothing listens at the catalog URL: `gpuhunt query` answers from the bundled snapshot,
    # and so does `gpuhunt catalog site`, with every provider the query answers with.
    import json
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", f"http://127.0.0.1:{port}/v3")
    monkeypatch.setenv("GPUHUNT_LOAD_TIMEOUT", "5")
    argv = ["query", "--json", "--all-regions", "--limit", "100000", "--include", "all"]
    assert gpuhunt_main(argv) == 0  # the page holds every offer; it shows rentable ones first
    answered = {o["provider"] for o in json.loads(capsys.readouterr().out)}
    assert gpuhunt_main(["catalog", "site", str(tmp_path / "site"), "--no-history"]) == 0
    assert "(bundled)" in capsys.readouterr().out
    assert "using the snapshot bundled with gpuhunt" in caplog.text
    page = json.loads((tmp_path / "site" / "offers.json").read_text())
    assert (
        set(page["providers"]) == answered and len(answered) == 14
    )  # Vast.ai is not in the snapshot
    # A catalog named on the command line is that catalog or an error, not a stand-in.
    url = f"http://127.0.0.1:{port}/v3"
    assert gpuhunt_main(["catalog", "site", str(tmp_path / "s2"), "--catalog", url]) == 1
