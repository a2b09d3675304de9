"""The catalog page at scale, measured in a real headless Chromium (Debian's chromium and
chromedriver, as the tests use).

    python benchmarks/bench_site.py --offers 1000000 [--runs 3] [--stages]

Generates a catalog like the published one (`bench_catalog.generate`: provider mix, GPU names,
regions, price spreads), writes the page with `gpuhunt catalog site`'s code, serves it over
loopback HTTP and opens it. Prints, as medians over `--runs` fresh page loads:

- the time to write the site and the size of offers.json / offers.js;
- first view: from navigation start to the first rows on screen (the data downloaded and
  parsed, every filter structure built, the first answer sorted and drawn);
- per filter (a few typical ones, as the page applies them when an input changes): the time
  to filter every offer, sort the answer and draw the visible rows.

`--stages`: no browser; where writing the site goes, stage by stage (reading the providers'
tables, grouping them into shapes, the page's document, the marks, the JSON text, hashing
and writing the files), the fastest of `--runs` rounds in this process.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_catalog import generate  # noqa: E402

from gpuhunt._internal.load import sources  # noqa: E402
from gpuhunt._internal.site import build  # noqa: E402

FILTERS = [
    ("GPU name", "#gpu=H100"),
    ("GPU name + on-demand + max price", "#gpu=A100&spot=on-demand&max_price=20"),
    ("8 GPUs, sort by $/GPU/h", "#min_count=8&sort=per_gpu"),
    ("provider + min RAM", "#provider=aws&min_memory=64"),
    ("area", "#area=europe"),
    ("everything, sort by instance", "#sort=instance"),
]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve(root: Path):
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
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
    return webdriver.Chrome(
        service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options
    )


def stages(csv_folder: Path, providers: list[str], runs: int) -> None:
    """Time `build.write_site`'s stages (the same calls, one after another)."""
    import hashlib

    from gpuhunt._internal.site import arrays, data, facts, marks

    best: dict[str, float] = {}
    for _ in range(runs):
        laps = [("", time.perf_counter())]
        raw = sources.from_directory(str(csv_folder), providers)
        laps.append(("read the catalog", time.perf_counter()))
        tables = build.tables_of(raw)
        laps.append(("providers' tables", time.perf_counter()))
        arrays.offer_rows(tables)
        laps.append(("shapes (answers.prepare)", time.perf_counter()))
        doc = data.table_document(
            tables, facts.library_facts(), version=raw.version, manifest=raw.manifest
        )
        laps.append(("page document", time.perf_counter()))
        doc["marks"] = marks.offer_marks_from_table(tables, raw.manifest)
        laps.append(("marks", time.perf_counter()))
        body = arrays.json_bytes(doc)
        laps.append(("JSON text", time.perf_counter()))
        hashlib.sha256(body).hexdigest()
        literal = build._string_literal(body)
        laps.append(("hash + offers.js literal", time.perf_counter()))
        with tempfile.TemporaryDirectory() as out:
            build._write(Path(out) / "offers.json", body)
            build._write(Path(out) / "offers.js", literal)
            laps.append(("files written", time.perf_counter()))
        for (_, start), (name, end) in zip(laps, laps[1:]):
            best[name] = min(best.get(name, end - start), end - start)
    for name, took in best.items():
        print(f"{name:28} {took * 1000:7.0f} ms")
    print(f"{'in all':28} {sum(best.values()) * 1000:7.0f} ms (fastest of {runs} per stage)")


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--offers", type=int, default=1_000_000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--stages", action="store_true", help="time the site's stages, no browser")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        csvs = generate(args.offers)
        (root / "csv").mkdir()
        for name, body in csvs.items():
            (root / "csv" / f"{name}.csv").write_bytes(body)
        if args.stages:
            stages(root / "csv", list(csvs), args.runs)
            return 0
        t = time.perf_counter()
        written = build.write_site(
            root / "site", sources.from_directory(str(root / "csv"), list(csvs))
        )
        write_s = time.perf_counter() - t
        js = (root / "site" / "offers.js").stat().st_size
        print(
            f"{written.offers:,} offers as {written.rows:,} distinct offers; site written in "
            f"{write_s:.1f} s; offers.json {written.bytes / 1e6:.1f} MB, offers.js {js / 1e6:.1f} MB"
        )
        first: list[float] = []
        parse: list[float] = []
        per_filter: dict[str, list[float]] = {name: [] for name, _ in FILTERS}
        with serve(root / "site") as base:
            driver = browser()
            try:
                for _ in range(args.runs):
                    driver.get("about:blank")
                    driver.get(f"{base}/index.html")
                    view = driver.execute_script(
                        "return {ready: gpuhuntView.readyMs, data: gpuhuntView.dataMs}"
                    )
                    first.append(view["ready"])
                    parse.append(view["data"])
                    for name, hash_ in FILTERS:
                        per_filter[name].append(
                            driver.execute_script(f"return gpuhuntView.apply({hash_!r})")
                        )
            finally:
                driver.quit()
    med = statistics.median
    print(f"first view (navigation start to rows shown): {med(first):.0f} ms")
    print(f"  of which data downloaded and parsed:        {med(parse):.0f} ms")
    for name, times in per_filter.items():
        print(f"filter + sort + draw, {name}: {med(times):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
