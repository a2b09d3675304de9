"""What every provider implements.

A provider turns a cloud's API answers into `CatalogItem`s. Keep the parsing pure (functions that
take decoded JSON/CSV and return items) and the I/O in small fetch functions that go through
`gpuhunt._internal.load.transport`, so tests can drive the real request code over recorded answers.

The furniture every provider shares, so that a new one is its API's specifics and nothing else:

- `Collects` (here): `get()` itself. Subclass it beside `OnlineProvider`/`OfflineProvider`, name
  the report class (`REPORT`) and write `collect(ask, report)`; `ask` holds `get()`'s arguments
  (`ask.filter`, `ask.spot`), the report ends up as `last_report`.
- `_records.offer(provider, name, location, price, cpu, memory, gpu, disk_size, ...)` and
  `_records.Gpu(count, name, vendor, memory)`: the `CatalogItem` of one offer, on-demand unless
  said. `_records.gpu_or_kept` names a GPU through the tables (an unknown one kept and counted).
- `_records.read_each(records, report, name, parse)`: one record at a time, a bad one skipped
  and counted (`BadRecord` with its reason, anything else as malformed), never the whole answer.
- `_records.text/number/count/whole/obj/need_number`: a field read, or `BadRecord` naming it.
- `_records.offer(..., available=, resold_from=, cuda_version=)` and `_records.resold_from`: the
  library's own fields of an offer (docs/availability.md), never `provider_data` keys.


Sessions: every provider has a `session` (a `requests.Session`, None by default). While its
`get()` runs, the requests it makes through the transport go through that session, so a
caller or a test passes one in (`provider.session = s`, or `Provider(...).with_session(s)`)
instead of patching module globals; a `Catalog` gives its own session (its transport, its
timeouts) to an online provider added without one. None: the transport module's shared
session, made with the default settings. Credentials stay the providers' own: `from_env()`
reads a provider's variables and is called from the top (`default_catalog()`, the CLI).
"""

from __future__ import annotations

import functools
import inspect
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from typing_extensions import Self

from gpuhunt._internal.errors import MissingCredsError
from gpuhunt._internal.load import transport
from gpuhunt._internal.models import CatalogItem, QueryFilter
from gpuhunt.providers._report import ParseReport

if TYPE_CHECKING:
    import requests

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R", bound=ParseReport)


def _with_own_session(get: F) -> F:
    """`get`, with the provider's `session` in use while it runs."""

    @functools.wraps(get)
    def run(self: AbstractProvider, *args: Any, **kwargs: Any) -> Any:
        with transport.using(self.session):
            offers = get(self, *args, **kwargs)
        if inspect.isgenerator(offers):
            # Its requests happen as it is read: each step runs on the provider's session.
            return _read_on(self.session, offers)
        return offers

    run.__dict__["_own_session"] = True
    return run  # type: ignore[return-value]


def _read_on(session: requests.Session | None, offers: Generator[Any, Any, Any]) -> Any:
    """`offers`, each step of it with `session` in use (set and reset around each step, so
    nothing is left set between steps, whoever reads it and on whichever thread)."""
    while True:
        with transport.using(session):
            try:
                offer = next(offers)
            except StopIteration as stop:
                return stop.value
        yield offer


class AbstractProvider(ABC):
    """A source of offers. `NAME` is the provider's name in catalogs, the CLI and filters."""

    NAME: str = "abstract"
    # The session this provider's requests go through (see the module's docstring).
    session: requests.Session | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        get = cls.__dict__.get("get")
        if get is not None and not getattr(get, "_own_session", False):
            cls.get = _with_own_session(get)  # type: ignore[method-assign]

    def with_session(self, session: requests.Session | None) -> Self:
        """This provider, sending its requests through `session` (None: the default)."""
        self.session = session
        return self

    @property
    def last_report(self) -> ParseReport:
        """What the last `get()` skipped, could not name and counted (an empty report before
        the first one). Every provider sets it at the end of `get()`."""
        report = self.__dict__.get("_last_report")
        if report is None:
            report = self.__dict__["_last_report"] = ParseReport(provider=self.NAME)
        return report

    @last_report.setter
    def last_report(self, report: ParseReport) -> None:
        self.__dict__["_last_report"] = report

    @abstractmethod
    def get(
        self,
        query_filter: QueryFilter | None = None,
        balance_resources: bool = True,
        apply_filter: bool = False,
    ) -> list[CatalogItem]:
        """Offers in priority order (usually by price, ascending).

        `query_filter` lets online providers ask their API for less; gpuhunt applies the filter
        again afterwards, so using it is an optimisation. `balance_resources` asks providers with
        configurable CPU/RAM/disk to size them sensibly for the GPU. `apply_filter` lets offline
        providers skip work for offers `filter()` would drop.
        """


class Ask(NamedTuple):
    """What a `get()` was asked: its three arguments, passed on to `Collects.collect`."""

    query_filter: QueryFilter | None = None
    balance_resources: bool = True
    apply_filter: bool = False

    @property
    def filter(self) -> QueryFilter:
        """The query filter, or an empty one that keeps everything."""
        return self.query_filter or QueryFilter()

    @property
    def spot(self) -> bool | None:
        return None if self.query_filter is None else self.query_filter.spot


class Collects(AbstractProvider, Generic[R], ABC):
    """The `get()` most providers would write: a fresh report of the `REPORT` kind, the offers
    `collect` reads with it, and that report kept as `last_report`. A provider subclasses this
    beside `OnlineProvider` or `OfflineProvider`, names its report class and writes only
    `collect`."""

    REPORT: type[R]

    def get(
        self,
        query_filter: QueryFilter | None = None,
        balance_resources: bool = True,
        apply_filter: bool = False,
    ) -> list[CatalogItem]:
        report = self.REPORT(provider=self.NAME)
        offers = self.collect(Ask(query_filter, balance_resources, apply_filter), report)
        self.last_report = report
        return offers

    @abstractmethod
    def collect(self, ask: Ask, report: R) -> list[CatalogItem]:
        """The offers for `ask`, counting what was skipped in `report`."""


class OnlineProvider(AbstractProvider, ABC):
    """Queried live at `Catalog.query` time; must be constructible from the environment."""

    @classmethod
    @abstractmethod
    def from_env(cls) -> Self:
        """Construct from environment variables; raise `MissingCredsError` naming the variable
        when a required one is not set (`default_catalog()` then skips the provider)."""


class OfflineProvider(AbstractProvider, ABC):
    """Collected by the nightly build into the published catalog."""

    @classmethod
    def from_env(cls) -> Self:
        """Construct for collection (`python -m gpuhunt NAME`); override to read credentials."""
        return cls()

    @classmethod
    def filter(cls, offers: list[CatalogItem]) -> list[CatalogItem]:
        """The subset of offers worth publishing (e.g. families users launch)."""
        return offers


def get_creds_env(name: str) -> str:
    """An environment variable a provider needs; `MissingCredsError` naming it when unset."""
    value = os.getenv(name)
    if not value:
        raise MissingCredsError(f"Set the {name} environment variable")
    return value
