"""URLs made safe to show (pure: no I/O). Apart from `load.transport`, which re-exports them, so
that a process that shows a catalog's URL (every `gpuhunt query` footer, `status()`) without
downloading anything does not import requests."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit, urlunsplit


def _host(parts: SplitResult) -> str:
    host = parts.hostname or ""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{host}:{port}" if port else host


def safe_url(url: str) -> str:
    """The URL without query string, fragment or user info: safe to log and to show."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if not parts.scheme and not parts.netloc:
        return url.split("?", 1)[0].split("#", 1)[0]  # a local path
    return urlunsplit((parts.scheme, _host(parts), parts.path, "", ""))
