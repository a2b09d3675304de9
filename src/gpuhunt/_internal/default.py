"""The process-wide catalog behind `gpuhunt.query()` and `gpuhunt.default_catalog()`."""

from __future__ import annotations

import logging
import threading
from typing import Any

from gpuhunt._internal import forks, registry
from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.errors import GPUHuntError, MissingCredsError
from gpuhunt._internal.models import CatalogItem

logger = logging.getLogger(__name__)
_lock = threading.Lock()
_catalog: Catalog | None = None


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


def query(**filters: Any) -> list[CatalogItem]:
    """`default_catalog().query(**filters)`; see `Catalog.query` for the filters."""
    return default_catalog().query(**filters)


def explain(**filters: Any) -> Any:
    """`default_catalog().explain(**filters)`: why `query(**filters)` answers as it does."""
    return default_catalog().explain(**filters)
