"""The catalog page in a real headless Chromium (Debian's `chromium` and `chromium-driver`, which
`.ci/run` installs where missing; nothing is downloaded at run time), driven with Selenium.

The page is built by `gpuhunt catalog site` from two catalog versions made by `gpuhunt catalog
build` (so it has a price history), and served both from `file://` and over real HTTP on
127.0.0.1. What it shows is compared with the library's own answer for the same filters,
collapsed to one row per distinct offer.

The offers are made up for the test (tests/helpers.item), not real prices.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest

from gpuhunt import Catalog
from gpuhunt._internal.cli import main as gpuhunt_main
from gpuhunt._internal.formats.csv import write_csv_file
from gpuhunt._internal.load.settings import Settings
from tests.helpers import item, serve_directory

webdriver = pytest.importorskip("selenium.webdriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
if not (CHROMIUM and CHROMEDRIVER):
    if os.environ.get("CI"):
        # CI installs them (.ci/run): a browser test that silently skips there tests nothing.
        raise RuntimeError(
            "chromium and chromedriver are missing (apt-get install chromium chromium-driver)"
        )
    pytest.skip("chromium / chromedriver not installed", allow_module_level=True)

V1, V2 = "20261130-1", "20261201-1"
DAYS = {V1: "2026-11-30", V2: "2026-12-01"}


def offers(version: str) -> dict[str, list]:
    h100_price = 2.49 if version == V1 else 2.29  # a price cut between the versions
    lam = (
        [
            item(
                "lambdalabs",
                instance_name="gpu_1x_h100_pcie",
                location=loc,
                price=h100_price + d,
                gpu_name="H100",
                gpu_memory=80.0,
                cpu=26,
                memory=200,
                # Lambda's readings (made up): sold out in us-east-1 in V2; Asia unreported.
                available=a,
            )
            for loc, d, a in (
                ("us-east-1", 0.0, version == V1),
                ("europe-central-1", 0.1, True),
                ("asia-northeast-1", 0.2, None),
            )
        ]
        + [
            item(
                "lambdalabs",
                instance_name="gpu_8x_a100_80gb_sxm4",
                location=loc,
                price=p,
                gpu_count=8,
                gpu_name="A100",
                gpu_memory=80.0,
                cpu=240,
                memory=1800,
            )
            for loc, p in (("us-east-1", 14.32), ("us-west-1", 14.52))
        ]
        + [
            item(
                "lambdalabs",
                instance_name="gpu_1x_a10",
                location="us-west-1",
                price=0.75,
                gpu_name="A10",
                gpu_memory=24.0,
                cpu=30,
                memory=200,
            ),
        ]
    )
    aws = (
        [
            item(
                "aws",
                instance_name="p5.48xlarge",
                location=loc,
                price=p,
                gpu_count=8,
                gpu_name="H100",
                gpu_memory=80.0,
                cpu=192,
                memory=2048,
                disk_size=None,
            )
            for loc, p in (("us-east-1", 55.04), ("eu-west-1", 61.3))
        ]
        + [
            item(
                "aws",
                instance_name="p4d.24xlarge",
                location="us-east-1",
                price=p,
                spot=s,
                gpu_count=8,
                gpu_name="A100",
                gpu_memory=40.0,
                cpu=96,
                memory=1152,
            )
            for p, s in ((21.96, False), (9.8, True))
        ]
        + [
            item(
                "aws", instance_name="m5.large", location=loc, price=p, gpu_count=0, cpu=2, memory=8
            )
            for loc, p in (("us-east-1", 0.096), ("eu-central-1", 0.115))
        ]
        + [
            item(
                "aws",
                instance_name="g6.xlarge",
                location="us-east-1",
                price=0.8048,
                gpu_name="L4",
                gpu_memory=24.0,
                cpu=4,
                memory=16,
            ),
        ]
    )
    return {"lambdalabs": lam, "aws": aws}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("site")
    previous = None
    for v in (V1, V2):
        inp = root / f"in-{v}"
        inp.mkdir()
        for p, items in offers(v).items():
            write_csv_file(sorted(items, key=lambda i: i.price), str(inp / f"{p}.csv"))
            # A collection's time is its CSV's (docs/pipeline.md): one night after the other.
            at = dt.datetime.fromisoformat(f"{DAYS[v]}T05:00:00+00:00").timestamp()
            os.utime(inp / f"{p}.csv", (at, at))
        args = ["catalog", "build", "--input", str(inp), "--version", v, "--output", str(root / v)]
        assert gpuhunt_main(args + (["--previous", previous] if previous else [])) == 0
        previous = str(root / v)
    assert gpuhunt_main(["catalog", "site", str(root / "out"), "--catalog", previous]) == 0
    return root


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1000",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def library_rows(catalog: Catalog, **filters) -> list[tuple]:
    """The library's answer, one row per distinct offer: its cheapest region and price and the
    number of regions (the answer is price-ordered, so the first offer seen is the cheapest)."""
    seen: dict[tuple, list] = {}
    for o in catalog.query(**filters):
        key = (o.provider, o.instance_name, o.spot)
        if key in seen:
            seen[key][5] += 1
        else:
            seen[key] = [o.provider, o.instance_name, o.spot, o.location, round(o.price, 6), 1]
    return sorted((tuple(r) for r in seen.values()), key=lambda r: (r[4], r[0], r[1]))


def page_rows(driver) -> list[tuple]:
    return [tuple(r) for r in driver.execute_script("return window.gpuhuntView.keys()")]


def errors(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


CASES = [
    # The page opens on GPU offers (the library: min_gpu_count=1); CPU machines and all of them
    # are a click away (`kind`).
    ({}, {"min_gpu_count": 1}),
    ({"kind": "all"}, {}),
    ({"kind": "cpu"}, {"max_gpu_count": 0}),
    ({"gpu": "H100"}, {"gpu_name": "H100"}),
    ({"gpu": "NVIDIA A100 80GB"}, {"gpu_name": "A100 80GB"}),
    ({"gpu": "a100", "spot": "false"}, {"gpu_name": "A100", "spot": False}),
    ({"min_gpu_count": "8", "max_price": "30"}, {"min_gpu_count": 8, "max_price": 30.0}),
    ({"provider": "aws", "min_memory": "16"}, {"provider": ["aws"], "min_memory": 16}),
    ({"spot": "true"}, {"spot": True}),
    ({"max_gpu_count": "0", "kind": "all"}, {"max_gpu_count": 0}),
    ({"max_price": "2.45"}, {"max_price": 2.45}),  # leaves one of the H100's three regions
    # The library's geography: the cheapest region and the count among European ones only.
    ({"area": "europe"}, {"area": "europe"}),
    ({"country": "DE"}, {"country": "DE"}),
    ({"gpu": "H100", "area": "north-america"}, {"gpu_name": "H100", "area": "north-america"}),
    # A form factor as gpu_name="H100 SXM" asks for it: that one, or unknown.
    ({"gpu": "H100", "ff": "sxm"}, {"gpu_name": "H100 SXM"}),
    ({"gpu": "H100", "ff": "pcie"}, {"gpu_name": "H100 PCIe"}),
    # A filter of the query spec the page reads with no code of its own (`page_filters`).
    ({"min_memory_per_gpu": "100", "kind": "all"}, {"min_memory_per_gpu": 100}),
    ({"min_gpu_memory": "60", "min_memory": "100"}, {"min_gpu_memory": 60, "min_memory": 100}),
    # Links made with the page's names before it took the API's.
    ({"min_count": "8", "spot": "on-demand"}, {"min_gpu_count": 8, "spot": False}),
]


@pytest.mark.browser
@pytest.mark.parametrize("how", ["file", "http"])
def test_rows_equal_the_library_answer(site, browser, how, tmp_path):
    catalog = Catalog(
        catalog_url=str(site / V2), auto_reload=False, settings=Settings(cache_dir=tmp_path)
    )
    catalog.load()
    with serve_directory(site / "out") as (base, requested):
        url = (site / "out" / "index.html").as_uri() if how == "file" else f"{base}/index.html"
        for page_filters, given in CASES:
            browser.get(url + "#" + "&".join(f"{k}={quote(v)}" for k, v in page_filters.items()))
            # Without `kind`, GPU offers only, as the page opens.
            gpu_only = "kind" not in page_filters and "min_gpu_count" not in given
            filters = {**given, "min_gpu_count": 1} if gpu_only else given
            got = sorted(page_rows(browser), key=lambda r: (r[4], r[0], r[1]))
            assert got == library_rows(catalog, **filters), page_filters
            assert got, page_filters  # every case has an answer: a case matching nothing tests less
        assert errors(browser) == []
        if how == "http":
            # Nothing but the page and its data; no request for anything elsewhere.
            assert sorted({r.split("?")[0] for r in requested}) == ["/index.html", "/offers.js"]


@pytest.mark.browser
def test_sorting_and_the_url_state_round_trip(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    url = (site / "out" / "index.html").as_uri()
    browser.get(url)
    head = {
        b.get_attribute("data-key"): b
        for b in browser.find_elements(By.CSS_SELECTOR, "#head button")
    }
    head["count"].click()
    counts = [
        r[1]
        for r in browser.execute_script(
            "return window.gpuhuntView.keys().map((k, i) => [i, document.querySelector"
            '(`#body .row[data-index="${i}"] span:nth-child(4)`)?.textContent])'
        )
    ]
    assert counts[:4] == ["1", "1", "1", "8"]  # GPU offers only (no 0), as the page opens
    head = {
        b.get_attribute("data-key"): b
        for b in browser.find_elements(By.CSS_SELECTOR, "#head button")
    }
    head["count"].send_keys(Keys.ENTER)  # the keyboard sorts as a click does
    assert browser.execute_script("return location.hash") == "#sort=-count"
    first = page_rows(browser)[0]
    assert first[1] in ("gpu_8x_a100_80gb_sxm4", "p5.48xlarge", "p4d.24xlarge")

    gpu = browser.find_element(By.ID, "f-gpu")
    gpu.send_keys("H100")
    browser.find_element(By.ID, "f-spot").send_keys("on-demand")
    browser.find_element(By.ID, "f-max-price").send_keys("100\t")
    browser.execute_script("return new Promise(r => setTimeout(r, 200))")
    hash_ = browser.execute_script("return location.hash")
    assert hash_ == "#gpu=H100&max_price=100&spot=false&sort=-count"
    shown = page_rows(browser)
    assert [r[1] for r in shown] == ["p5.48xlarge", "gpu_1x_h100_pcie"]
    # The same URL in a new page gives the same view, inputs filled in.
    browser.get("about:blank")
    browser.get(url + hash_)
    assert page_rows(browser) == shown
    assert browser.find_element(By.ID, "f-gpu").get_attribute("value") == "H100"
    assert browser.find_element(By.ID, "f-spot").get_attribute("value") == "false"
    assert errors(browser) == []


@pytest.mark.browser
def test_the_page_opens_on_gpu_offers_and_cpu_machines_are_one_click_away(site, browser):
    from selenium.webdriver.common.by import By

    browser.get((site / "out" / "index.html").as_uri() + "#gpu=&max_price=100")
    rows = page_rows(browser)
    assert rows and "m5.large" not in {r[1] for r in rows}
    prices = [r[4] for r in rows]
    assert prices == sorted(prices)  # cheapest first, as the CLI
    link = {
        a.get_attribute("data-kind"): a for a in browser.find_elements(By.CSS_SELECTOR, "#kinds a")
    }
    assert link[""].get_attribute("aria-current") == "page"
    link["cpu"].click()
    cpu = page_rows(browser)
    assert cpu and browser.execute_script("return location.hash") == "#kind=cpu&max_price=100"
    link["all"].click()
    assert len(page_rows(browser)) == len(rows) + len(cpu)
    link[""].click()
    assert page_rows(browser) == rows and errors(browser) == []


@pytest.mark.browser
def test_unknown_gpu_spelling_says_so(site, browser):
    browser.get((site / "out" / "index.html").as_uri() + "#gpu=H200")
    assert page_rows(browser) == []
    problem = browser.find_element("id", "gpu-problem").text
    assert 'No GPU model in this catalog is spelled "H200"' in problem


@pytest.mark.browser
def test_chart_shows_the_price_history(site, browser):
    browser.get((site / "out" / "index.html").as_uri() + "#gpu=H100")
    assert browser.find_element("id", "chart-gpu").get_attribute("value") == "H100"
    # Two days: H100 at $2.49 then $2.29 per GPU-hour (the cheapest region of the 1x PCIe).
    points = browser.execute_script(
        "return Array.from(document.querySelectorAll('#chart circle title')).map(t => t.textContent)"
    )
    assert points == ["2026-11-30: $2.49 per GPU-hour", "2026-12-01: $2.29 per GPU-hour"]
    assert browser.find_element("id", "chart-line").get_attribute("d").startswith("M")
    assert errors(browser) == []


@pytest.mark.browser
def test_tflops_per_dollar_is_the_librarys(site, browser):
    browser.get((site / "out" / "index.html").as_uri() + "#gpu=H100&sort=-tflops")
    cells = browser.execute_script(
        "return Array.from(document.querySelectorAll('#body .row')).map(r => "
        "[r.children[1].textContent, r.children[10].textContent])"
    )
    catalog_items = {
        (i.instance_name): i.tflops_per_dollar
        for v in [offers(V2)]
        for items in v.values()
        for i in items
        if i.gpu_name == "H100"
    }
    assert [c[0] for c in cells] == ["gpu_1x_h100_pcie", "p5.48xlarge"]
    for instance, shown in cells:
        # the cheapest region's price: the first (cheapest) offer of that instance
        cheapest = min(
            (i for items in offers(V2).values() for i in items if i.instance_name == instance),
            key=lambda i: i.price,
        )
        assert shown == f"{cheapest.tflops_per_dollar:.1f}"
    assert all(v is not None for v in catalog_items.values())


@pytest.mark.browser
def test_provider_ages_and_sources_are_shown(site, browser):
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get((site / "out" / "index.html").as_uri())
    # The page fills the provenance table once it has read its data, after the load event: on
    # a busy machine the first look can come before (bounded: a page that never fills it fails).
    count = "return document.querySelectorAll('#providers tbody tr').length"
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(count) > 0)
    rows = browser.execute_script(
        "return Array.from(document.querySelectorAll('#providers tbody tr'))"
        ".map(tr => Array.from(tr.cells).map(c => c.textContent))"
    )
    assert [r[:2] for r in rows] == [["aws", "7"], ["lambdalabs", "6"]]
    doc = json.loads((site / "out" / "offers.json").read_text())
    assert [p["recorded_at"] is not None for p in doc["provenance"]] == [True, True]


@pytest.mark.browser
def test_virtualised_rows_and_phone_width(site, browser, tmp_path):
    browser.set_window_size(390, 844)
    try:
        browser.get((site / "out" / "index.html").as_uri())
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 390  # the table scrolls inside its box, the page does not
        browser.save_screenshot(str(tmp_path / "phone.png"))
    finally:
        browser.set_window_size(1400, 1000)
    browser.get((site / "out" / "index.html").as_uri())
    shown = browser.execute_script("return document.querySelectorAll('#body .row').length")
    assert shown == len(page_rows(browser))  # few rows: all of them fit
    assert errors(browser) == []


@pytest.mark.browser
def test_the_page_keys_spellings_as_the_library_does(site, browser):
    from gpuhunt._internal.site.data import gpu_key

    spellings = [
        "NVIDIA GeForce RTX 4090",
        "a100-80GB",
        "H100 SXM5",
        "  l4 ",
        "MI300X_192G",
        "Ü-A10",
    ]
    browser.get((site / "out" / "index.html").as_uri())
    got = browser.execute_script("return arguments[0].map(gpuhuntView.gpuKey)", spellings)
    assert got == [gpu_key(s) for s in spellings]


@pytest.mark.slow
@pytest.mark.browser
def test_many_rows_are_virtualised_and_scroll(browser, tmp_path):
    """5,000 distinct offers: only the rows on screen are in the page, and scrolling to the
    end draws the last (most expensive) one."""
    (tmp_path / "csv").mkdir()
    many = [
        item("aws", instance_name=f"t{i:04d}", price=1.0 + i / 100, gpu_count=0, cpu=2, memory=8)
        for i in range(5000)
    ]
    write_csv_file(many, str(tmp_path / "csv" / "aws.csv"))
    assert (
        gpuhunt_main(["catalog", "site", str(tmp_path / "out"), "--catalog", str(tmp_path / "csv")])
        == 0
    )
    browser.get((tmp_path / "out" / "index.html").as_uri() + "#kind=cpu")  # CPU machines
    assert len(page_rows(browser)) == 5000
    in_dom = browser.execute_script("return document.querySelectorAll('#body .row').length")
    assert 10 < in_dom < 100
    last = browser.execute_script(
        "const g = document.getElementById('grid'); g.scrollTop = g.scrollHeight;"
        "return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r("
        "Array.from(document.querySelectorAll('#body .row')).map(e => e.children[1].textContent)"
        ".pop()))))"
    )
    assert last == "t4999"
    browser.save_screenshot(str(tmp_path / "site.png"))  # what the page looks like, scrolled
    assert errors(browser) == []


@pytest.mark.browser
def test_availability_filter_column_age_and_history(site, browser):
    browser.get((site / "out" / "index.html").as_uri() + "#gpu=H100")
    cells = browser.execute_script(
        "return Array.from(document.querySelectorAll('#body .row')).map(r => "
        "[r.children[1].textContent, r.children[14].textContent, r.children[15].title])"
    )
    # The cheapest region of the 1x H100 is sold out; AWS does not say.
    assert cells[0] == ["gpu_1x_h100_pcie", "sold out", "Price read 2026-12-01T05:00:00Z"]
    assert cells[1][:2] == ["p5.48xlarge", ""]
    # Only offers read as available: the 1x H100 in its one available region.
    browser.get((site / "out" / "index.html").as_uri() + "#gpu=H100&avail=available")
    assert page_rows(browser) == [
        ("lambdalabs", "gpu_1x_h100_pcie", False, "europe-central-1", 2.39, 1)
    ]
    browser.get((site / "out" / "index.html").as_uri() + "#gpu=H100&avail=sold-out")
    assert [r[3] for r in page_rows(browser)] == ["us-east-1"]
    # Beside the chart: the week's share of available observations (one of two readings).
    avail = browser.execute_script(
        "return Array.from(document.querySelectorAll('#chart-avail tr'))"
        ".map(tr => Array.from(tr.cells).map(c => c.textContent))"
    )
    assert avail == [
        ["aws", "2 offers, 2 observations", "not reported"],
        ["lambdalabs", "3 offers, 3 observations", "50% available"],
    ]
    assert errors(browser) == []


def rentable_offers() -> dict[str, list]:
    """Issue 48's kinds of offers a person cannot simply rent as listed, beside rentable ones."""
    t4 = dict(gpu_name="T4", gpu_memory=16.0, cpu=4, memory=28)
    a10 = dict(gpu_name="A10", gpu_memory=4.0, cpu=6, memory=55)
    azure = [
        # A restricted region, cheaper than the open one.
        item("azure", instance_name="Standard_NC4as_T4_v3", location="koreasouth", price=0.4, **t4),
        item("azure", instance_name="Standard_NC4as_T4_v3", location="eastus", price=0.53, **t4),
        item("azure", instance_name="Standard_NV6ads_A10_v5", location="eastus", price=0.45, **a10),
    ]
    azure[0].flags = ["azure-restricted-region"]
    azure[2].flags, azure[2].gpu_fraction = ["fractional-gpu"], 1 / 6
    runpod = [
        item("runpod", instance_name=f"1x_{g}", location="CA-MTL-1", price=p, gpu_name=g, **m)
        for g, p, m in (("T4", 0.2, {}), ("MI300X", 2.39, {"gpu_memory": 192.0}))
    ]
    for o in runpod:
        o.location_source = "enumerated"
    return {"azure": azure, "runpod": runpod}


@pytest.fixture(scope="module")
def rentable_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("rentable")
    for p, items in rentable_offers().items():
        write_csv_file(sorted(items, key=lambda i: i.price), str(root / f"{p}.csv"))
    args = ["catalog", "build", "--input", str(root), "--version", V1, "--output", str(root / V1)]
    assert gpuhunt_main(args) == 0
    assert gpuhunt_main(["catalog", "site", str(root / "out"), "--catalog", str(root / V1)]) == 0
    return root


@pytest.mark.browser
def test_the_page_shows_rentable_offers_unless_asked_as_the_cli_does(
    rentable_site, browser, tmp_path
):
    catalog = Catalog(
        catalog_url=str(rentable_site / V1),
        auto_reload=False,
        settings=Settings(cache_dir=tmp_path),
    )
    catalog.load()
    url = (rentable_site / "out" / "index.html").as_uri()
    for page_filters, given in [
        ({}, {}),
        ({"gpu": "T4"}, {"gpu_name": "T4"}),
        ({"gpu": "MI300X"}, {"gpu_name": "MI300X"}),  # enumerated only: the answer there is
    ]:
        for every in (False, True):
            shown = {**page_filters, **({"include": "all"} if every else {})}
            browser.get(url + "#" + "&".join(f"{k}={quote(v)}" for k, v in shown.items()))
            got = sorted(page_rows(browser), key=lambda r: (r[4], r[0], r[1]))
            want = library_rows(catalog, min_gpu_count=1, include="all" if every else [], **given)
            assert got == want, shown
    browser.get(url + "#gpu=T4")
    default = page_rows(browser)
    assert [(r[0], r[3]) for r in default] == [("azure", "eastus")]  # not Korea, not RunPod's
    assert errors(browser) == []


@pytest.mark.browser
def test_usage_and_job_costs_are_the_librarys(browser, tmp_path):
    """The page's monthly cost, how to pay, break-even and job TOTAL (its own script) equal
    `Catalog.query_costs` for the same usage, over a folder catalog with an AWS terms file."""
    from gpuhunt._internal.catalog_costs import best_term
    from gpuhunt._internal.costs.terms import Term
    from gpuhunt._internal.formats.terms import write_terms

    folder = tmp_path / "catalog"
    folder.mkdir()
    for p, items in offers(V2).items():
        write_csv_file(sorted(items, key=lambda i: i.price), str(folder / f"{p}.csv"))
    # Made-up terms for the test: the 1y one beats on demand at 500 h a month, the 3y one not
    # over 12 months (bought whole).
    made_up = [
        Term("aws", "g6.xlarge", "us-east-1", "1y", "none", "standard", 0.5, 0.0, "test", None),
        Term("aws", "g6.xlarge", "us-east-1", "3y", "all", "standard", 0.0, 9000.0, "test", None),
        Term("aws", "p5.48xlarge", "us-east-1", "1y", "partial", "standard", 20.0, 90000.0, "test", None),
    ]  # fmt: skip
    (folder / "aws.terms").write_bytes(write_terms(made_up))
    built, out = tmp_path / "built", tmp_path / "out"
    args = ["catalog", "build", "--input", str(folder), "--version", V2, "--output", str(built)]
    assert gpuhunt_main(args) == 0  # the terms file goes into the catalog with its offers
    assert gpuhunt_main(["catalog", "site", str(out), "--catalog", str(built)]) == 0
    catalog = Catalog(
        catalog_url=str(built), auto_reload=False, settings=Settings(cache_dir=tmp_path)
    )
    catalog.load()
    usage = {"hours_per_month": 500, "months": 12}
    job = {"job_hours": 10, "egress_gb": 500, "storage_gb": 100}

    def library(providers, **asked):
        seen = {}
        for p in catalog.query_costs(provider=providers, min_gpu_count=1, **asked):
            seen.setdefault((p.offer.provider, p.offer.instance_name, p.offer.spot), p.costs)
        return seen

    # Lambda documents free egress but no storage price: its TOTAL is unknown, ranked last.
    for provider, asked in (("aws", usage), ("aws", {**usage, **job}), (None, {**usage, **job})):
        hash_ = ([f"provider={provider}"] if provider else []) + [
            f"{k}={v}" for k, v in asked.items()
        ]
        browser.get(out.joinpath("index.html").as_uri() + "#" + "&".join(hash_))
        keys = [tuple(r[:3]) for r in page_rows(browser)]
        got = browser.execute_script("return window.gpuhuntView.costs()")
        want = library([provider] if provider else None, **asked)
        assert keys == list(want), asked  # ordered by monthly cost, or by TOTAL for a job
        for key, c in zip(keys, got):
            lib = want[key]
            assert c["monthly"] == pytest.approx(lib.monthly_cost, rel=1e-12)
            assert c["eff"] == pytest.approx(lib.effective_hourly, rel=1e-12)
            assert c["pay"] == lib.pay
            best = best_term(lib)
            if best is None:
                assert c["breakEven"] is None  # NaN reaches Python as null
            else:
                assert c["breakEven"] == pytest.approx(best.break_even_hours, rel=1e-12)
            if "job_hours" in asked and lib.total is None:
                assert c["total"] is None and key[0] == "lambdalabs"
            elif "job_hours" in asked:
                assert c["total"] == pytest.approx(lib.total, rel=1e-12)
        assert want[("aws", "g6.xlarge", False)].pay == "1y no upfront"  # a term is chosen
        if "job_hours" in asked:
            totals = [c["total"] for c in got]
            assert None not in totals[: totals.index(None)] if None in totals else totals
            assert (None in totals) == (provider is None)
            unknown = browser.find_elements("css selector", "#body .row span")
            assert ("unknown" in [e.text for e in unknown]) == (provider is None)
        text = browser.find_element("id", "head").text
        assert "Break-even" in text and ("TOTAL" in text) == ("job_hours" in asked)
    assert errors(browser) == []
