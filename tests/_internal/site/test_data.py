"""The page's data document (pure): shapes, regional offers cheapest first, GPU spellings that
mean what the library's `gpu_name` filter means, and each provider's age and source."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest

from gpuhunt._internal.constraints import gpu_name_wanted
from gpuhunt._internal.query.filters import make_filter
from gpuhunt._internal.site import arrays, data, marks
from tests.helpers import item

NOW = dt.datetime(2026, 12, 1, 12, tzinfo=dt.timezone.utc)


def facts(place=None, ff=None, tf=None) -> data.Facts:
    return data.Facts(
        place=place or (lambda p, loc: ("DE", "europe") if loc.startswith("eu") else (None, None)),
        form_factor=ff or (lambda i: "sxm" if "sxm" in i.instance_name else None),
        tflops=tf or (lambda i: 989.0 if i.gpu_name == "H100" else None),
    )


def test_offers_of_one_instance_type_are_one_shape_cheapest_first():
    items = [
        item(
            "aws",
            instance_name="p5",
            location="us-east-1",
            price=55.04,
            gpu_name="H100",
            gpu_count=8,
        ),
        item(
            "aws",
            instance_name="p5",
            location="eu-west-1",
            price=54.0,
            gpu_name="H100",
            gpu_count=8,
        ),
        item(
            "aws",
            instance_name="p5",
            location="ap-south-1",
            price=54.0,
            gpu_name="H100",
            gpu_count=8,
        ),
        item(
            "aws",
            instance_name="p5",
            location="us-east-1",
            price=20.0,
            spot=True,
            gpu_name="H100",
            gpu_count=8,
        ),
        item(
            "lambdalabs",
            instance_name="gpu_1x_h100_sxm5",
            location="us-east-1",
            price=3.29,
            gpu_name="H100",
        ),
        item("aws", instance_name="m5.large", price=0.096, gpu_count=0, cpu=2, memory=8),
    ]
    doc = data.build(items, facts(), version="v1", now=NOW)
    s = doc["shapes"]
    assert s["instance"] == ["p5", "p5", "gpu_1x_h100_sxm5", "m5.large"]
    assert s["spot"] == [0, 1, 0, 0]
    assert s["n"] == [3, 1, 1, 1]
    assert s["first"] == [0, 3, 4, 5]
    assert s["form_factor"] == [None, None, "sxm", None]
    assert s["tflops"] == [989, 989, 989, None]
    assert s["gpu"] == [0, 0, 0, -1]
    # Cheapest first; equal prices by location name (ap-south-1 before eu-west-1).
    locs = doc["locations"]
    assert [locs["name"][i] for i in doc["offers"]["loc"][:3]] == [
        "ap-south-1",
        "eu-west-1",
        "us-east-1",
    ]
    assert doc["offers"]["price"] == [54.0, 54.0, 55.04, 20.0, 3.29, 0.096]
    assert locs["country"][locs["name"].index("eu-west-1")] == "DE"
    assert locs["area"][locs["name"].index("us-east-1")] is None
    # Locations are per provider: lambdalabs' us-east-1 is not aws's.
    assert sorted(zip(locs["provider"], locs["name"])) == [
        (0, "ap-south-1"),
        (0, "eu-west-1"),
        (0, "us-east-1"),
        (1, "us-east-1"),
    ]
    assert doc["gpus"]["label"] == ["H100 80GB"]


def test_an_offer_without_a_finite_price_is_left_out():
    doc = data.build([item(price=float("nan")), item(price=2.0)], facts(), version=None, now=NOW)
    assert doc["offers"]["price"] == [2.0]
    assert doc["provenance"][0]["offers"] == 1


SPELLINGS = [
    "A100",
    "a100",
    "NVIDIA A100",
    "A100 80GB",
    "a100-80gb",
    "A100 40GB",
    "A100 80G",
    "a100 80 GiB",
    "H100",
    "nvidia h100",
    "H100 80GB",
    "RTX 4090",
    "rtx4090",
    "4090",
    "GeForce RTX 4090",
    "NVIDIA GeForce RTX 4090",
    "RTX4090 24GB",
    "L4",
    "nvidia l4",
    "MI300X",
    "amd mi300x",
    "mi300",
]
GPUS = [
    ("A100", 40.0),
    ("A100", 80.0),
    ("H100", 80.0),
    ("RTX4090", 24.0),
    ("L4", 24.0),
    ("MI300X", 192.0),
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_spellings_name_what_the_library_filter_matches(spelling):
    table = data.spellings(GPUS)
    q = make_filter(gpu_name=spelling)  # as `Catalog.query(gpu_name=spelling)` reads it
    wanted = [i for i, (name, mem) in enumerate(GPUS) if gpu_name_wanted(name, mem, q.gpu_name)]
    assert wanted, spelling  # every spelling here is one the library reads
    assert table.get(data.gpu_key(spelling)) == wanted


def test_a_spelling_names_one_model_and_an_unknown_one_nothing():
    table = data.spellings(GPUS)
    assert len(table) > 40
    for key, indexes in table.items():
        assert len({GPUS[i][0] for i in indexes}) == 1, key
    for unknown in ("H200", "A100 48GB", "B200", "4080"):
        assert data.gpu_key(unknown) not in table


def test_provenance_marks_stale_and_undated_data():
    manifest = {
        "providers": {
            "lambdalabs": {
                "collected_at": "2026-12-01T10:00:00+00:00",
                "status": "fresh",
                "source": {"kind": "api", "name": "Lambda Cloud API"},
            },
            "aws": {"collected_at": "2026-11-20", "status": "carried_over"},
            "azure": {"collected_at": None},
        }
    }
    rows = data.provenance(manifest, {"aws": 3, "lambdalabs": 2}, NOW)
    assert rows == [
        {
            "name": "aws",
            "offers": 3,
            "recorded_at": "2026-11-20T00:00:00+00:00",
            "age": "11d",
            "stale": True,
            "status": "carried_over",
            "source": None,
        },
        {
            "name": "azure",
            "offers": 0,
            "recorded_at": None,
            "age": "unknown",
            "stale": True,
            "status": None,
            "source": None,
        },
        {
            "name": "lambdalabs",
            "offers": 2,
            "recorded_at": "2026-12-01T10:00:00+00:00",
            "age": "2h",
            "stale": False,
            "status": "fresh",
            "source": "Lambda Cloud API",
        },
    ]


def test_the_page_from_columns_is_the_page_from_offers():
    # `table_document` (what `catalog site` runs: no object per offer) writes the document
    # `build` writes from the same catalog's offers, over the bundled snapshot's 14 providers.
    from gpuhunt._internal.load import sources
    from gpuhunt._internal.site import build as site_build
    from gpuhunt._internal.site.facts import library_facts

    raw = sources.bundled()
    kw = {"version": raw.version, "manifest": raw.manifest, "now": NOW}
    by_offer = data.build(site_build.offers_of(raw), library_facts(), **kw)
    by_column = data.as_built(data.table_document(site_build.table_of(raw), library_facts(), **kw))
    assert by_column == by_offer
    assert (
        data.as_built(data.table_document(site_build.tables_of(raw), library_facts(), **kw))
        == by_offer
    )
    assert len(by_column["providers"]) == len(raw.csvs) == 14  # Vast.ai is not in the snapshot
    assert sum(by_column["shapes"]["n"]) == len(by_column["offers"]["price"]) > 1000


def _generated_catalog(seed: int, offers: int):
    """A catalog of random offers over three providers, made to meet what the column path
    must get right: equal prices in several regions of one instance type (the order then is
    by location name), one location name at two providers, prices that round to one price,
    and instance types that differ only in what the page does not show (a catalog's CSV
    reader drops an offer without a finite price before either sees it)."""
    import random

    from gpuhunt._internal.formats.csv import csv_bytes
    from gpuhunt._internal.load.sources import RawCatalog

    rng = random.Random(seed)
    gpus = [("H100", 80.0, 8), ("A100", 40.0, 1), ("A100", 80.0, 4), ("L4", 24.0, 2), (None, 0, 0)]
    places = ["us-east-1", "eu-west-1", "ap-south-1", "europe-west4-a", "us-central1", "b"]
    by_provider: dict[str, list] = {"aws": [], "gcp": [], "lambdalabs": []}
    for _ in range(offers):
        provider = rng.choice(list(by_provider))
        gpu, memory, count = rng.choice(gpus)
        kw = {"gpu_name": gpu, "gpu_memory": memory or None, "gpu_count": count}
        if not count:
            kw["gpu_vendor"] = None
        price = rng.choice([1.5, 2.25, 10.0, 0.0000105, 3.0000004, 3.0000001])
        by_provider[provider].append(
            item(
                provider,
                instance_name=f"{gpu or 'cpu'}-{rng.randrange(4)}{'-sxm' * rng.randrange(2)}",
                location=rng.choice(places),
                price=price if rng.random() < 0.5 else round(rng.uniform(0.01, 99), 7),
                spot=rng.random() < 0.3,
                cpu=rng.choice([4, 8]),
                memory=rng.choice([16.0, 32.5]),
                disk_size=rng.choice([None, 100.0]),
                **rng.choice(
                    [{}, {}, {"observed_at": "2026-11-30T00:00:00Z"}, {"available": True}]
                ),
                **kw,
            )
        )
    csvs = {p: csv_bytes(items) for p, items in by_provider.items() if items}
    return RawCatalog(csvs, "v", "x", "u")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_page_from_columns_is_the_page_from_offers_on_generated_catalogs(seed):
    # The reference computation (`build`: a dict per offer) and the column one
    # (`table_document`: integer codes and numpy), on catalogs made to meet their edge cases.
    from gpuhunt._internal.site import build as site_build
    from gpuhunt._internal.site.facts import library_facts

    raw = _generated_catalog(seed, 3000)
    kw = {"version": "v", "manifest": None, "now": NOW}
    offers = site_build.offers_of(raw)
    by_offer = data.build(offers, library_facts(), **kw)
    by_column = data.as_built(data.table_document(site_build.table_of(raw), library_facts(), **kw))
    assert by_column == by_offer
    # What `catalog site` does: the providers' tables, not joined.
    tables = site_build.tables_of(raw)
    assert data.as_built(data.table_document(tables, library_facts(), **kw)) == by_offer
    expected = marks.offer_marks(offers)
    assert len(expected["available"]) > 100 and len(expected["observed_own"]) > 100
    got = marks.offer_marks_from_table(tables)
    assert json.dumps(got) == json.dumps(expected)  # in the same order too
    assert len(by_offer["locations"]["name"]) > len(set(by_offer["locations"]["name"]))
    assert len(by_offer["offers"]["price"]) == 3000
    prices = by_offer["offers"]["price"]
    first, n = by_offer["shapes"]["first"], by_offer["shapes"]["n"]
    tied = sum(prices[a] == prices[a + 1] for s, c in zip(first, n) for a in range(s, s + c - 1))
    assert tied > 30  # the order by location name was exercised


def test_a_provider_without_offers_and_a_catalog_without_any():
    from gpuhunt._internal.formats.csv import csv_bytes
    from gpuhunt._internal.load.sources import RawCatalog
    from gpuhunt._internal.site import build as site_build
    from gpuhunt._internal.site.facts import library_facts

    kw = {"version": "v", "now": NOW}
    offers = [item("aws", location=loc, price=1.0) for loc in ("us-east-1", "eu-west-1")]
    for csvs in ({"aws": csv_bytes(offers), "gcp": csv_bytes([])}, {"gcp": csv_bytes([])}):
        raw = RawCatalog(csvs, "v", "x", "u")
        expected = data.build(site_build.offers_of(raw), library_facts(), **kw)
        tables = site_build.tables_of(raw)
        assert data.as_built(data.table_document(tables, library_facts(), **kw)) == expected
        assert marks.offer_marks_from_table(tables) == marks.offer_marks([])
    assert expected["offers"] == {"loc": [], "price": []} and expected["shapes"]["n"] == []


def test_one_providers_offers_in_two_tables_are_ranked_together():
    # Tables that share a provider are joined first: a shape's offers then come from both.
    from gpuhunt._internal.formats.csv import csv_bytes
    from gpuhunt._internal.load.sources import RawCatalog
    from gpuhunt._internal.load.tables import provider_table
    from gpuhunt._internal.query import answers
    from gpuhunt._internal.query.table import combine
    from gpuhunt._internal.site.facts import library_facts

    def offer(location: str, price: float):
        return item("aws", instance_name="p5", location=location, price=price, gpu_name="H100")

    halves = [
        [offer("us-east-1", 3.0), offer("eu-west-1", 5.0)],
        [offer("us-west-1", 2.0), offer("us-west-2", 5.0), offer("ca-central-1", 5.0)],
    ]

    def tables():
        raws = [RawCatalog({"aws": csv_bytes(h)}, "v", "x", "u") for h in halves]
        return [provider_table(r, "aws", None, set()) for r in raws]

    joined = combine(tables())
    kw = {"version": "v", "now": NOW}
    expected = data.build(answers.items(joined, np.arange(len(joined))), library_facts(), **kw)
    got = data.as_built(data.table_document(tables(), library_facts(), **kw))
    assert got == expected
    assert got["offers"]["price"] == [2.0, 3.0, 5.0, 5.0, 5.0]
    names = got["locations"]["name"]
    assert [names[k] for k in got["offers"]["loc"]][2:] == [
        "ca-central-1",
        "eu-west-1",
        "us-west-2",
    ]


def test_the_page_from_a_table_read_back_from_the_disk_cache_is_the_same(tmp_path):
    # A table whose shapes are made as they are needed (`load.warm`) gives the same page.
    from gpuhunt._internal.load import warm
    from gpuhunt._internal.query.table import combine
    from gpuhunt._internal.site.facts import library_facts

    offers = [
        item("aws", instance_name="p5", location=loc, price=p, gpu_name="H100", gpu_count=8)
        for loc, p in (("us-east-1", 55.04), ("eu-west-1", 54.0), ("ap-south-1", 54.0))
    ] + [item("gcp", instance_name="n1", gpu_count=0, price=0.2, location="europe-west4-a")]
    from gpuhunt._internal.formats.csv import csv_bytes
    from gpuhunt._internal.load.sources import RawCatalog
    from gpuhunt._internal.load.tables import provider_table

    raw = RawCatalog({"aws": csv_bytes(offers[:3]), "gcp": csv_bytes(offers[3:])}, "v", "x", "u")
    table = combine([provider_table(raw, p, None, set()) for p in ("aws", "gcp")])
    expected = data.as_built(data.table_document(table, library_facts(), version="v", now=NOW))
    packed = warm.encode(warm.Snapshot(table, "v", None), "k")
    assert packed is not None
    again = warm.decode(packed, "k").table
    assert (
        data.as_built(data.table_document(again, library_facts(), version="v", now=NOW)) == expected
    )
    assert expected["offers"]["price"] == [0.2, 54.0, 54.0, 55.04]


def test_prices_are_rounded_as_python_rounds_them_ties_included():
    prices = [0.0610305, 1234.5678905, 0.0000005, 2.5, 0.1 + 0.2, 99999.9999995, 1e-9, 0.0]
    prices += [k / 1e7 for k in range(0, 200000, 5)]
    got = arrays.rounded(np.array(prices))
    assert got.tolist() == [round(p, 6) for p in prices]


# --------------------------------------------------------------------------- offer marks
# (`data.offer_marks`: availability, age, converted prices and resales, keyed by offer)


def test_offer_marks_say_what_each_offer_says_about_itself():
    from gpuhunt._internal.history.availability import AvailabilityHistory, OfferAvailability

    converted = {"currency": "EUR", "price_native": 0.99, "fx_rate": 1.16, "fx_date": "2026-11-28"}
    items = [
        item("lambdalabs", location="us-east-1", available=True),
        item("lambdalabs", location="us-west-1", available=False),
        item("lambdalabs", location="eu-west-1"),  # the provider does not say
        item("seeweb", instance_name="ECS1GPU3", location="it-fr2", **converted),
        item(
            "shadeform",
            instance_name="lambdalabs_H100",
            resold_from="lambdalabs",
        ),
        item("vastai", observed_at="2026-12-02T07:59:00Z"),
    ]
    manifest = {"providers": {"lambdalabs": {"collected_at": "2026-12-02T05:00:00+00:00"}}}
    rows = [
        OfferAvailability("lambdalabs", "x1", loc, False, "A100", 1, 2, 2, share, "", "", None, 1.0)
        for loc, share in (("us-east-1", 1.0), ("us-west-1", 0.0))
    ]
    got = marks.offer_marks(items, manifest, AvailabilityHistory("u", dt.date(2026, 11, 26), rows))
    assert got["observed"] == {"lambdalabs": "2026-12-02T05:00:00Z"}
    assert got["observed_own"] == {"vastai|x1|0": "2026-12-02T07:59:00Z"}
    assert got["available"] == {"lambdalabs|x1|0|us-east-1": 1, "lambdalabs|x1|0|us-west-1": 0}
    assert got["converted"] == {"seeweb|ECS1GPU3|0|it-fr2": ["EUR", 0.99, 1.16, "2026-11-28"]}
    assert got["resold"] == {"shadeform|lambdalabs_H100|0": "lambdalabs"}
    assert got["availability"] == {
        "since": "2026-11-26",
        "by_gpu": {"A100": [["lambdalabs", 2, 4, 0.5]]},
    }
    assert marks.offer_marks([], None, None)["availability"] is None


def test_a_share_of_a_gpu_is_written_as_its_share():
    # NV6ads_A10_v5 is 1/6 of an A10: the page's $/GPU/h divides by the share, its TFLOPS per
    # dollar counts the share's TFLOPS (`site/facts.py`), as `CatalogItem` does.
    from gpuhunt._internal.site.facts import library_facts

    def a10(name, price, memory):
        return item("azure", instance_name=name, price=price, gpu_name="A10", gpu_memory=memory)

    offers = [a10("Standard_NV6ads_A10_v5", 0.454, 4.0), a10("Standard_NV36ads_A10_v5", 3.2, 24.0)]
    page = data.build(offers, library_facts(), version="v", manifest=None, now=NOW)
    shapes = page["shapes"]
    by_name = {n: k for k, n in enumerate(shapes["instance"])}
    sixth, whole = by_name["Standard_NV6ads_A10_v5"], by_name["Standard_NV36ads_A10_v5"]
    assert shapes["share"][sixth] == pytest.approx(1 / 6, abs=1e-6) and shapes["share"][whole] == 1
    assert shapes["tflops"][sixth] == pytest.approx(shapes["tflops"][whole] / 6, abs=1e-3)
    assert shapes["tflops"][sixth] / 0.454 == pytest.approx(offers[0].tflops_per_dollar, rel=1e-4)
