"""How `Catalog.query` answers once its filter is parsed: offline offers and an online
provider's answer merged by price; a provider named but not added said once."""

import logging

from gpuhunt import Catalog, QueryFilter
from gpuhunt._internal.catalog_query import NOT_ADDED
from gpuhunt._internal.formats.csv import csv_bytes
from tests.helpers import item, publish_archive


class Live:
    NAME = "vastai"

    def get(self, query_filter=None, balance_resources=True):
        return [item("vastai", instance_name="live", price=1.5)]


def test_offline_and_online_answers_merge_by_price(tmp_path):
    offline = [item(instance_name="cheap", price=1.0), item(instance_name="dear", price=2.0)]
    publish_archive(tmp_path, "20261202-1", {"aws": csv_bytes(offline)})
    with Catalog(catalog_url=str(tmp_path), auto_reload=False) as c:
        c.load()
        c.add_provider(Live())
        assert [i.instance_name for i in c.query()] == ["cheap", "live", "dear"]
        # `provider` is read as the registry's names: a bare string, any case.
        assert [i.instance_name for i in c.query(provider="VastAI")] == ["live"]


def test_an_online_provider_named_but_not_added_is_said_once(tmp_path, caplog):
    publish_archive(tmp_path, "20261202-1", {"aws": csv_bytes([item()])})
    with Catalog(catalog_url=str(tmp_path), auto_reload=False) as c:
        c.load()
        with caplog.at_level(logging.WARNING, logger="gpuhunt._internal.catalog"):
            assert c.query(provider=["aws", "hotaisle"]) != []
            c.query(provider=["aws", "hotaisle"])
        said = [r for r in caplog.records if "hotaisle was asked for but not added" in r.message]
        assert len(said) == 1
        assert c.status().online_errors == {"hotaisle": NOT_ADDED}
        assert QueryFilter(provider="aws").provider == "aws"  # the public field as given
