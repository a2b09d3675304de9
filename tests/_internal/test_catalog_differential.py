"""`Catalog.query(**filters)` over a realistic generated catalog (test data, not real prices:
several providers, thousands of offers, published as an archive and loaded from its folder the
way users load a catalog) answers exactly `[o for o in all_offers if matches(o, q)]` in price
order, for several hundred selective filters drawn as in `filtergen`.
"""

from __future__ import annotations

import datetime as dt
import random

import pytest

from gpuhunt import Catalog, QueryFilter, canonical_gpu_name, matches
from gpuhunt._internal import geography, registry
from gpuhunt._internal.gpu_names import gpu_name_spec
from gpuhunt._internal.models import CatalogItem
from tests._internal.fastpath import csv_bytes, read_csv
from tests._internal.filtergen import (
    FAMILY_NAMES,
    FIELDS,
    draw_filter,
    random_instance_name,
    random_offer_fields,
    random_shape,
)
from tests.helpers import publish_archive

PROVIDERS = ["aws", "azure", "gcp", "oci", "lambdalabs", "runpod", "verda"]
REGIONS = [
    "us-east-1",
    "us-west-2",
    "eu-west-1",
    "europe-west4",
    "us-central1-a",
    "ap-south-1",
    "FIN-01",
    "mars-1",  # in no provider's geography: kept without country/area, dropped with them
]
# Providers whose offers say the CUDA version of their host (half of them, as drawn).
SAY_CUDA = {"runpod", "lambdalabs", "verda"}
# How people spell GPU names; the catalog holds the canonical ones (see Catalog.query).
SPELLINGS = {"RTX4090": ["RTX 4090", "NVIDIA GeForce RTX 4090"], "H100": ["NVIDIA H100"]}


def generated_offers(rnd: random.Random, provider: str) -> list[CatalogItem]:
    """Instance types, each offered in a few regions, on demand and sometimes spot."""
    out = []
    for t in range(rnd.randint(60, 90)):
        shape = random_shape(rnd)
        name = f"{provider}-{random_instance_name(rnd, t)}"
        if rnd.random() < 0.1:  # a family the form factor rules know, under its own name
            name = rnd.choice(FAMILY_NAMES) + f"-{t}"
        base = rnd.choice([0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
        base *= rnd.choice([1.0, 1.0, 1.5, 2.0, 0.8])
        for region in rnd.sample(REGIONS, rnd.randint(2, 5)):
            factor = rnd.choice([1.0, 1.0, 1.1, 1.2])
            for spot in [False, True] if rnd.random() < 0.4 else [False]:
                price = round(base * factor * (0.3 if spot else 1.0), 2)
                out.append(
                    CatalogItem(
                        provider=provider,
                        instance_name=name,
                        location=region,
                        price=price,
                        spot=spot,
                        **(random_offer_fields(rnd) if provider in SAY_CUDA else {}),
                        **shape,
                    )
                )
    rnd.shuffle(out)  # files are not in price order
    return out


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    rnd = random.Random(2026)
    csvs = {p: csv_bytes(generated_offers(rnd, p)) for p in PROVIDERS}
    root = tmp_path_factory.mktemp("bucket")
    publish_archive(root, "20261201-1", csvs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GPUHUNT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        mp.delenv("GPUHUNT_CATALOG_DIR", raising=False)
        catalog = Catalog(catalog_url=str(root), auto_reload=False)
        catalog.load()
    # Every offer as the plain CSV reader reads it (not through the table code under test),
    # in price order: equal prices in provider order, then file order.
    everything = [i for p in PROVIDERS for i in read_csv(csvs[p], p)]
    # ... and dated as the loader dates published offers: the manifest's `collected_at`, where
    # an offer does not carry its own time (`observed.py` keeps one it has).
    observed_at = dt.datetime(2026, 11, 29, tzinfo=dt.timezone.utc)  # publish_archive's
    for i in everything:
        i.observed_at = i.observed_at or observed_at
    order = registry.OFFLINE_PROVIDERS
    everything.sort(key=lambda i: (i.price, order.index(i.provider)))
    return catalog, everything


def as_users_spell(rnd: random.Random, kw: dict) -> tuple[dict, QueryFilter]:
    """The keywords as a user may pass them to `Catalog.query`, and the `QueryFilter` they mean."""
    spelled = dict(kw)
    meant = dict(kw)
    if "provider" in kw and len(kw["provider"]) == 1 and rnd.random() < 0.5:
        spelled["provider"] = kw["provider"][0]
    if "gpu_name" in kw:
        names = []
        for n in kw["gpu_name"]:
            names.append(rnd.choice([n, *SPELLINGS.get(n, [])]))
        spelled["gpu_name"] = names[0] if len(names) == 1 and rnd.random() < 0.5 else names
        # A name that gives the memory, form factor or count ("A100 80GB", "H100 SXM",
        # "A100:8") is not widened to its plain GPU name.
        canonical = [
            c
            for n in names
            if gpu_name_spec(n) is None and (c := canonical_gpu_name(n)) is not None
        ]
        meant["gpu_name"] = names + canonical
    for key in ("gpu_vendor", "cpu_arch"):
        if key in kw and rnd.random() < 0.5:
            spelled[key] = rnd.choice([kw[key].value, kw[key].value.upper()])
    for key in ("location", "country", "area"):
        if key in kw and len(kw[key]) == 1 and rnd.random() < 0.5:
            spelled[key] = kw[key][0]
    for key in ("min_compute_capability", "max_compute_capability"):
        if key in kw and kw[key][1] < 0:
            # Just below (9, 0) is (9, -1) to `matches`; users write it (8, 999), which the
            # catalog accepts (minor numbers are 0..999) and which selects the same offers.
            spelled[key] = meant[key] = (kw[key][0] - 1, 999)
        if key in kw and rnd.random() < 0.5:
            spelled[key] = "{}.{}".format(*meant[key])
    return spelled, QueryFilter(**meant)


def test_catalog_is_realistic(loaded):
    catalog, everything = loaded
    counts = catalog.status().offers
    assert set(counts) == set(PROVIDERS) and sum(counts.values()) == len(everything) > 2000
    assert list(catalog.query()) == everything
    # the offers in no provider's geography are kept above and counted here
    unknown: dict[str, int] = {}
    for i in everything:
        if geography.locate(i.provider, i.location) is None:
            unknown[i.provider] = unknown.get(i.provider, 0) + 1
    assert catalog.status().unknown_locations == unknown
    assert sum(unknown.values()) > 100


@pytest.mark.slow
def test_query_answers_what_matches_answers(loaded):
    catalog, everything = loaded
    rnd = random.Random(19)
    answers = non_empty = selective = 0
    drawn: dict[str, int] = {}
    for _ in range(500):
        kw, fields = draw_filter(rnd, everything)
        for name in fields:
            drawn[name] = drawn.get(name, 0) + 1
        spelled, q = as_users_spell(rnd, kw)
        got = list(catalog.query(**spelled))
        expected = [o for o in everything if matches(o, q)]
        assert got == expected, spelled
        answers += 1
        non_empty += bool(got)
        selective += 0 < len(got) < len(everything)
    print(f"non-empty answers: {non_empty}/{answers}, partial: {selective}/{answers}")
    assert min(drawn.values()) >= 20 and len(drawn) == len(FIELDS), drawn
    assert non_empty / answers > 0.5, (non_empty, answers)
    assert selective / answers > 0.5, (selective, answers)
