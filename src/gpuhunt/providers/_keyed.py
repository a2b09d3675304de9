"""What the online providers that take one API key share (Fluidstack, Shadeform, Prime
Intellect, Paperspace): the key from one environment variable, a `repr` that never shows it,
the report of the last answer, and answers sorted by price. Each provider names its variable
(`CREDENTIAL`) and says how to ask for offers (`_offers`). `keyed_json` is the request such a key
travels in (Hyperbolic and Daytona send theirs so too)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from typing_extensions import Self

from gpuhunt._internal.load import livecache
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


def keyed_json(
    method: str,
    url: str,
    provider: str,
    credential: str | None,
    api_key: str | None,
    auth: Mapping[str, str],
    **kwargs: Any,
) -> Any:
    """`livecache.request_json` of a request carrying an account's key: cached apart per key
    (`api_key` as its secret), the `auth` headers that carry it beside `Accept:
    application/json`, and no redirect followed, so the key never travels on to another
    address. `credential` names the key's variable in errors (None: no key sent)."""
    return livecache.request_json(
        method,
        url,
        provider=provider,
        secret=api_key,
        credential=credential,
        headers={**auth, "Accept": "application/json"},
        allow_redirects=False,
        **kwargs,
    )
