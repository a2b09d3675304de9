"""`errors.redact`: the one function every message holding a URL goes through."""

import pytest

from gpuhunt._internal.errors import redact


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://user:pw@host/v3/version: HTTP 404", "https://host/v3/version: HTTP 404"),
        ("(http://u:p@127.0.0.1:8080/x)", "(http://127.0.0.1:8080/x)"),
        ("s3://key@bucket/v3 failed", "s3://bucket/v3 failed"),
        ("https://h/x?X-Amz-Signature=abc&k=1 timed out", "https://h/x?<redacted> timed out"),
        ("no url here: user:pw@host", "no url here: user:pw@host"),
        ("file:///home/me/catalog", "file:///home/me/catalog"),
    ],
)
def test_redact(text, shown):
    assert redact(text) == shown


def test_redact_takes_any_object():
    assert redact(ValueError("https://a:b@h/p")) == "https://h/p"
