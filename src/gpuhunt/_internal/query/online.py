"""Asking online providers during a query: every provider at once on the catalog's threads,
waiting for all of them within one time budget; a provider that fails or is late is left out
and its error kept, never raised.

A provider that failed is not asked again until its backoff has passed (30 s after the first
failure, doubling up to 15 minutes, as catalog reloads are), and is then retried in the
background, on the query's filter, without the query waiting for it: once it answers, later
queries ask it again (and find its answer in the live cache). It is warned about once per run of
failures, and all the providers one query finds failing in one line (with no network, every
online provider at once). Without a network every query would otherwise wait out the budget and log the same
warnings again.

What providers answer is checked at this boundary, once for
all of them: an offer with a price that is not a finite positive number, or counts and sizes
that are not sane, is skipped and counted (a NaN would also break the merge's price order).

A provider's `get()` runs on the pool's thread to the end, its answer read there: a `get()`
that is a generator and raises after some offers contributes none of them (an answer cut short
may lack its cheapest offers, which is worse than a provider reported missing) and is
reported in `status().online_errors` like any failure. A request that `Catalog.close()`
cancelled before it started is sent again (`resubmit`), and never counts as a failure.

The wait is one deadline for all providers together, counted from the query's start (`ask`),
not from when the offline part of the query is done. A provider that failed or missed it is
also remembered across processes (a `Memory`: `load.unreachable.Providers`, the mechanism the
catalog server's failures use, in the disk cache folder): the next process within the window does not ask it
and answers at once, from the catalog's stand-in offers where the bundled snapshot has them.
Its answer, in any process, ends the record."""

from __future__ import annotations

import datetime as dt
import logging
import numbers
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import CancelledError, Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Protocol

from gpuhunt._internal import backoff, observed
from gpuhunt._internal.errors import BrokenAnswer
from gpuhunt._internal.models import CatalogItem, LiveProvider, QueryFilter
from gpuhunt._internal.query.match import matches

logger = logging.getLogger(__name__)

RETRY_AFTER_FAILURE = backoff.DEFAULT  # backoff after a provider fails: first, cap


class Asked(list[tuple[LiveProvider, "Future[list[CatalogItem]]"]]):
    """The requests a query started, and when it started them (monotonic): the online wait is
    counted from there, so the offline part of the query does not lengthen it."""

    def __init__(self, started: float | None = None) -> None:
        super().__init__()
        self.started = time.monotonic() if started is None else started


class Record(Protocol):
    """What `Memory.quiet` returns: a failure streak another process recorded."""

    @property
    def failures(self) -> int: ...

    @property
    def failed_at(self) -> float: ...  # wall clock

    @property
    def retry_at(self) -> float: ...  # wall clock

    @property
    def error(self) -> str: ...


class Memory(Protocol):
    """Online providers that got no answer, remembered across processes
    (`load.unreachable.Providers`, which a `Catalog` hands its `Health`)."""

    def quiet(self, name: str) -> Record | None: ...

    def note(self, name: str, error: str) -> None: ...

    def clear(self, name: str) -> None: ...


Submit = Callable[..., "Future[Any]"]  # Executor.submit, or what stands for it


@dataclass
class _Streak:
    failures: int
    retry_at: float  # on the health's clock
    probing: bool = False  # a background retry is running


class Health:
    """Which online providers failed, why, and when each may be asked again."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, memory: Memory | None = None
    ) -> None:
        self.clock = clock
        self.memory = memory  # other processes' failures, and ours for them
        self.errors: dict[str, str] = {}  # provider -> why its offers were left out last time
        self._streaks: dict[str, _Streak] = {}
        self._lock = threading.Lock()
        self.probes: dict[str, Future[None]] = {}  # the latest background retry of each

    def after_fork(self) -> None:
        """In a forked child: the parent's background retries are not running here."""
        self._lock = threading.Lock()
        self.probes = {}
        for streak in self._streaks.values():
            streak.probing = False

    def probe_cancelled(self, name: str) -> None:
        """A background retry that never ran (`close()` cancelled it): the next query may
        start another."""
        with self._lock:
            streak = self._streaks.get(name)
            if streak is not None:
                streak.probing = False

    def failing(self, name: str) -> bool:
        if name in self._streaks:
            return True
        record = self.memory.quiet(name) if self.memory is not None else None
        if record is None:
            return False
        why = (
            f"not asked: it got no answer {max(0, round(time.time() - record.failed_at))}s ago "
            f"({record.error})"
        )
        with self._lock:
            if name not in self._streaks:
                left = max(0.0, record.retry_at - time.time())
                self._streaks[name] = _Streak(record.failures, self.clock() + left)
                self.errors[name] = why
        return True

    def start_probe(self, name: str) -> bool:
        """Whether the caller should retry a failing provider now (its backoff is over and no
        retry is running); if so, a retry is now running."""
        with self._lock:
            streak = self._streaks.get(name)
            if streak is None or streak.probing or streak.retry_at > self.clock():
                return False
            streak.probing = True
            return True

    def retry_in(self, name: str) -> float | None:
        """Seconds until a failed provider may be asked again; None if it may be now."""
        streak = self._streaks.get(name)
        if streak is None:
            return None
        wait = streak.retry_at - self.clock()
        return wait if wait > 0 else None

    def backoffs(self) -> dict[str, float]:
        return {n: w for n in list(self._streaks) if (w := self.retry_in(n)) is not None}

    def failed(self, name: str, error: str, warn: bool = True) -> float | None:
        """Record a failure; the wait before the next try when it starts a streak (warned
        about here unless `warn` is False: `answers` warns once for all of a query's), else
        None."""
        with self._lock:
            streak = self._streaks.get(name)
            failures = 1 if streak is None else streak.failures + 1  # ends any probe
            wait = backoff.delay(failures, RETRY_AFTER_FAILURE)
            self._streaks[name] = _Streak(failures, self.clock() + wait)
            self.errors[name] = error
        if self.memory is not None:
            self.memory.note(name, error)
        if failures == 1:
            if warn:
                logger.warning(
                    "Online provider %s left out (%s); not asked again for %gs", name, error, wait
                )
            return wait
        logger.debug("Online provider %s failed again (%s); next try in %gs", name, error, wait)
        return None

    def succeeded(self, name: str) -> None:
        with self._lock:
            self._streaks.pop(name, None)
            self.errors.pop(name, None)
        if self.memory is not None:
            self.memory.clear(name)


def warn_left_out(new: dict[str, str], wait: float) -> None:
    """One warning line for every provider a query left out that had been answering: without a
    network that is every online provider at once, and a line each buries the answer. The
    errors themselves are in `Catalog.status().online_errors`."""
    if len(new) == 1:
        ((name, error),) = new.items()
        logger.warning(
            "Online provider %s left out (%s); not asked again for %gs", name, error, wait
        )
    elif new:
        # "ProviderError: vastai: POST https://... failed: ConnectionError" -> "ConnectionError"
        causes = sorted({error.rsplit(": ", 1)[-1][:60] for error in new.values()})
        logger.warning(
            "%d online providers left out (%s): %s; not asked again for %gs "
            "(each error: Catalog.status().online_errors)",
            len(new),
            ", ".join(causes) if len(causes) <= 2 else "errors differ",
            ", ".join(sorted(new)),
            wait,
        )


def ask(
    submit: Submit,
    providers: list[LiveProvider],
    q: QueryFilter,
    balance_resources: bool,
    health: Health | None = None,
) -> Asked:
    """Start every provider's `get` (the offline part of the query runs meanwhile). Providers
    that `health` says are failing are left out: retried in the background once their backoff is
    over, not waited for."""
    asked = Asked()
    for p in providers:
        if health is None or not health.failing(p.NAME):
            asked.append((p, submit_get(submit, p, q, balance_resources)))
        elif health.start_probe(p.NAME):
            probe = submit(_probe, p, q, balance_resources, health)
            probe.add_done_callback(_on_probe_done(health, p.NAME))
            health.probes[p.NAME] = probe
    return asked


def _late_answer(health: Health, name: str) -> Callable[[Future[Any]], None]:
    def done(f: Future[Any]) -> None:
        if not f.cancelled() and f.exception() is None:
            health.succeeded(name)

    return done


def _on_probe_done(health: Health, name: str) -> Callable[[Future[Any]], None]:
    def done(f: Future[Any]) -> None:
        if f.cancelled():
            health.probe_cancelled(name)

    return done


def submit_get(
    submit: Submit, p: LiveProvider, q: QueryFilter, balance_resources: bool
) -> Future[list[CatalogItem]]:
    return submit(collect, p, q, balance_resources)


def collect(p: LiveProvider, q: QueryFilter, balance_resources: bool) -> Any:
    """`p.get()`, its answer read to the end here, on the provider's thread (a generator read
    by the query's thread could raise out of `query()`, or run past the online budget)."""
    answer: Any = p.get(query_filter=q, balance_resources=balance_resources)
    if isinstance(answer, (list, tuple, str, bytes)) or not isinstance(answer, Iterable):
        return answer  # `valid_offers` judges what is not a list of offers
    items: list[Any] = []
    try:
        for item in answer:
            items.append(item)
    except Exception as e:  # noqa: BLE001 - a provider's iterator may raise anything; reported
        raise BrokenAnswer(
            f"its answer broke off after {len(items)} offers ({type(e).__name__}: {e}); "
            "none of them is used"
        ) from None
    return items


def _probe(p: LiveProvider, q: QueryFilter, balance_resources: bool, health: Health) -> None:
    try:
        collect(p, q, balance_resources)
    except Exception as e:  # noqa: BLE001 - any failure of the probe is the provider's health
        health.failed(p.NAME, f"{type(e).__name__}: {e}")
    else:
        health.succeeded(p.NAME)


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def offer_problem(item: Any) -> str | None:
    """Why an online offer cannot be served, or None when it can: its fields' types here, their
    values by the rule published rows meet too (`schema.value_problem`)."""
    # Here: a query answered from the catalog alone (every warm CLI run) never reads a row.
    from gpuhunt._internal import schema

    if not isinstance(item, CatalogItem):
        return f"not an offer ({type(item).__name__})"
    for name, kind, optional in (
        ("price", _number, False),
        ("cpu", _integer, False),
        ("gpu_count", _integer, False),
        ("memory", _number, False),
        ("gpu_memory", _number, True),
        ("disk_size", _number, True),
    ):
        value = getattr(item, name)
        if value is None and optional:
            continue
        if not kind(value):
            return f"{name} {value!r:.40} is not {schema.BOUNDS[name][3]}"
        problem = schema.value_problem(name, value)
        if problem is not None:
            return problem
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
    good = observed.stamp_items(good, dt.datetime.now(dt.timezone.utc))  # when it answered
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
    health: Health,
    skipped: dict[str, int] | None = None,
    answered: set[str] | None = None,
    resubmit: Callable[[LiveProvider], Future[list[CatalogItem]]] | None = None,
) -> list[list[CatalogItem]]:
    """Each provider's matching, valid offers, in its own order, from those that answered within
    `timeout` seconds; `health` learns which failed (and forgets those that answered),
    `skipped` how many offers each provider had to leave out, `answered` which answered. A
    request cancelled before it ran (by `Catalog.close()`) is sent again with `resubmit`, and
    is no failure. `timeout` counts from when `asked` was started (`Asked.started`), so the
    part of the query done meanwhile is within it."""
    deadline = getattr(asked, "started", time.monotonic()) + timeout
    found = []
    new: dict[str, str] = {}  # providers this query found failing, warned about in one line
    waits: list[float] = []

    def failed(name: str, error: str) -> None:
        wait = health.failed(name, error, warn=False)
        if wait is not None:
            new[name] = error
            waits.append(wait)

    for p, first in asked:
        fut = first
        try:
            for attempt in range(3):
                try:
                    items = fut.result(timeout=max(0.0, deadline - time.monotonic()))
                    break
                except CancelledError:
                    if resubmit is None or attempt == 2:
                        raise
                    fut = resubmit(p)
        except CancelledError:
            logger.debug("Online provider %s: its request was cancelled by close()", p.NAME)
            # Not a failure, so not a reason to raise "every provider named failed" either.
            if answered is not None:
                answered.add(p.NAME.lower())
            continue
        except FutureTimeout:
            failed(p.NAME, f"timed out after {timeout:g}s")
            # An answer that comes later (in this process) ends the backoff and the record.
            fut.add_done_callback(_late_answer(health, p.NAME))
            continue
        except Exception as e:  # noqa: BLE001 - one provider failing must not fail the query
            failed(p.NAME, f"{type(e).__name__}: {e}")
            continue
        try:
            good = valid_offers(p, items, skipped)
        except TypeError as e:  # not even a list of offers
            failed(p.NAME, f"unusable answer: {e}")
            continue
        health.succeeded(p.NAME)
        if answered is not None:
            answered.add(p.NAME.lower())
        found.append([i for i in good if matches(i, q)])
    warn_left_out(new, min(waits, default=0.0))
    return found
