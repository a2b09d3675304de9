import pytest

from gpuhunt._internal import livecache, transport


@pytest.fixture(autouse=True)
def _fast_http(monkeypatch):
    """Retries keep their real policy (count, statuses) but do not sleep between tries, and no
    answer cached by one test leaks into the next."""
    monkeypatch.setattr(transport, "_shared", transport.new_session(backoff_factor=0))
    monkeypatch.setattr(transport, "MAX_RETRY_AFTER", 0.0)
    livecache.LIVE_CACHE.clear()
    yield
    livecache.LIVE_CACHE.clear()
