"""A filter is read once (`query/parsed.py`) and means the same on every path: 400 random filters
written as people write them (bare strings, lists, aliases, any case, versions as floats and
strings, typos) answer the same through `Catalog.query(**f)` over the bundled catalog and
through `matches(item, QueryFilter(**f))` over every offer of it, or are refused with the same
error by both."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from typing import Any

import pytest

from gpuhunt import Catalog, CatalogItem, QueryFilter, UnknownProviderError, matches
from gpuhunt._internal.query.filters import make_filter
from gpuhunt._internal.query.parsed import ParsedQuery, parsed, provider_name
from gpuhunt.providers.vastai import make_filters as vast_filters
from tests.helpers import item

PROVIDERS = ["runpod", "RunPod", "aws", "gcp", "LAMBDALABS", "vastai", "nebius", "cudo", "lium"]
TYPOS = ["lambda", "run-pod", "amazon"]  # refused on every path, with "did you mean"
GPU_NAMES = [
    "H100",
    "h100",
    "h100-pcie",
    "H100 SXM",
    "A100",
    "A100-80GB",
    "a100 80gb",
    "A100:8",
    "RTX 4090",
    "4090",
    "NVIDIA GeForce RTX 4090",
    "L4",
    "l40s",
    "H100 NVL",
    "MI300X",
    "TPU v5e",
    "v5litepod",
    "B200",
    "T4",
    "NoSuchGPU",
]
BAD_GPU_NAMES = ["A100:0", "H100 SXM PCIe"]
VERSIONS = [8.9, "8.9", 9, "9.0", (8, 0), (9, 0), 8.6, "12.8", 12.4, 12]
BAD_VERSIONS = ["abc", "8.x"]
LOCATIONS = ["us-east-1", "US-EAST-1", "europe-*", "us-central1-?", "eu-north1", "*"]
COUNTRIES = ["US", "us", "DE", "fi", "NL"]
AREAS = ["europe", "North-America", "asia-pacific"]


def _one_or_list(rnd: random.Random, pool: list[Any], k_max: int = 3) -> Any:
    """A bare value (as people write one) or a list or tuple of some."""
    if rnd.random() < 0.5:
        return rnd.choice(pool)
    picked = rnd.sample(pool, rnd.randint(1, min(k_max, len(pool))))
    return picked if rnd.random() < 0.7 else tuple(picked)


def _range(rnd: random.Random, low: str, high: str, values: list[float]) -> dict[str, Any]:
    a, b = sorted(rnd.sample(values, 2))
    out: dict[str, Any] = {}
    if rnd.random() < 0.7:
        out[low] = a
    if rnd.random() < 0.5:
        out[high] = b
    return out


def draw(rnd: random.Random) -> dict[str, Any]:
    """One filter of one to three keywords, as a person writes it."""
    drawers = [
        lambda: {"provider": _one_or_list(rnd, PROVIDERS + TYPOS * (rnd.random() < 0.1))},
        lambda: {"gpu_name": _one_or_list(rnd, GPU_NAMES + BAD_GPU_NAMES * (rnd.random() < 0.1))},
        lambda: {"min_compute_capability": rnd.choice(VERSIONS + BAD_VERSIONS)},
        lambda: {"max_compute_capability": rnd.choice(VERSIONS)},
        lambda: {"min_cuda": rnd.choice(VERSIONS + BAD_VERSIONS)},
        lambda: {"gpu_vendor": rnd.choice(["nvidia", "NVIDIA", "amd", "google"])},
        lambda: {"cpu_arch": rnd.choice(["x86", "ARM", "arm"])},
        lambda: {"spot": rnd.choice([True, False])},
        lambda: {"location": _one_or_list(rnd, LOCATIONS)},
        lambda: {"country": _one_or_list(rnd, COUNTRIES)},
        lambda: {"area": _one_or_list(rnd, AREAS)},
        lambda: _range(rnd, "min_price", "max_price", [0.1, 0.5, 1, 2, 3.5, 8, 40]),
        lambda: _range(rnd, "min_gpu_count", "max_gpu_count", [0, 1, 2, 4, 8]),
        lambda: _range(rnd, "min_gpu_memory", "max_gpu_memory", [16, 24, 40, 80, 141]),
        lambda: _range(rnd, "min_cpu", "max_cpu", [2, 8, 16, 32, 96]),
        lambda: _range(rnd, "min_memory", "max_memory", [8, 32, 64, 256, 1000]),
        lambda: {"min_total_gpu_memory": rnd.choice([80, 160, 640])},
        lambda: {"min_disk_size": rnd.choice([50, 100, 1000])},
        lambda: {"allowed_flags": rnd.choice([[], ["oci-spot"], {"runpod-cluster", "gcp-a4"}])},
        lambda: {"available": rnd.choice([True, False])},
        lambda: {"resale": rnd.choice([True, False])},
        lambda: {"max_age": dt.timedelta(days=rnd.choice([1, 30, 3650, 36500]))},
    ]
    f: dict[str, Any] = {}
    for d in rnd.sample(drawers, rnd.randint(1, 3)):
        f.update(d())
    return f


def _key(i: CatalogItem) -> tuple[Any, ...]:
    return (i.provider, i.instance_name, i.location, i.price, i.spot, i.gpu_count, i.gpu_name)


def _outcome(run: Any) -> Any:
    try:
        return Counter(map(_key, run()))
    except (TypeError, ValueError) as e:
        return (type(e), str(e))


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Catalog, list[CatalogItem]]:
    # An empty folder publishes nothing: the catalog falls back to the bundled snapshot.
    catalog = Catalog(catalog_url=str(tmp_path_factory.mktemp("empty")))
    every = catalog.query()
    assert catalog.status().source == "bundled" and len(every) > 1000
    return catalog, every


def _matching(every: list[CatalogItem], f: dict[str, Any]) -> list[CatalogItem]:
    q = QueryFilter(**f)  # once, as a caller filtering a list does
    return [i for i in every if matches(i, q)]


CHUNKS = 4
PER_CHUNK = 100


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_filters_answer_the_same_on_both_paths(bundled, chunk):
    catalog, every = bundled
    rnd = random.Random(39_000 + chunk)
    differ = []
    refused = 0
    for _ in range(PER_CHUNK):
        f = draw(rnd)
        fast = _outcome(lambda f=f: catalog.query(**f))
        slow = _outcome(lambda f=f: _matching(every, f))
        refused += isinstance(fast, tuple)
        if fast != slow:
            differ.append((f, fast if isinstance(fast, tuple) else sum(fast.values()), slow))
    assert not differ, differ[:3]
    assert refused < PER_CHUNK // 2  # most filters are answers, not errors


@pytest.mark.parametrize(
    "given, n_min",
    [
        ({"provider": "runpod"}, 100),
        ({"provider": "RunPod"}, 100),
        ({"gpu_name": "h100-pcie"}, 1),
        ({"gpu_name": "A100-80GB"}, 1),
        ({"min_compute_capability": 8.9}, 100),
        ({"gpu_name": "RTX 4090"}, 1),
    ],
)
def test_the_issue_39_disagreements_agree(bundled, given, n_min):
    catalog, every = bundled
    fast = catalog.query(**given)
    slow = _matching(every, given)
    assert len(fast) >= n_min
    assert Counter(map(_key, fast)) == Counter(map(_key, slow))


def test_a_bare_string_is_one_name_not_its_letters():
    p = parsed(QueryFilter(provider="aws", gpu_name="A100"))
    assert p.providers == frozenset({"aws"})
    assert p.gpu_names == frozenset({"a100"})
    assert matches(item(provider="aws", gpu_name="A100"), QueryFilter(provider="aws"))
    assert matches(item(gpu_name="A100"), QueryFilter(gpu_name="A100"))


def test_versions_are_read_the_same_everywhere():
    for spelling in (8.9, "8.9", (8, 9)):
        p = parsed(QueryFilter(min_compute_capability=spelling))
        assert p.min_compute_capability == (8, 9)
    l4, a100 = item(gpu_name="L4", gpu_memory=24.0), item(gpu_name="A100")
    q = QueryFilter(min_compute_capability=8.9)
    assert matches(l4, q) and not matches(a100, q)
    assert make_filter(min_compute_capability="8.9").min_compute_capability == (8, 9)


def test_vastai_pushdown_reads_the_parsed_form():
    assert vast_filters(QueryFilter(min_compute_capability="8.6"))["compute_cap"] == {"gte": 860}
    assert vast_filters(QueryFilter(min_compute_capability=8.9))["compute_cap"] == {"gte": 890}
    body = vast_filters(QueryFilter(gpu_name="RTX 4090"))  # a bare string: one name
    assert body["gpu_name"] == {"in": ["RTX 4090"]}


def test_an_unknown_provider_is_refused_with_the_closest_names_on_every_path(bundled):
    catalog, _ = bundled
    with pytest.raises(UnknownProviderError, match="did you mean 'lambdalabs'"):
        provider_name("lambda")
    with pytest.raises(UnknownProviderError, match="did you mean 'lambdalabs'"):
        catalog.query(provider="lambda")
    with pytest.raises(UnknownProviderError, match="did you mean 'lambdalabs'"):
        matches(item(), QueryFilter(provider=["lambda"]))
    with pytest.raises(UnknownProviderError, match="did you mean 'lambdalabs'"):
        catalog.explain(provider="lambda")


def test_the_parsed_form_is_kept_until_a_field_is_set():
    q = QueryFilter(gpu_name=["H100"])
    first = parsed(q)
    assert parsed(q) is first and isinstance(first, ParsedQuery)
    q.gpu_name = ["A100"]  # dstack sets fields one by one
    assert parsed(q).gpu_names == frozenset({"a100"})
    assert "_gpuhunt_parsed" not in q.__getstate__()


def test_a_filter_checked_again_elsewhere_is_parsed_again():
    from gpuhunt._internal import validate

    q = QueryFilter(gpu_name=["H100"])
    parsed(q)
    q.gpu_name = ["A100"]
    validate.ensure_checked(q)  # sets the mark again: the old parsed form must not come back
    assert parsed(q).gpu_names == frozenset({"a100"})
