"""`gpuhunt serve`'s HTTP application (Starlette, on uvicorn): `GET /v1/offers`, `/v1/explain`,
`/v1/history`, `/v1/status` and `/openapi.json`, each a thin door onto `answers.Service`.

Every answer is JSON with an `ETag` (the catalog version and the query in a normal form, so a
client's `If-None-Match` is answered 304 without computing anything) and a `Cache-Control`
`max-age` no longer than what is left of the reload interval. Errors are JSON naming what was
wrong (`{"error": {"status", "parameter", "message"}}`): 400/422 for parameters, 404, 405 for
any method but GET and HEAD, 503 when no catalog can answer; never a traceback. Nothing is
written anywhere.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import parse_qsl

import anyio
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request as HTTPRequest
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from gpuhunt._internal.errors import GPUHuntError, HistoryUnavailable, InputError
from gpuhunt._internal.serve import openapi, parameters
from gpuhunt._internal.serve.answers import Encoded, Reply, Service, Unavailable, etag
from gpuhunt._internal.serve.parameters import ParameterError

logger = logging.getLogger(__name__)

MAX_QUERY = 16_384  # bytes of a query string
# Answers asking for more offers than this are streamed as they are encoded, not cached.
STREAM_ABOVE = 1000
COMPUTING_AT_ONCE = 2  # answers being computed at a time, per endpoint


def dumps(body: Any) -> bytes:
    """Compact JSON; `<`, `>` and `&` escaped, so a value echoed in an error is never markup
    to a browser that sniffs."""
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode()


def error(status: int, message: str, parameter: str | None = None) -> Response:
    body = {"error": {"status": status, "parameter": parameter, "message": message}}
    return Response(dumps(body), status, media_type="application/json")


def _matches(header: str | None, tag: str) -> bool:
    """Whether `If-None-Match` names `tag` (weak comparison, as RFC 9110 asks for GET)."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    wanted = tag.removeprefix("W/")
    return any(t.strip().removeprefix("W/") == wanted for t in header.split(","))


def _cache_control(max_age: int | None) -> str:
    return "no-cache" if max_age is None else f"public, max-age={max_age}"


def _not_modified(tag: str, max_age: int | None) -> Response:
    return Response(
        status_code=304, headers={"ETag": tag, "Cache-Control": _cache_control(max_age)}
    )


def reply(request: HTTPRequest, r: Reply) -> Response:
    if _matches(request.headers.get("if-none-match"), r.etag):
        return _not_modified(r.etag, r.max_age)
    return _json(dumps(r.body), r.etag, r.max_age)


def _pairs(request: HTTPRequest) -> list[tuple[str, str]]:
    raw: bytes = request.scope.get("query_string", b"")
    if len(raw) > MAX_QUERY:
        raise ParameterError(None, f"the query string is longer than {MAX_QUERY} bytes")
    try:
        text = raw.decode("ascii")
        return parse_qsl(
            text,
            keep_blank_values=True,
            encoding="utf-8",
            errors="strict",
            max_num_fields=parameters.MAX_PARAMETERS,
        )
    except UnicodeDecodeError:
        raise ParameterError(None, "the query string is not percent-encoded UTF-8") from None
    except ValueError:
        raise ParameterError(None, f"more than {parameters.MAX_PARAMETERS} parameters") from None


def read_parameters(request: HTTPRequest) -> parameters.Request:
    return parameters.parse(_pairs(request))


class AnswerCache:
    """Encoded answers by ETag, least recently used out first, within `max_bytes`. An ETag
    names the catalog version, the endpoint and the query in a normal form, so an entry is
    never stale: a new version makes new tags, and the old entries age out."""

    def __init__(self, max_bytes: int = 64 << 20) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, tag: str) -> bytes | None:
        with self._lock:
            body = self._entries.get(tag)
            if body is not None:
                self._entries.move_to_end(tag)
            return body

    def put(self, tag: str, body: bytes) -> None:
        if len(body) > self.max_bytes // 4:  # one huge answer would push out every other
            return
        with self._lock:
            if tag in self._entries:
                return
            self._entries[tag] = body
            self._size += len(body)
            while self._size > self.max_bytes:
                _, old = self._entries.popitem(last=False)
                self._size -= len(old)


class _Flight:
    """One answer being computed, which the requests for the same ETag wait for."""

    def __init__(self) -> None:
        self.done = asyncio.Event()
        self.result: tuple[bytes, str, int | None] | None = None
        self.error: BaseException | None = None


def _query_endpoint(
    service: Service,
    endpoint: str,
    answer: Callable[[parameters.Request], Reply],
    cache: AnswerCache | None,
    encoded: Callable[[parameters.Request, Callable[[Any], bytes]], Encoded] | None = None,
) -> Callable[[HTTPRequest], Awaitable[Response]]:
    # Answers computed at once, each in a thread of its own (a streamed answer holds one only
    # while it encodes a piece): more would not answer sooner on a few cores, as the
    # interpreter lock serialises the Python parts, but each would hold its masks and rows
    # in memory meanwhile.
    computing = anyio.CapacityLimiter(COMPUTING_AT_ONCE)
    # ETag -> the answer being computed: a query asked by many clients at once (the moment a
    # new version is loaded, every cached answer is new) is computed once, not once each.
    flights: dict[str, _Flight] = {}

    def compute(q: parameters.Request) -> tuple[bytes, str, int | None]:
        if encoded is not None:
            e = encoded(q, dumps)
            return b"".join(e.pieces), e.etag, e.max_age
        r = answer(q)
        return dumps(r.body), r.etag, r.max_age  # encoded off the event loop too

    async def stream(request: HTTPRequest, q: parameters.Request) -> Response:
        # A big answer is sent as it is encoded, a few rows at a time, and kept by no cache
        # (`Service.offers_encoded`): its memory is a slice of rows, not the whole answer.
        assert encoded is not None
        e = await anyio.to_thread.run_sync(encoded, q, dumps, limiter=computing)
        if _matches(request.headers.get("if-none-match"), e.etag):
            return _not_modified(e.etag, e.max_age)

        async def pieces() -> AsyncIterator[bytes]:
            while (
                piece := await anyio.to_thread.run_sync(next, e.pieces, None, limiter=computing)
            ) is not None:
                yield piece

        return StreamingResponse(
            pieces(),
            200,
            headers={"ETag": e.etag, "Cache-Control": _cache_control(e.max_age)},
            media_type="application/json",
        )

    async def handle(request: HTTPRequest) -> Response:
        q = read_parameters(request)
        # Answered from the ETag alone when the client (or the cache) holds this version's
        # answer: nothing is computed.
        tag = service.current_etag(endpoint, q)
        if tag is not None:
            loaded = service.catalog.current(load=False)
            max_age = service.max_age(loaded) if loaded is not None else 0
            if _matches(request.headers.get("if-none-match"), tag):
                return _not_modified(tag, max_age)
            cached = cache.get(tag) if cache is not None else None
            if cached is not None:
                return _json(cached, tag, max_age)
        if encoded is not None and q.limit > STREAM_ABOVE:
            return await stream(request, q)
        flight = flights.get(tag) if tag is not None else None
        if flight is not None:
            await flight.done.wait()
            if flight.error is not None:
                raise flight.error
            assert flight.result is not None
            body, etag_, age = flight.result
        else:
            flight = _Flight()
            if tag is not None:
                flights[tag] = flight
            try:
                body, etag_, age = await anyio.to_thread.run_sync(compute, q, limiter=computing)
                flight.result = (body, etag_, age)
            except Exception as e:
                flight.error = e
                raise
            finally:
                flight.done.set()
                if tag is not None:
                    flights.pop(tag, None)
            if cache is not None:
                cache.put(etag_, body)
        if _matches(request.headers.get("if-none-match"), etag_):
            return _not_modified(etag_, age)
        return _json(body, etag_, age)

    return handle


def _json(body: bytes, tag: str, max_age: int | None) -> Response:
    return Response(
        body,
        200,
        headers={"ETag": tag, "Cache-Control": _cache_control(max_age)},
        media_type="application/json",
    )


def create_app(service: Service, cache_bytes: int = 64 << 20) -> Starlette:
    """The application over `service` (whose catalog the caller loads and closes); answers
    to `/v1/offers` and `/v1/explain` are kept encoded, `cache_bytes` of them (0: none)."""
    cache = AnswerCache(cache_bytes) if cache_bytes > 0 else None

    def no_parameters(request: HTTPRequest) -> None:
        if request.scope.get("query_string"):
            names = sorted({k for k, _ in parse_qsl(request.url.query, keep_blank_values=True)})
            raise ParameterError(
                names[0] if names else None, f"{request.url.path} takes no parameters"
            )

    async def status(request: HTTPRequest) -> Response:
        no_parameters(request)
        return reply(request, await run_in_threadpool(service.status))

    async def history(request: HTTPRequest) -> Response:
        q = parameters.parse_history(_pairs(request))
        return reply(request, await run_in_threadpool(service.history, q))

    document = openapi.document()
    document_tag = etag("openapi", json.dumps(document, sort_keys=True))

    async def spec(request: HTTPRequest) -> Response:
        no_parameters(request)
        return reply(request, Reply(document, document_tag, 3600))

    async def on_parameter_error(request: HTTPRequest, e: Exception) -> Response:
        assert isinstance(e, ParameterError)
        return error(e.status, e.message, e.parameter)

    async def on_http(request: HTTPRequest, e: Exception) -> Response:
        assert isinstance(e, HTTPException)
        if e.status_code == 405:
            response = error(405, f"{request.method} is not allowed: only GET and HEAD")
            response.headers["Allow"] = "GET, HEAD"
            return response
        if e.status_code == 404:
            return error(404, f"no such endpoint {request.url.path!r} (see /openapi.json)")
        return error(e.status_code, str(e.detail))

    async def on_input(request: HTTPRequest, e: Exception) -> Response:
        return error(422, str(e))

    async def on_unavailable(request: HTTPRequest, e: Exception) -> Response:
        return error(503, str(e))

    async def on_no_history(request: HTTPRequest, e: Exception) -> Response:
        return error(404, str(e))

    async def on_error(request: HTTPRequest, e: Exception) -> Response:
        # The traceback goes to the server's log, never into a body.
        logger.error("%s %s failed", request.method, request.url.path, exc_info=e)
        return error(500, "internal error (logged by the server)")

    routes = [
        Route(
            "/v1/offers",
            _query_endpoint(service, "offers", service.offers, cache, service.offers_encoded),
            methods=["GET"],
        ),
        Route(
            "/v1/explain",
            _query_endpoint(service, "explain", service.explain, cache),
            methods=["GET"],
        ),
        Route("/v1/history", history, methods=["GET"]),
        Route("/v1/status", status, methods=["GET"]),
        Route("/openapi.json", spec, methods=["GET"]),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={
            ParameterError: on_parameter_error,
            HTTPException: on_http,
            InputError: on_input,
            Unavailable: on_unavailable,
            HistoryUnavailable: on_no_history,
            GPUHuntError: on_unavailable,
            Exception: on_error,
        },
    )
