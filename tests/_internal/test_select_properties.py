"""The vectorised `Table.select` answers exactly what `matches` answers, for filters that select
something: one to three fields set, thresholds from the catalog's own values (see filtergen).

A check that compares two empty answers proves nothing, so the share of non-empty answers is
reported in the Hypothesis statistics (`pytest --hypothesis-show-statistics`) and asserted over
a fixed, seeded run.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import event, given, note, settings, target
from hypothesis import strategies as st

from gpuhunt import QueryFilter, matches
from tests._internal.fastpath import select, table_of
from tests._internal.filtergen import FIELDS, draw_filter, random_offers

PROVIDERS = ["aws", "gcp", "runpod"]


def expected_answer(items, q, providers=None):
    """`matches` over the offers, in price order; ties in provider order, then file order."""
    return sorted(
        (i for i in items if matches(i, q) and (providers is None or i.provider in providers)),
        key=lambda i: (i.price, PROVIDERS.index(i.provider)),
    )


def random_filter(rnd, items, chosen=None):
    kw, fields = draw_filter(rnd, items, chosen=chosen)
    return QueryFilter(**kw), fields


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 2**32),
    st.integers(5, 40),
    st.integers(2, 8),
    st.randoms(use_true_random=False),
    st.sampled_from([None, ["gcp"], ["aws", "runpod"]]),
)
def test_select_equals_matches_on_selective_filters(seed, size, n_shapes, rnd, providers):
    # The catalog and the fields set come from a seeded generator (cheap; every field about as
    # often, where Hypothesis's own draws favour the first ones; reproducible from the seed
    # shown), the settings of those fields from Hypothesis's random (shrinks on failure).
    seeded = random.Random(seed)
    items = random_offers(seeded, size, PROVIDERS, n_shapes=n_shapes)
    chosen = seeded.sample(FIELDS, seeded.choice([1, 2, 2, 3]))
    q, fields = random_filter(rnd, items, chosen)
    note(f"filter: {q!r}")
    table = table_of(items, PROVIDERS)
    got = select(table, q, providers)
    assert got == expected_answer(items, q, providers)
    pool = [i for i in items if providers is None or i.provider in providers]
    event(
        "answer: empty" if not got else "answer: all" if len(got) == len(pool) else "answer: some"
    )
    event(f"non-empty answer: {'yes' if got else 'no'}")
    event(f"fields set: {len(fields)}")
    for name in fields:
        event(f"field drawn: {name}")
    target(1.0 if got else 0.0, label="non-empty answer")


@pytest.mark.slow
def test_most_drawn_filters_select_something_and_every_field_bites():
    """Over a fixed run of drawn filters: more than half of the answers are non-empty and leave
    some offers out, and every field, drawn alone, both keeps and drops offers somewhere."""
    rnd = random.Random(19)
    answers = non_empty = selective = 0
    bites: dict[str, set[str]] = {f.name: set() for f in FIELDS}
    for _ in range(40):
        items = random_offers(rnd, rnd.randint(10, 40), PROVIDERS)
        table = table_of(items, PROVIDERS)
        for _ in range(10):
            q, _ = random_filter(rnd, items)
            got = select(table, q)
            assert got == expected_answer(items, q), q
            answers += 1
            non_empty += bool(got)
            selective += 0 < len(got) < len(items)
        for f in FIELDS:  # each field alone
            for _ in range(3):
                q = QueryFilter(**f.draw(rnd, rnd.choice(items), items))
                got = select(table, q)
                assert got == expected_answer(items, q), q
                if got:
                    bites[f.name].add("keeps")
                if len(got) < len(items):
                    bites[f.name].add("drops")
    print(f"non-empty answers: {non_empty}/{answers}, partial: {selective}/{answers}")
    assert non_empty / answers > 0.5, (non_empty, answers)
    assert selective / answers > 0.5, (selective, answers)
    assert all(b == {"keeps", "drops"} for b in bites.values()), bites
