"""The process-wide catalog behind `gpuhunt.query()` and `gpuhunt.default_catalog()`."""

from __future__ import annotations

import functools
import inspect
import logging
import threading
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from gpuhunt._internal import forks, registry
from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.errors import GPUHuntError, MissingCredsError

logger = logging.getLogger(__name__)
_lock = threading.Lock()
_catalog: Catalog | None = None
P = ParamSpec("P")
R = TypeVar("R")


def _after_fork() -> None:
    global _lock
    _lock = threading.Lock()  # the catalog itself resets its own pools (`forks`)


forks.on_fork(_after_fork)


def default_catalog() -> Catalog:
    """The process-wide catalog: offline providers from the published catalog (loaded on first
    query, honouring `GPUHUNT_CATALOG_URL`/`GPUHUNT_CATALOG_DIR`), plus every online provider
    whose credentials are in the environment. Providers raising `MissingCredsError` or missing
    their SDK are skipped with a log line; any other error is a bug and is raised."""
    global _catalog
    with _lock:
        if _catalog is None:
            catalog = Catalog()
            for spec in registry.PROVIDERS:
                if not spec.online:
                    continue
                try:
                    catalog.add_provider(registry.provider_class(spec.name).from_env())
                except MissingCredsError as e:
                    logger.debug("Skipping online provider %s: %s", spec.name, e)
                except GPUHuntError as e:  # e.g. its SDK is not installed
                    logger.warning("Skipping online provider %s: %s", spec.name, e)
            _catalog = catalog
        return _catalog


def _on_default_catalog(method: Callable[Concatenate[Catalog, P], R]) -> Callable[P, R]:
    """`method` called on `default_catalog()`, with its signature (less `self`) for type
    checkers, IDEs and `help()`: `gpuhunt.query` shows the keywords `Catalog.query` takes."""

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        return method(default_catalog(), *args, **kwargs)

    signature = inspect.signature(method)
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:]
    )
    del call.__wrapped__  # else inspect follows it back to the signature with `self`
    call.__doc__ = f"`default_catalog().{method.__name__}(...)`: {inspect.getdoc(method) or ''}"
    call.__module__ = "gpuhunt"
    return call


query = _on_default_catalog(Catalog.query)
explain = _on_default_catalog(Catalog.explain)
