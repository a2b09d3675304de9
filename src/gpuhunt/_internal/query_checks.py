"""The checks every door runs on a query before it asks the catalog (the command line, the HTTP
API and the MCP tools alike): ranges no offer can match, values the library cannot read, and
which online providers a query asks, each raising `QueryInputError` naming the filter, which
each door renders in its own words (`gpuhunt query` exits with 2, a server answers 422).

`Catalog.query` runs the same checks on its own (`query.filters.make_filter`); these say what
was wrong first in the terms of the query spec (`query/spec.py`), so that no door reads another
door's error text."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Container, Mapping
from typing import Any

from gpuhunt._internal import registry
from gpuhunt._internal.errors import (
    GPUHuntError,
    InputError,
    QueryInputError,
    UnknownProviderError,
)
from gpuhunt._internal.gpu_names import canonical_gpu_name, closest_gpu_names
from gpuhunt._internal.models import LiveProvider, QueryFilter
from gpuhunt._internal.query import spec
from gpuhunt._internal.query.filters import make_filter
from gpuhunt._internal.validate import parse_version

logger = logging.getLogger("gpuhunt")

# The filters an error message of the library names by keyword (`Invalid min_cuda '1.x'`).
_NAMED = re.compile(
    r"\b((?:min|max)_[a-z_]+|gpu_name|gpu_vendor|cpu_arch|location|provider|spot|include)\b"
)
STAND_IN_NOTE = "(the bundled snapshot answers for it only while the catalog cannot be loaded)"


def _template(message: str) -> tuple[str, tuple[str, ...]]:
    """`message` with each filter it names as `{name}`, and those names in order."""
    named: list[str] = []

    def mark(m: re.Match[str]) -> str:
        if m.group(1) not in spec.BY_NAME:
            return m.group(0)
        named.append(m.group(1))
        return "{" + m.group(1) + "}"

    escaped = message.replace("{", "{{").replace("}", "}}")
    return _NAMED.sub(mark, escaped), tuple(named)


def _error(message: str, field: str | None = None, **kw: Any) -> QueryInputError:
    template, named = _template(message)
    return QueryInputError(field or (named[0] if named else None), template, named=named, **kw)


def _shown(value: Any) -> str:
    return ".".join(map(str, value)) if isinstance(value, tuple) else f"{value:g}"


def check_query(filters: Mapping[str, Any]) -> QueryFilter:
    """The filter of `Catalog.query(**filters)` (every spec name a key); a `QueryInputError`
    for a negative bound, a range no offer can match or a value that cannot be read."""
    for what in spec.RANGES:
        low, high = filters[f"min_{what}"], filters[f"max_{what}"]
        if what == "compute_capability":
            low = _read(parse_version, low, "min_compute_capability")
            high = _read(parse_version, high, "max_compute_capability")
        for bound, end in ((low, "min"), (high, "max")):
            if isinstance(bound, (int, float)) and bound < 0:
                raise _error(f"{end}_{what} {bound:g} is negative")
        if low is not None and high is not None and low > high:
            raise _error(
                f"min_{what} {_shown(low)} is above max_{what} {_shown(high)}: no offer can match"
            )
    for name in spec.names_of("size") - {f"{e}_{w}" for w in spec.RANGES for e in ("min", "max")}:
        value = filters[name]
        if isinstance(value, (int, float)) and value < 0:
            raise _error(f"{name} {value:g} is negative")
    return _read(lambda: make_filter(**filters))  # type: ignore[no-any-return]


def _read(read: Callable[..., Any], *args: Any) -> Any:
    """`read(*args)`, its TypeError/ValueError a `QueryInputError` naming the filter."""
    try:
        return read(*args)
    except UnknownProviderError as e:  # names no filter; "did you mean" as it is
        raise QueryInputError("provider", str(e).replace("{", "{{").replace("}", "}}")) from None
    except (TypeError, ValueError) as e:
        raise _error(str(e)) from None


def _named(providers: list[str] | None) -> list[registry.ProviderSpec]:
    try:
        return [registry.spec(p) for p in providers or []]
    except UnknownProviderError as e:
        raise QueryInputError("provider", str(e).replace("{", "{{").replace("}", "}}")) from None


def live_providers(providers: list[str] | None, online: bool) -> list[LiveProvider]:
    """The online providers a query asks live: none unless `online` (and naming one then is an
    error, unless the bundled snapshot holds its offers); with it, those named or else every
    one whose credentials are set. One named but missing its credential or SDK is an error
    naming what is missing."""
    named_online = [s for s in _named(providers) if s.online]
    if not online:
        if not named_online:  # nothing to check: the bundled snapshot is not even opened
            return []
        # Those the bundled snapshot holds are answered from it while the catalog cannot be
        # loaded (`check_stand_ins` after the query); the others are asked live only.
        from gpuhunt._internal.load import sources  # lazy for start-up time: only needed here

        held = sources.bundled_providers()
        named_online = [s for s in named_online if s.name not in held]
        if named_online:
            names = ", ".join(s.name for s in named_online)
            what = "is an online provider" if len(named_online) == 1 else "are online providers"
            raise QueryInputError("provider", f"{names} {what}, queried live", online=True)
        return []
    wanted = named_online if providers else [s for s in registry.PROVIDERS if s.online]
    live: list[LiveProvider] = []
    for one in wanted:
        try:
            live.append(registry.provider_class(one.name).from_env())
        except GPUHuntError as e:  # MissingCredsError or a missing SDK
            if providers:  # asked for by name: the caller's setup to fix
                text = f"{one.name}: {e}".replace("{", "{{").replace("}", "}}")
                raise QueryInputError("provider", text) from None
            logger.debug("Skipping online provider %s: %s", one.name, e)
    return live


def check_stand_ins(
    providers: list[str] | None, online: bool, held: Callable[[], Container[str]]
) -> None:
    """Online providers named without asking live are answered only by a catalog holding their
    offers (`held()`: the providers with offers in it, asked only when an online provider is
    named; only the bundled snapshot has theirs); from any other catalog the answer would be
    an empty list that says nothing."""
    named = [s for s in _named(providers) if s.online]
    if online or not named:
        return
    offers = held()
    missing = [s.name for s in named if s.name not in offers]
    if missing:
        raise QueryInputError(
            "provider", f"{', '.join(missing)} queried live", online=True, note=STAND_IN_NOTE
        )


def check_gpu_names(names: list[str] | None) -> None:
    """An `InputError` for a GPU name the tables do not know (`Catalog.history` reads names
    as the tables spell them), with the closest known names."""
    for name in names or []:
        if canonical_gpu_name(name) is None:
            close = closest_gpu_names(name)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise InputError(f"Unknown GPU name {name!r}{hint}")
