"""How `Catalog.query` answers once its filter is parsed: which online providers to ask, the
offline catalog's offers, stand-ins from the catalog for online providers that did not answer,
and the merged answer (split from `catalog.py` by job; the catalog's state stays there and is
handed over as an `Asking`, so this module reads nothing private of the catalog)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from gpuhunt._internal import registry
from gpuhunt._internal.errors import OnlineProvidersFailedError
from gpuhunt._internal.load.loaded import Loaded
from gpuhunt._internal.models import CatalogItem, LiveProvider, QueryFilter
from gpuhunt._internal.query import answers, online
from gpuhunt._internal.query.answers import merge_online
from gpuhunt._internal.query.parsed import parsed

# The catalog's logger: its warnings keep the name callers filter on.
logger = logging.getLogger("gpuhunt._internal.catalog")

NOT_ADDED = "not added to this catalog (add_provider)"


@dataclass(slots=True)  # not frozen: made per query, where a frozen one's __init__ is 3x slower
class Asking:
    """What answering one query needs of its catalog (`Catalog._asking()` makes it): the online
    providers added and their health, the pool to ask them on, the loaded catalog (`current()`
    loads or starts a reload as a query does), the GPU-name check, the time budgets."""

    online_providers: Sequence[LiveProvider]
    health: online.Health
    submit: Callable[..., Future[Any]]
    current: Callable[[], Loaded | None]
    gpu_name_problems: Callable[[list[str], set[str]], list[str]]
    warned_gpu_names: set[str]
    online_timeout: float
    online_deadline: float
    online_skipped: dict[str, int]
    balance_resources: bool
    auto_reload: bool


def answer(c: Asking, q: QueryFilter, gpu_name: str | list[str] | None) -> list[CatalogItem]:
    """`query` once its filter is made (and parsed): ask online providers, read the
    catalog, merge the answers."""
    wanted = parsed(q).providers  # the registry's names; unknown ones were refused
    live = [p for p in c.online_providers if wanted is None or p.NAME.lower() in wanted]
    newly: list[str] = []
    if wanted is not None:
        added = {p.NAME.lower() for p in c.online_providers}
        # gpuhunt 0.1.x raised here; an answer without it (and the reason) is kinder.
        not_added = sorted(wanted - added - set(registry.OFFLINE_PROVIDERS))
        newly = [n for n in not_added if c.health.errors.get(n) != NOT_ADDED]
        for name in not_added:
            c.health.errors[name] = NOT_ADDED
    asked = online.ask(c.submit, live, q, c.balance_resources, c.health)
    # One query reads one catalog: the first read of the loaded table is the one every
    # part of the answer uses, though a reload may swap in another meanwhile.
    read: list[Loaded | None] = []

    def loaded() -> Loaded | None:
        if not read:
            read.append(c.current())
        return read[0]

    offline = [p for p in registry.OFFLINE_PROVIDERS if wanted is None or p in wanted]
    offers = query_offline(c, offline, q, loaded) if offline else []
    if gpu_name is not None:
        for problem in c.gpu_name_problems(
            [gpu_name] if isinstance(gpu_name, str) else gpu_name, c.warned_gpu_names
        ):
            logger.warning("%s", problem)
    # Only online providers named, and none answered: raise, as gpuhunt 0.1.x did, rather
    # than an empty answer a caller would take (and cache) for "no offers" (issue #23).
    named_online_only = wanted is not None and not offline
    answered: set[str] = set()
    found = (
        online.answers(
            asked,
            q,
            c.online_timeout if wanted is not None else c.online_deadline,
            c.health,
            c.online_skipped,
            answered,
            resubmit=lambda p: online.submit_get(c.submit, p, q, c.balance_resources),
        )
        if asked
        else []
    )
    # Online providers whose offers the loaded catalog holds (only the bundled snapshot
    # has any) answer for one that is not added or did not answer this time.
    standing_in = stand_ins(
        c,
        [
            p
            for p in registry.ONLINE_PROVIDERS
            if (wanted is None or p in wanted) and p not in answered
        ],
        loaded,
    )
    for name in standing_in:  # answered after all, from the catalog
        if c.health.errors.get(name) == NOT_ADDED:
            del c.health.errors[name]
    if wanted is not None:
        for name in newly:
            if name not in standing_in:
                logger.warning("Online provider %s was asked for but not added", name)
    if named_online_only and live and not answered and not standing_in:
        assert wanted is not None
        raise OnlineProvidersFailedError({name: why_no_answer(c, name) for name in sorted(wanted)})
    if standing_in:
        offers = merge_online(offers, [query_offline(c, standing_in, q, loaded)])
    if not asked:
        return offers
    return merge_online(offers, found)


def stand_ins(
    c: Asking, missing: list[str], current: Callable[[], Loaded | None] | None = None
) -> list[str]:
    """Those of `missing` whose offers the catalog holds; loads it if a query naming only
    online providers has not (so a query that every live provider answered loads nothing).
    `current`: the query's one read of the catalog."""
    if not missing:
        return []
    loaded = (current or c.current)()
    held = set(loaded.table.providers) if loaded is not None else set()
    return [p for p in missing if p in held]


def why_no_answer(c: Asking, name: str) -> str:
    why = c.health.errors.get(name, "did not answer")
    wait = c.health.retry_in(name)
    if wait is not None:
        why = f"{why}; next try in {wait:.0f}s"
    return why


def query_offline(
    c: Asking,
    providers: list[str],
    q: QueryFilter,
    current: Callable[[], Loaded | None] | None = None,
) -> list[CatalogItem]:
    loaded = (current or c.current)()
    if loaded is None:
        if not c.auto_reload:
            logger.warning("Catalog not loaded (auto_reload=False and no load() yet)")
        return []
    table = loaded.table
    everyone = set(table.providers) <= set(providers)
    return answers.items(table, table.select(q, None if everyone else providers))
