"""The parameters of `/v1/offers`, `/v1/explain` and the MCP tools, read into the filters of
`Catalog.query` and the views of the answer (pure).

The table is not written here: it is the query spec's (`query/spec.py`), one parameter per
filter and view, named as the spec names it on the wire (`max_price`, `gpu`, `allow_flag`;
an on/off filter is a `true`/`false` parameter named after the filter: `spot=false` is the
command line's `--on-demand`), with its type, choices and documentation, checked by the same
code as every door (`query_checks`). `limit` is the server's own (default 100, at most 10000).
The parameters of `/v1/history` and `price_history` are `spec.HISTORY`.

Errors name the parameter: 400 for a request that cannot be read (an unknown or repeated
name, a value that is not a number or not one of the choices, NUL or other control
characters, markup, more than `MAX_VALUE` characters), 422 for values read but not
acceptable (negative, a range no offer can match, an unknown provider or GPU name).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from gpuhunt._internal import query_checks
from gpuhunt._internal.costs.priced import Usage
from gpuhunt._internal.errors import InputError, QueryInputError, UnknownProviderError
from gpuhunt._internal.query import spec

MAX_VALUE = 1000  # characters of one value (or name)
MAX_PARAMETERS = 100  # name=value pairs in one request
DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000

# Where a request's default differs from the command line's: `--json` lists every region, so
# the API does too unless `all_regions=false` asks for the table's one row per offer.
DEFAULTS: dict[str, Any] = {"all_regions": True}

_TRUE = {"true": True, "1": True, "false": False, "0": False}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_MARKUP = re.compile(r"[<>]")


class ParameterError(InputError):
    """A request parameter that cannot be read (`status` 400) or accepted (422)."""

    def __init__(self, parameter: str | None, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.message = message
        self.status = status

    def as_dict(self) -> dict[str, Any]:
        return {
            "error": {"status": self.status, "parameter": self.parameter, "message": self.message}
        }


@dataclass(frozen=True)
class Param:
    """One request parameter: `dest` is the `gpuhunt query` namespace attribute it sets;
    `kind` its JSON type (boolean, integer, number, string); `repeatable` whether it may be
    given more than once (the option is `append`)."""

    name: str
    dest: str
    kind: str
    repeatable: bool = False
    choices: tuple[str, ...] | None = None
    help: str = ""
    convert: Callable[[str], Any] | None = None
    consts: tuple[Any, ...] = ()  # an on/off option's values (`--spot` True, `--on-demand` False)
    minimum: int | None = None
    maximum: int | None = None
    default: Any = None

    def read(self, text: str) -> Any:
        """The value of one `name=text`, as the command line would have read it."""
        if text == "":
            raise ParameterError(self.name, f"{self.name}: empty value")
        if self.kind == "boolean":
            flag = _TRUE.get(text.lower())
            if flag is None:
                raise ParameterError(self.name, f"{self.name}: {text!r} is not true or false")
            return flag
        value: Any
        if self.convert is not None:
            try:
                value = self.convert(text)
            except (TypeError, ValueError) as e:
                what = {"integer": "an integer", "number": "a number"}.get(self.kind)
                detail = f"is not {what}" if what else f"cannot be read ({e})"
                raise ParameterError(self.name, f"{self.name}: {text!r} {detail}") from None
        else:
            value = text
        if self.choices is not None and value not in self.choices:
            raise ParameterError(
                self.name, f"{self.name}: {text!r} is not one of {', '.join(self.choices)}"
            )
        for bound, bad in ((self.minimum, "below"), (self.maximum, "above")):
            if bound is not None and (value < bound if bad == "below" else value > bound):
                raise ParameterError(self.name, f"{self.name}: {value} is {bad} {bound}", 422)
        return value

    def schema(self) -> dict[str, Any]:
        """Its JSON Schema (OpenAPI's parameter schema and an MCP tool's input property)."""
        one: dict[str, Any] = {"type": self.kind}
        if self.choices is not None:
            one["enum"] = list(self.choices)
        if self.minimum is not None:
            one["minimum"] = self.minimum
        if self.maximum is not None:
            one["maximum"] = self.maximum
        out: dict[str, Any] = {"type": "array", "items": one} if self.repeatable else one
        if self.help:
            out["description"] = self.help
        default = self.default
        if default is not None:
            out["default"] = default
        return out


def param(option: spec.Option, default: Any = None) -> Param:
    """The request parameter of a spec option."""
    if option.switches:
        helps = "; ".join(
            f"{str(s.value).lower()}: {_help(s.doc)}" for s in option.switches if s.doc is not None
        )
        consts = tuple(s.value for s in option.switches)
        return Param(
            option.wire, option.name, "boolean", help=helps, consts=consts, default=default
        )
    return Param(
        option.wire,
        option.name,
        option.wire_type,
        repeatable=option.repeatable,
        choices=option.choices,
        help=_help(option.doc),
        convert=option.read,
        default=default,
    )


def _defaults() -> dict[str, Any]:
    """Every filter and view by name, as a request that gives none has them."""
    views = {o.name: DEFAULTS.get(o.name, o.default) for o in spec.VIEWS}
    # A filter's default is None but `include`'s: rentable offers only, as the command line.
    return {**{o.name: o.default for o in spec.FILTERS}, **dict.fromkeys(spec.COST_NAMES), **views}


@functools.cache
def table() -> dict[str, Param]:
    """name -> Param: the spec's filters, its cost options (docs/costs.md), then its views, in
    the order `gpuhunt query --help` lists them; `limit` last."""
    defaults = _defaults()
    every = (*spec.FILTERS, *spec.COSTS, *spec.VIEWS)
    params = {o.wire: param(o, defaults[o.name]) for o in every}
    params["limit"] = Param(
        "limit",
        "limit",
        "integer",
        help=f"offers in the answer (default {DEFAULT_LIMIT}); `total` counts every match",
        convert=int,
        minimum=1,
        maximum=MAX_LIMIT,
        default=DEFAULT_LIMIT,
    )
    return params


def _history_defaults() -> dict[str, Any]:
    return {o.name: o.default for o in spec.HISTORY}


@functools.cache
def history_table() -> dict[str, Param]:
    """The parameters of `/v1/history` and the `price_history` tool (`spec.HISTORY`)."""
    return {o.wire: param(o, o.default) for o in spec.HISTORY}


def _help(text: str | None) -> str:
    # `--x` spellings in the spec's documentation (written for the command line) are turned
    # into parameter names.
    return _OPTION.sub(lambda m: m.group(1).replace("-", "_"), text or "")


_OPTION = re.compile(r"--([a-z][a-z-]*)")


@dataclass(frozen=True)
class Request:
    """A request's parameters read: `args` every filter and view by name (a namespace),
    `limit`, and `key`, the parameters in a normal form (for the ETag: `max_price=4` and
    `max_price=4.0` are one query)."""

    args: SimpleNamespace
    limit: int
    key: str

    @property
    def filters(self) -> dict[str, Any]:
        """The `Catalog.query` keywords: one per filter of the spec."""
        return {name: getattr(self.args, name) for name in spec.NAMES}


def check_text(parameter: str | None, what: str, text: str) -> None:
    shown = parameter if parameter is not None else repr(text[:40])
    if len(text) > MAX_VALUE:
        raise ParameterError(parameter, f"{shown}: {what} is longer than {MAX_VALUE} characters")
    if _CONTROL.search(text):
        raise ParameterError(parameter, f"{shown}: {what} holds a NUL or control character")
    if _MARKUP.search(text):
        raise ParameterError(parameter, f"{shown}: {what} holds markup ('<' or '>')")


def _read(pairs: Iterable[tuple[str, str]], params: dict[str, Param]) -> dict[str, list[Any]]:
    """name -> the values given, read; what cannot be read raises `ParameterError`."""
    given: dict[str, list[Any]] = {}
    for count, (name, text) in enumerate(pairs, 1):
        if count > MAX_PARAMETERS:
            raise ParameterError(None, f"more than {MAX_PARAMETERS} parameters")
        check_text(None, "the parameter name", name)
        param = params.get(name)
        if param is None:
            raise ParameterError(
                name, f"unknown parameter {name!r} (known: {', '.join(params)})", 400
            )
        check_text(name, "the value", text)
        if name in given and not param.repeatable:
            raise ParameterError(name, f"{name}: given more than once")
        given.setdefault(name, []).append(param.read(text))
    return given


def _namespace(
    given: dict[str, list[Any]], params: dict[str, Param], defaults: dict[str, Any]
) -> SimpleNamespace:
    args = SimpleNamespace(**defaults)
    for name, values in given.items():
        param = params[name]
        # An on/off value that no command-line switch sets (`all_regions=false`, `resale=true`)
        # is set all the same: the filters take both.
        if param.kind == "boolean":
            setattr(args, param.dest, values[0])
        elif param.repeatable:
            setattr(args, param.dest, values)
        else:
            setattr(args, param.dest, values[0])
    return args


def _key(given: dict[str, list[Any]]) -> str:
    return json.dumps(
        {name: [_normal(v) for v in values] for name, values in sorted(given.items())},
        sort_keys=True,
    )


def parse(pairs: Iterable[tuple[str, str]]) -> Request:
    """Read `name=value` pairs (a query string's, or an MCP tool's arguments made into text)
    into a `Request`, checked as every door checks a query. Raises `ParameterError`."""
    params = table()
    given = _read(pairs, params)
    key = _key(given)  # `limit` included: it is part of the answer
    limit = given.pop("limit", [DEFAULT_LIMIT])[0]
    args = _namespace(given, params, _defaults())
    request = Request(args, limit, key)
    try:
        query_checks.check_query(request.filters)
        usage = {n: v for n in spec.COST_NAMES if (v := getattr(args, n)) is not None}
        try:
            Usage(**usage).check()
        except ValueError as e:
            raise ParameterError(None, str(e), 422) from None
        # Online providers named: those the bundled snapshot holds may be answered from it.
        query_checks.live_providers(args.provider, online=False)
    except QueryInputError as e:
        raise parameter_error(e) from None
    return request


def parse_history(pairs: Iterable[tuple[str, str]]) -> Request:
    """`/v1/history`'s parameters (`spec.HISTORY`), read and checked as `gpuhunt history`
    checks them (GPU names it does not know are an error naming `gpu`)."""
    from gpuhunt._internal.history.api import parse_day

    params = history_table()
    given = _read(pairs, params)
    args = _namespace(given, params, _history_defaults())
    try:
        query_checks.check_gpu_names(args.gpu_name)
    except InputError as e:
        raise ParameterError("gpu", f"gpu: {e}", 422) from None
    try:
        parse_day(args.since)
    except InputError as e:
        raise ParameterError("since", f"since: {e}", 422) from None
    return Request(args, 0, _key(given))


def _normal(value: Any) -> Any:
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    return str(value)


# A server answers from its catalog: it asks no provider live.
_NOT_LIVE = " (this server answers from the catalog only)"


def parameter_error(e: Exception, status: int = 422) -> ParameterError:
    """A check's error as a `ParameterError` naming the parameter: each filter the message
    names as its parameter (the first one is the parameter of the error); a provider error
    names `provider`."""
    if isinstance(e, QueryInputError):
        text = e.text(lambda name: spec.BY_NAME[name].wire) + (_NOT_LIVE if e.online else "")
        if e.named:
            return ParameterError(spec.BY_NAME[e.named[0]].wire, text, status)
        if e.field is not None:
            wire = spec.BY_NAME[e.field].wire
            return ParameterError(wire, f"{wire}: {text}", status)
        return ParameterError(None, text, status)
    if isinstance(e, UnknownProviderError):
        return ParameterError("provider", f"provider: {e}", status)
    return ParameterError(None, str(e), status)
