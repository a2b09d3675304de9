"""What every provider implements.

A provider turns a cloud's API answers into `CatalogItem`s. Keep the parsing pure (functions that
take decoded JSON/CSV and return items) and the I/O in small fetch functions that go through
`gpuhunt._internal.load.transport`, so tests can drive the real request code over recorded answers.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod

from typing_extensions import Self

from gpuhunt._internal.errors import MissingCredsError
from gpuhunt._internal.models import CatalogItem, QueryFilter
from gpuhunt.providers._report import ParseReport


class AbstractProvider(ABC):
    """A source of offers. `NAME` is the provider's name in catalogs, the CLI and filters."""

    NAME: str = "abstract"

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
