"""What the online providers that take one API key share (Fluidstack, Shadeform, Prime
Intellect, Paperspace): the key from one environment variable, a `repr` that never shows it,
the report of the last answer, and answers sorted by price. Each provider names its variable
(`CREDENTIAL`) and says how to ask for offers (`_offers`)."""

from __future__ import annotations

from typing import ClassVar

from typing_extensions import Self

from gpuhunt._internal.models import CatalogItem, QueryFilter
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import Ask, Collects, OnlineProvider, get_creds_env


class KeyedProvider(Collects[ParseReport], OnlineProvider):
    CREDENTIAL: ClassVar[str]
    REPORT = ParseReport
    # Providers whose API sells no spot (preemptible) offers answer a spot-only query with
    # nothing, without a request.
    HAS_SPOT: ClassVar[bool] = False

    def __init__(self, api_key: str) -> None:
        self.api_key = api_key

    def __repr__(self) -> str:
        return f"{type(self).__name__}(api_key='***')"

    @classmethod
    def from_env(cls) -> Self:
        return cls(api_key=get_creds_env(cls.CREDENTIAL))

    def collect(self, ask: Ask, report: ParseReport) -> list[CatalogItem]:
        if not self.HAS_SPOT and ask.spot is True:
            return []
        offers = self._offers(ask.query_filter, report)
        return sorted(offers, key=lambda i: (i.price, i.instance_name, i.location))

    def _offers(self, query_filter: QueryFilter | None, report: ParseReport) -> list[CatalogItem]:
        raise NotImplementedError
