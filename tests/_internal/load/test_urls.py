"""`load.urls`: URLs safe to show, apart from the transport so that showing one imports no
HTTP library (`urls.safe_url` is the same function, re-exported)."""

from __future__ import annotations

import pytest

from gpuhunt._internal.load import urls


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("https://u:p@example.com:8443/v1?key=s#f", "https://example.com:8443/v1"),
        ("http://[::1]:8080/v?token=t", "http://[::1]:8080/v"),
        ("/local/catalog?x=1", "/local/catalog"),
        ("http://[::1", "<unparseable URL>"),
    ],
)
def test_safe_url_drops_what_may_hold_a_secret(url, safe):
    assert urls.safe_url(url) == safe


def test_the_transport_shows_urls_with_the_same_function():
    assert urls.safe_url is urls.safe_url
