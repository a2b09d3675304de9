"""Asking online providers during a query: every provider at once on the catalog's threads,
waiting for all of them within one time budget; a provider that fails or is late is left out
and its error kept, never raised."""

from __future__ import annotations

import logging
import time
from concurrent.futures import Executor, Future
from concurrent.futures import TimeoutError as FutureTimeout

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


def answers(
    asked: Asked, q: QueryFilter, timeout: float, errors: dict[str, str]
) -> list[list[CatalogItem]]:
    """Each provider's matching offers, in its own order, from those that answered within
    `timeout` seconds; `errors` gets why the others are left out (and loses a provider's old
    error when it answers)."""
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
        errors.pop(p.NAME, None)
        found.append([i for i in items if matches(i, q)])
    return found
