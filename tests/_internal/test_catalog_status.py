"""`Catalog.status()` before and after a load, read off the loader and the online health."""

from gpuhunt import Catalog
from gpuhunt._internal.catalog_status import CatalogStatus
from gpuhunt._internal.formats.csv import csv_bytes
from tests.helpers import item, publish_archive


def test_status_before_and_after_a_load(tmp_path):
    publish_archive(tmp_path, "20261202-1", {"aws": csv_bytes([item(), item(location="x")])})
    with Catalog(catalog_url=str(tmp_path), auto_reload=False) as c:
        before = c.status()
        assert isinstance(before, CatalogStatus)
        assert (before.version, before.source, before.offers) == (None, None, {})
        c.load()
        after = c.status()
        assert (after.version, after.offers) == ("20261202-1", {"aws": 2})
        assert after.age_seconds is not None and after.age_seconds >= 0
