"""What `gpuhunt serve` and `gpuhunt mcp` answer, over one process-wide `Catalog`: the offers
of a request (the rows `gpuhunt query --json` prints, through `rows.offer_row`), its
explanation, and the catalog's status, each as a JSON-ready value with the ETag and the
freshness that go with it. No HTTP or MCP here: both doors call `Service`.

Every answer comes from one catalog version: the catalog swaps a reloaded table in by one
assignment, and an answer is kept only if the same table was loaded before and after it was
computed (else it is computed again), so the version an answer names is the one its offers
come from.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import hashlib
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from gpuhunt._internal import catalog_costs, query_checks
from gpuhunt._internal.collapse import CollapsedOffer, collapse_regions
from gpuhunt._internal.errors import GPUHuntError, QueryInputError
from gpuhunt._internal.models import CatalogItem
from gpuhunt._internal.observed import provider_ages
from gpuhunt._internal.query import spec, top
from gpuhunt._internal.query.filters import make_filter
from gpuhunt._internal.query.order import sort_offers
from gpuhunt._internal.rows import offer_row
from gpuhunt._internal.serve.parameters import ParameterError, Request, parameter_error
from gpuhunt._version import __version__

if TYPE_CHECKING:
    from gpuhunt._internal.catalog import Catalog
    from gpuhunt._internal.explain import Explanation
    from gpuhunt._internal.load.loaded import Loaded
    from gpuhunt._internal.query.table import Table

T = TypeVar("T")

RELATIVE = {"age_seconds", "next_retry_in", "online_retry_in"}  # of status(): from now
ROWS_AT_ONCE = 256  # offers built, turned into rows and encoded at a time
ATTEMPTS = 5  # an answer computed across a reload is computed again, this many times at most


class Unavailable(GPUHuntError):
    """No catalog to answer from (503): none loaded, or it kept changing under the answer."""


@dataclass(frozen=True)
class Encoded:
    """An answer already encoded: its body in `pieces` (read once), its `etag`, `max_age`
    (as `Reply`'s) and how many offers it holds (`rows`)."""

    pieces: Iterator[bytes]
    etag: str
    max_age: int | None
    rows: int


@dataclass(frozen=True)
class Reply:
    """A JSON-ready `body`, its `etag` (quoted, as the header carries it) and how many seconds
    a cache may keep it (`max_age`, None: revalidate every time)."""

    body: Any
    etag: str
    max_age: int | None


def etag(*parts: str) -> str:
    digest = hashlib.sha256("\x1f".join((__version__, *parts)).encode()).hexdigest()
    return f'"{digest[:32]}"'


def jsonable(value: Any) -> Any:
    """`value` as JSON can write it: offers as `--json` rows, enums as their values, dates in
    ISO 8601, tuples as lists, dataclasses as objects, non-finite floats as null."""
    if isinstance(value, CatalogItem):
        return jsonable(offer_row(value))
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value) if isinstance(value, (set, frozenset)) else value
        return [jsonable(v) for v in items]
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def row(
    r: CatalogItem | CollapsedOffer, priced: catalog_costs.AnswerCosts | None = None
) -> dict[str, Any]:
    """One offer of the answer: a `gpuhunt query --json` row (with its costs' keys when
    priced: docs/costs.md); a collapsed offer (one per distinct offer, `all_regions=false`) is
    its cheapest location's row, plus `locations`, every location selling it, cheapest first."""
    extra = priced.values(r.offer if isinstance(r, CollapsedOffer) else r) if priced else {}
    if isinstance(r, CollapsedOffer):
        return {**offer_row(r.offer), **extra, "locations": list(r.locations)}
    return {**offer_row(r), **extra}


def _offer_of(r: CatalogItem | CollapsedOffer) -> CatalogItem:
    return r.offer if isinstance(r, CollapsedOffer) else r


def explanation(e: Explanation) -> dict[str, Any]:
    """`Catalog.explain`'s answer as JSON: its facts, near misses as `--json` rows, and
    `lines`, the text `gpuhunt query --explain` prints."""
    out = jsonable(e)
    out["left"] = e.left
    out["lines"] = e.lines()
    return out  # type: ignore[no-any-return]


class Service:
    """The answers of both doors, over `catalog` (which the caller made and closes)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    # -------------------------------------------------------------- versions and freshness

    def _loaded(self) -> Loaded | None:
        return self.catalog.current(load=False)

    def _consistent(self, compute: Callable[[], T]) -> tuple[T, Loaded]:
        """`compute()` and the catalog it read: kept only when the same table was loaded
        before and after it (a reload swaps the table in by one assignment, and every load
        makes a new table, so the answer read that one)."""
        for _ in range(ATTEMPTS):
            before = self._loaded()
            result = compute()
            after = self._loaded()
            if before is not None and after is not None and before.table is after.table:
                return result, after
        raise Unavailable("the catalog kept changing while the answer was computed; try again")

    def max_age(self, loaded: Loaded) -> int:
        """Seconds until the catalog may be reloaded: what a cache may keep an answer."""
        if loaded.degraded:  # served from a fallback: the next query tries to reload
            return 0
        interval = self.catalog.reload_interval
        if not math.isfinite(interval):
            return 3600
        age = self.catalog.now() - loaded.loaded_at
        return max(0, min(int(interval), int(interval - age)))

    def current_etag(self, endpoint: str, request: Request) -> str | None:
        """The ETag an answer to `request` would have now (None before any load): a cheap
        check of `If-None-Match` before computing anything."""
        # As a query does: a stale catalog starts its reload in the background here, so
        # answers served from the ETag alone (304s, the answer cache) still pick a new
        # version up within the reload interval.
        loaded = self.catalog.current()
        return None if loaded is None else self._etag(endpoint, request, loaded)

    def _etag(self, endpoint: str, request: Request, loaded: Loaded) -> str:
        return etag(endpoint, loaded.version, loaded.source, loaded.url, request.key)

    def ready(self) -> None:
        """Load the catalog now (a server does this before it listens)."""
        if self._loaded() is None:
            self.catalog.load()

    # -------------------------------------------------------------- the answers

    def offers(self, request: Request) -> Reply:
        chosen = self._chosen(request)
        if chosen is None:
            return self._built_offers(request)
        found, table, loaded = chosen
        body = {
            "offers": [r for batch in top.row_batches(found, table, ROWS_AT_ONCE) for r in batch],
            "total": found.total,
            "catalog": {"version": loaded.version, "source": loaded.source},
            "providers": self._ages(loaded, self._providers_of(found, table)),
        }
        return Reply(body, self._etag("offers", request, loaded), self.max_age(loaded))

    def offers_encoded(self, request: Request, dumps: Callable[[Any], bytes]) -> Encoded:
        """`offers(request)`'s body as `dumps` writes it, in pieces encoded a few rows at a
        time as they are read (`top.json_chunks`): only the answer's first `limit` offers are
        ever built, and a big answer is never held whole."""
        chosen = self._chosen(request)
        if chosen is None:
            r = self._built_offers(request)
            return Encoded(iter([dumps(r.body)]), r.etag, r.max_age, len(r.body["offers"]))
        found, table, loaded = chosen
        catalog = {"version": loaded.version, "source": loaded.source}
        ages = self._ages(loaded, self._providers_of(found, table))
        pieces = top.json_chunks(
            top.row_batches(found, table, ROWS_AT_ONCE), found.total, catalog, dumps, providers=ages
        )
        tag = self._etag("offers", request, loaded)
        return Encoded(pieces, tag, self.max_age(loaded), len(found.rows))

    def _chosen(self, request: Request) -> tuple[top.Top, Table, Loaded] | None:
        """The answer's first rows, chosen on the loaded table's columns (`query.top`); None
        where only `Catalog.query` answers as asked: a catalog with online providers added,
        or online providers' offers in the table standing in for them."""
        args = request.args
        # Priced or filtered on spot bands: through `Catalog.query`, which reads the catalog's
        # side files (docs/costs.md).
        if self.catalog.online_providers or catalog_costs.wanted(args):
            return None

        def compute() -> tuple[top.Top, Table] | None:
            if args.gpu_name:
                problems = self.catalog.gpu_name_problems(args.gpu_name)
                if problems:
                    raise ParameterError("gpu", "gpu: " + "; ".join(problems), 422)
            q = make_filter(**request.filters)
            loaded = self.catalog.current()  # as a query does: may start a reload
            if loaded is None:
                return None
            table = loaded.table
            found = top.choose(
                table, q, args.sort or "price", request.limit, bool(args.all_regions)
            )
            return None if found is None else (found, table)

        found, loaded = self._consistent(compute)
        if found is None:
            return None
        self._check_stand_ins(request)
        return found[0], found[1], loaded

    @staticmethod
    def _providers_of(found: top.Top, table: Table) -> set[str]:
        codes = np.unique(table.provider[found.rows]).tolist()
        return {table.providers[c] for c in codes}

    @staticmethod
    def _ages(loaded: Loaded, providers: set[str]) -> dict[str, dict[str, Any]]:
        """Each listed provider's data age (`observed.provider_ages`) when this catalog was
        loaded: an answer is the same bytes, and has the same ETag, for as long as the
        catalog it comes from is served (the server reloads it every reload interval)."""
        return provider_ages(loaded.manifest, providers, loaded.loaded_wall)

    def _check_stand_ins(self, request: Request) -> None:
        try:
            query_checks.check_stand_ins(
                request.args.provider, False, lambda: self.catalog.status().offers
            )
        except QueryInputError as e:
            raise parameter_error(e) from None

    def _built_offers(self, request: Request) -> Reply:
        """The answer from `Catalog.query`'s whole list of offers."""
        args = request.args

        def compute() -> list[CatalogItem]:
            if args.gpu_name:
                problems = self.catalog.gpu_name_problems(args.gpu_name)
                if problems:
                    raise ParameterError("gpu", "gpu: " + "; ".join(problems), 422)
            return self.catalog.query(**request.filters)

        offers, loaded = self._consistent(compute)
        self._check_stand_ins(request)
        sort_offers(offers, args.sort)
        offers, priced = catalog_costs.price_answer(self.catalog, args, offers)
        every_region = args.all_regions or catalog_costs.asked(args)
        rows: list[Any] = offers if every_region else collapse_regions(offers)
        shown = rows[: request.limit]
        body = {
            "offers": [row(r, priced) for r in shown],
            "total": len(rows),
            "catalog": {"version": loaded.version, "source": loaded.source},
            "providers": self._ages(loaded, {_offer_of(r).provider for r in shown}),
        }
        return Reply(body, self._etag("offers", request, loaded), self.max_age(loaded))

    def explain(self, request: Request) -> Reply:
        given = {k: v for k, v in request.filters.items() if v is not None}
        try:
            found, loaded = self._consistent(lambda: self.catalog.explain(**given))
        except (TypeError, ValueError) as e:
            raise parameter_error(e) from None
        body = {
            "explanation": explanation(found),
            "catalog": {"version": loaded.version, "source": loaded.source},
        }
        return Reply(body, self._etag("explain", request, loaded), self.max_age(loaded))

    def history(self, request: Request) -> Reply:
        """`gpuhunt history --json` of the request's filters: the cheapest price per day,
        from the price history published with the catalog (the loaded version's, unless
        `version` is given)."""
        args = request.args
        loaded = self.catalog.current()
        version = args.version or (loaded.version if loaded is not None else None)
        try:
            found = self.catalog.history(version=version, **spec.history_filters(args))
        except (TypeError, ValueError) as e:  # InputError included: a date, a provider
            raise parameter_error(e) from None
        body = found.to_dict()
        tag = etag("history", str(version), loaded.source if loaded else "", request.key)
        return Reply(body, tag, self.max_age(loaded) if loaded is not None else 0)

    def status(self) -> Reply:
        """`Catalog.status()` as JSON. Its ETag is weak: it leaves out the ages and waits
        counted from now (`loaded_at` says the same thing), which change every second."""
        body = jsonable(self.catalog.status())
        steady = {k: v for k, v in body.items() if k not in RELATIVE}
        return Reply(body, "W/" + etag("status", json.dumps(steady, sort_keys=True)), None)
