"""Asking online providers during a query: every provider at once on the catalog's threads,
waiting for all of them within one time budget; a provider that fails or is late is left out
and its error kept, never raised. What providers answer is checked at this boundary, once for
all of them: an offer with a price that is not a finite positive number, or counts and sizes
that are not sane, is skipped and counted (a NaN would also break the merge's price order)."""

from __future__ import annotations

import logging
import math
import numbers
import time
from concurrent.futures import Executor, Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from gpuhunt._internal.constraints import matches
from gpuhunt._internal.models import CatalogItem, LiveProvider, QueryFilter

logger = logging.getLogger(__name__)

Asked = list[tuple[LiveProvider, "Future[list[CatalogItem]]"]]


def ask(
    executor: Executor, providers: list[LiveProvider], q: QueryFilter, balance_resources: bool
) -> Asked:
    """Start every provider's `get` (the offline part of the query runs meanwhile)."""
    return [
        (p, executor.submit(p.get, query_filter=q, balance_resources=balance_resources))
        for p in providers
    ]


MAX_CPUS = 65_536
MAX_GPUS = 1_024
MAX_MEMORY_GIB = 1_048_576.0  # 1 PiB: far beyond any one machine; anything larger is garbage
MAX_DISK_GIB = 1_048_576_000.0


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _count(value: Any, top: int) -> bool:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        return False
    return 0 <= int(value) <= top


def _size(value: Any, top: float, optional: bool = False) -> bool:
    if value is None:
        return optional
    return _number(value) and math.isfinite(value) and 0 <= value <= top


def offer_problem(item: Any) -> str | None:
    """Why an online offer cannot be served, or None when it can."""
    if not isinstance(item, CatalogItem):
        return f"not an offer ({type(item).__name__})"
    price = item.price
    if not _number(price) or not math.isfinite(price) or price <= 0:
        return f"price {price!r:.40} is not a finite positive number"
    if not _count(item.cpu, MAX_CPUS):
        return f"cpu {item.cpu!r:.40} is not a sane count"
    if not _count(item.gpu_count, MAX_GPUS):
        return f"gpu_count {item.gpu_count!r:.40} is not a sane count"
    if not _size(item.memory, MAX_MEMORY_GIB):
        return f"memory {item.memory!r:.40} is not a sane size"
    if not _size(item.gpu_memory, MAX_MEMORY_GIB, optional=True):
        return f"gpu_memory {item.gpu_memory!r:.40} is not a sane size"
    if not _size(item.disk_size, MAX_DISK_GIB, optional=True):
        return f"disk_size {item.disk_size!r:.40} is not a sane size"
    return None


def valid_offers(
    provider: LiveProvider, items: Any, skipped: dict[str, int] | None = None
) -> list[CatalogItem]:
    """The offers of `items` that can be served; the others are logged, counted in `skipped`
    under the provider's name and, when the provider keeps a `last_report`, in it."""
    good: list[CatalogItem] = []
    bad = 0
    report: Any = getattr(provider, "last_report", None)
    for item in items:
        problem = offer_problem(item)
        if problem is None:
            good.append(item)
            continue
        bad += 1
        if bad <= 3:
            logger.warning("Online provider %s: skipping an offer: %s", provider.NAME, problem)
        if report is not None and hasattr(report, "skip"):
            report.skip(getattr(item, "instance_name", "an offer"), problem)
    if skipped is not None:
        if bad:
            skipped[provider.NAME] = bad
        else:
            skipped.pop(provider.NAME, None)
    return good


def answers(
    asked: Asked,
    q: QueryFilter,
    timeout: float,
    errors: dict[str, str],
    skipped: dict[str, int] | None = None,
) -> list[list[CatalogItem]]:
    """Each provider's matching, valid offers, in its own order, from those that answered within
    `timeout` seconds; `errors` gets why the others are left out (and loses a provider's old
    error when it answers), `skipped` how many offers each provider had to leave out."""
    deadline = time.monotonic() + timeout
    found = []
    for p, fut in asked:
        try:
            items = fut.result(timeout=max(0.0, deadline - time.monotonic()))
        except FutureTimeout:
            errors[p.NAME] = f"timed out after {timeout:g}s"
            logger.warning("Online provider %s timed out; its offers are left out", p.NAME)
            continue
        except Exception as e:
            errors[p.NAME] = f"{type(e).__name__}: {e}"
            logger.warning("Online provider %s failed; its offers are left out: %s", p.NAME, e)
            continue
        try:
            good = valid_offers(p, items, skipped)
        except TypeError as e:  # not even a list of offers
            errors[p.NAME] = f"unusable answer: {e}"
            continue
        errors.pop(p.NAME, None)
        found.append([i for i in good if matches(i, q)])
    return found
