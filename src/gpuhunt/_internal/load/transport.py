"""The one HTTP layer of the package: every request gpuhunt makes goes through here.

Each call has a connect and a read timeout; connection errors, 429 and 5xx are retried a bounded
number of times with exponential backoff and jitter (urllib3's `Retry`), honouring `Retry-After`
up to a cap. Error messages never include query strings or headers, where credentials live.
"""

from __future__ import annotations

import contextlib
import contextvars
import ipaddress
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import HTTPError, MaxRetryError, NameResolutionError
from urllib3.util.retry import Retry

from gpuhunt._internal import forks
from gpuhunt._internal.errors import ProviderError, redact
from gpuhunt._internal.load.settings import Settings
from gpuhunt._internal.load.urls import (
    _host,
    safe_url,
)
from gpuhunt._version import __version__

logger = logging.getLogger(__name__)

T = TypeVar("T")

USER_AGENT = f"gpuhunt/{__version__}"
RETRY_STATUSES = (429, 500, 502, 503, 504)
MAX_RETRY_AFTER = 30.0
MAX_RESPONSE_BYTES = 256 * 1024 * 1024  # a provider API answer held whole (streamed ones aside)


_QUERY = re.compile(r"\?[^\s'\")]*")


class _RedactQueryStrings(logging.Filter):
    """urllib3 logs request URLs (on retries, at debug level) and some APIs take keys as query
    parameters: drop query strings and user info from those records (`errors.redact`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "?" in message or "@" in message:
            record.msg = _QUERY.sub("?<redacted>", redact(message))
            record.args = None
        return True


for _name in (
    "urllib3.connectionpool",
    "urllib3.util.retry",
    "urllib3.connection",
    "urllib3.response",
):
    logging.getLogger(_name).addFilter(_RedactQueryStrings())


class _CappedRetry(Retry):
    """A `Retry` that never sleeps longer than `MAX_RETRY_AFTER` on a server's `Retry-After`,
    does not retry a host name that did not resolve,
    and tells `on_response` of every answer it retries: a 429 or 503 with `Retry-After` is the
    server answering ("later"), and a caller timing the first answer must know it before the
    retry's sleep, not after."""

    on_response: Callable[[], None] | None = None

    def new(self, **kw: Any) -> _CappedRetry:
        retry = super().new(**kw)
        retry.on_response = self.on_response
        return retry

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: Any = None,
    ) -> _CappedRetry:
        if response is not None and self.on_response is not None:
            self.on_response()
        if isinstance(error, NameResolutionError):
            # No DNS answer (typically no network): a retry seconds later gets none either, and
            # without a network every online provider of a query would wait out its backoff.
            raise MaxRetryError(_pool, url or "", error)
        return super().increment(method, url, response, error, _pool, _stacktrace)

    def get_retry_after(self, response: Any) -> float | None:
        value = super().get_retry_after(response)
        return None if value is None else min(value, MAX_RETRY_AFTER)


def make_retry(
    total: int = 3, backoff_factor: float = 0.5, on_response: Callable[[], None] | None = None
) -> Retry:
    retry = _CappedRetry(
        total=total,
        connect=total,
        read=total,
        status=total,
        backoff_factor=backoff_factor,
        backoff_max=10.0,
        backoff_jitter=0.25,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=None,  # POST queries (GraphQL, search) are reads too
        respect_retry_after_header=True,
        raise_on_status=False,
    )
    retry.on_response = on_response
    return retry


# Headers that may follow a redirect to another host; every other one may carry a credential
# (`Authorization`, Seeweb's `X-APITOKEN`, signed-request headers, API keys by any name).
SAFE_HEADERS = frozenset(
    {
        "user-agent",
        "accept",
        "accept-encoding",
        "accept-language",
        "content-type",
        "content-length",
        "connection",
    }
)
_SECRET_PARAM = re.compile(r"key|token|secret|pass|auth|sig|cred|session|code", re.IGNORECASE)


class RedirectRefused(requests.RequestException):
    """A redirect refused: to another host with a request body to carry along, or from https
    to plain http (a downgrade anyone on the way can read and change), or one the session's
    `hop_check` refuses."""


def is_loopback(host: str) -> bool:
    """`host` is this machine: `localhost` or a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_hop(old: str, new: str) -> None:
    """Every hop of a redirect, not only the first URL: an https request never goes on over
    plain http, except to this machine (a local test server or proxy)."""
    before, after = urlsplit(old), urlsplit(new)
    local = is_loopback(after.hostname or "")
    if before.scheme == "https" and after.scheme != "https" and not local:
        raise RedirectRefused(
            f"redirect from https to {after.scheme or 'no scheme'} ({safe_url(new)}) refused"
        )


class _TimeoutSession(requests.Session):
    """A session that applies its default timeout to calls that do not pass their own, and
    never lets a credential follow a redirect to another host."""

    def __init__(self, timeout: tuple[float, float]) -> None:
        super().__init__()
        self.default_timeout = timeout
        # Called with each redirect's target URL besides `check_hop` (the catalog's fetcher
        # applies its own URL rule there); raises `RedirectRefused` to refuse it.
        self.hop_check: Callable[[str], None] | None = None

    def rebuild_auth(self, prepared_request: Any, response: Any) -> None:
        """requests itself drops only `Authorization` when a redirect leaves the host: drop
        every header not known to be harmless and every query parameter that looks like a
        secret, and refuse to carry a body (307/308) to another host at all."""
        old = response.request.url
        new = prepared_request.url
        check_hop(old, new)
        if self.hop_check is not None:
            self.hop_check(new)
        super().rebuild_auth(prepared_request, response)  # type: ignore[no-untyped-call]
        if not self.should_strip_auth(old, new):  # type: ignore[no-untyped-call]
            return
        if prepared_request.body:
            raise RedirectRefused(
                f"redirected to another host ({safe_url(new)}) with a body; refused"
            )
        for name in list(prepared_request.headers):
            if name.lower() not in SAFE_HEADERS:
                del prepared_request.headers[name]
        parts = urlsplit(new)
        if parts.query or parts.username or parts.password:
            kept = [
                (k, v)
                for k, v in parse_qsl(parts.query, keep_blank_values=True)
                if not _SECRET_PARAM.search(k)
            ]
            prepared_request.url = urlunsplit(
                (parts.scheme, _host(parts), parts.path, urlencode(kept), parts.fragment)
            )

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("timeout", self.default_timeout)
        return super().request(method, url, *args, **kwargs)


def new_session(
    retries: int = 3,
    backoff_factor: float = 0.5,
    timeout: tuple[float, float] | None = None,
    on_response: Callable[[], None] | None = None,
) -> requests.Session:
    """A session with bounded retries; `timeout` defaults to the default settings' (connect,
    read). A `Catalog` makes its sessions with its own settings (`load.context`): nothing here
    reads the environment. `on_response` is called for each answer a retry follows (see
    `_CappedRetry`)."""
    session = _TimeoutSession(timeout or Settings().http_timeout)
    adapter = HTTPAdapter(
        max_retries=make_retry(retries, backoff_factor, on_response),
        pool_connections=16,
        pool_maxsize=32,
    )
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = USER_AGENT
    return session


_shared: requests.Session | None = None
_shared_lock = threading.Lock()


# The session of the provider whose `get()` is running in this thread (or context): set by
# `using`, which the provider base wraps around every `get()`.
_current: contextvars.ContextVar[requests.Session | None] = contextvars.ContextVar(
    "gpuhunt_session", default=None
)


@contextlib.contextmanager
def using(http: requests.Session | None) -> Iterator[None]:
    """Requests made within (that pass no `http=`) go through `http`; None changes nothing."""
    if http is None:
        yield
        return
    token = _current.set(http)
    try:
        yield
    finally:
        _current.reset(token)


def carried(fn: Callable[..., T]) -> Callable[..., T]:
    """`fn`, sending its requests through the session in use where `carried` is called: for
    work handed to a thread pool, whose threads do not share the caller's context."""
    http = _current.get()

    def run(*args: Any, **kwargs: Any) -> T:
        with using(http):
            return fn(*args, **kwargs)

    return run


def session() -> requests.Session:
    """The session in use (`using`: a provider's own, or the one a `Catalog` gave it), else
    the process-wide one (connection pooling is shared; requests sessions are safe to share
    between threads for plain requests), made with the default settings."""
    global _shared
    current = _current.get()
    if current is not None:
        return current
    if _shared is None:
        with _shared_lock:
            if _shared is None:
                _shared = new_session()
    return _shared


def _after_fork() -> None:
    # The parent's pooled connections must not be shared by two processes: the child makes
    # its own session (and its own connections) on first use.
    global _shared, _shared_lock
    _shared, _shared_lock = None, threading.Lock()


forks.on_fork(_after_fork)


def default_timeout(http: requests.Session | None = None) -> tuple[float, float]:
    """The (connect, read) timeout a request gets when it does not pass one."""
    found = getattr(http or session(), "default_timeout", None)
    return found if found is not None else Settings().http_timeout


def request(
    method: str,
    url: str,
    *,
    provider: str,
    credential: str | None = None,
    timeout: float | tuple[float, float] | None = None,
    http: requests.Session | None = None,
    **kwargs: Any,
) -> requests.Response:
    """Send a request for `provider`; any failure becomes a `ProviderError` with a safe message.

    `credential` names the environment variable (or setting) behind the request's auth, so that
    a 401/403 tells the user what to fix.
    """
    where = f"{method.upper()} {safe_url(url)}"
    stream = bool(kwargs.pop("stream", False))
    try:
        # Always streamed: the body is read here, against the size cap, unless the caller
        # streams it itself.
        response = (http or session()).request(
            method, url, timeout=timeout or default_timeout(http), stream=True, **kwargs
        )
    except requests.Timeout as e:
        raise ProviderError(f"{provider}: {where} timed out", request=e.request) from None
    except RedirectRefused as e:
        raise ProviderError(f"{provider}: {where}: {e}", request=e.request) from None
    except requests.RequestException as e:
        raise ProviderError(
            f"{provider}: {where} failed: {type(e).__name__}", request=e.request
        ) from None
    try:
        if response.is_redirect:  # the caller asked not to follow (allow_redirects=False)
            # Only seen by callers passing allow_redirects=False, so that a credential is never
            # sent on to wherever the answer points; its body is not the answer asked for.
            raise ProviderError(
                f"{provider}: {where} answered with a redirect (HTTP {response.status_code}), "
                "which gpuhunt does not follow for this request",
                response=response,
            )
        if response.status_code in (401, 403):
            hint = f"; check {credential}" if credential else ""
            raise ProviderError(
                f"{provider}: {where} was refused with HTTP {response.status_code}{hint}",
                response=response,
            )
        if response.status_code >= 400:
            raise ProviderError(
                f"{provider}: {where} returned HTTP {response.status_code}", response=response
            )
        if not stream:
            _read_capped(response, f"{provider}: {where}")
    except BaseException:
        response.close()
        raise
    return response


class _Capped:
    """`raw` (urllib3's response) read decoded, refusing more than `cap` bytes in all. Given
    to requests as the response's `raw` while `Response.content` reads it: requests reads a
    `raw` without urllib3's `stream` by `read(n)` until it is empty, and keeps what it read
    as the body (its own cache, set only by its public `content`)."""

    def __init__(self, raw: Any, cap: int, where: str) -> None:
        self.raw, self.cap, self.where, self.size = raw, cap, where, 0

    def read(self, n: int = -1) -> bytes:
        try:
            chunk: bytes = self.raw.read(n, decode_content=True)
        except (HTTPError, OSError) as e:
            raise ProviderError(f"{self.where} broke off: {type(e).__name__}") from None
        self.size += len(chunk)
        if self.size > self.cap:
            raise ProviderError(f"{self.where} sent more than the {self.cap}-byte cap")
        return chunk


def _read_capped(response: requests.Response, where: str) -> None:
    """Read the body into `response` (so `.content`, `.json()` work as usual), refusing one
    over `MAX_RESPONSE_BYTES` from its Content-Length or as soon as that much arrived."""
    cap = MAX_RESPONSE_BYTES
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > cap:
        raise ProviderError(f"{where} announced {int(declared)} bytes, over the {cap}-byte cap")
    raw = response.raw
    response.raw = _Capped(raw, cap, where)
    try:
        response.content  # noqa: B018 - read now, through the cap, and kept by requests
    except requests.RequestException as e:
        raise ProviderError(f"{where} broke off: {type(e).__name__}") from None
    finally:
        response.raw = raw  # what `close` gives back to the connection pool
    response.close()


def request_json(
    method: str,
    url: str,
    *,
    provider: str,
    credential: str | None = None,
    **kwargs: Any,
) -> Any:
    """Like `request`, returning the decoded JSON body; invalid JSON is a `ProviderError`."""
    response = request(method, url, provider=provider, credential=credential, **kwargs)
    try:
        return response.json()
    except (ValueError, RecursionError):  # RecursionError: JSON nested too deep
        raise ProviderError(
            f"{provider}: {method.upper()} {safe_url(url)} returned invalid JSON"
        ) from None


def require_fields(obj: Any, fields: Mapping[str, type | tuple[type, ...]], *, where: str) -> None:
    """Validate a decoded JSON object at the boundary, naming the first bad field."""
    if not isinstance(obj, dict):
        raise ProviderError(f"{where}: expected an object, got {type(obj).__name__}")
    for name, kind in fields.items():
        if name not in obj:
            raise ProviderError(f"{where}: field {name!r} is missing")
        if not isinstance(obj[name], kind):
            raise ProviderError(f"{where}: field {name!r} has type {type(obj[name]).__name__}")


def collect_pages(
    get_page: Callable[[int], Any],
    key: str,
    total_key: str,
    *,
    where: str,
    max_pages: int,
) -> list[Any]:
    """Every item of a page-numbered listing (pages 1, 2, ...; each an object whose `key` holds
    that page's list and `total_key` the listing's size): read until the items reach the total,
    a page comes back empty or no total is given. Past `max_pages` pages it logs and keeps the
    first ones, so a listing that never ends cannot loop forever."""
    items: list[Any] = []
    for page in range(1, max_pages + 1):
        data = get_page(page)
        require_fields(data, {key: list}, where=where)
        items.extend(data[key])
        total = data.get(total_key)
        if not data[key] or not isinstance(total, int) or len(items) >= total:
            return items
    logger.warning("%s: more than %d pages; using the first", where, max_pages)
    return items
