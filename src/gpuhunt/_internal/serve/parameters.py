"""The parameters of `/v1/offers`, `/v1/explain` and the MCP tools, read into the namespace
`gpuhunt query` builds from its command line (pure).

The table is not written here: it is read off `gpuhunt query`'s own argparse options
(`cli.query.arguments`), so an option added there (a new filter) is a parameter here, with its
type, choices and help, and is checked by the same code (`query._check_query_args`). A
parameter's name is its option's (`--max-price` is `max_price`, `--gpu` is `gpu`); an on/off
option is a `true`/`false` parameter named after what it sets (`spot=false` is `--on-demand`).
What only makes sense on a terminal (output format, `--online`, `--refresh`, ...) is left out,
and `limit` is the server's own (default 100, at most 10000).

Errors name the parameter: 400 for a request that cannot be read (an unknown or repeated
name, a value that is not a number or not one of the choices, NUL or other control
characters, markup, more than `MAX_VALUE` characters), 422 for values read but not
acceptable (negative, a range no offer can match, an unknown provider or GPU name).
"""

from __future__ import annotations

import argparse
import functools
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gpuhunt._internal import registry
from gpuhunt._internal.cli import commands, query
from gpuhunt._internal.errors import InputError

MAX_VALUE = 1000  # characters of one value (or name)
MAX_PARAMETERS = 100  # name=value pairs in one request
DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000

# `gpuhunt query` options a request does not take: the terminal's output formats and views,
# where the catalog comes from (the server's choice), live providers (not served), the
# explanation (its own endpoint), and `--limit` (the server's own, with a cap).
LEFT_OUT = {"help", "json", "csv", "catalog_url", "online", "refresh", "explain", "group_by"}
LEFT_OUT |= {"limit"}

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
            except (TypeError, ValueError, argparse.ArgumentTypeError) as e:
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


def _parser(
    prog: str, arguments: Callable[[argparse.ArgumentParser], None]
) -> argparse.ArgumentParser:
    p = commands.Parser(prog=prog, add_help=False)
    arguments(p)
    return p


def _query_parser() -> argparse.ArgumentParser:
    return _parser("gpuhunt query", query.arguments)


def _history_parser() -> argparse.ArgumentParser:
    from gpuhunt._internal.cli import history

    return _parser("gpuhunt history", history._arguments)


@functools.cache
def _defaults() -> dict[str, Any]:
    return vars(_query_parser().parse_args([]))


@functools.cache
def _history_defaults() -> dict[str, Any]:
    return vars(_history_parser().parse_args([]))


_KINDS: dict[Any, str] = {int: "integer", float: "number"}


@functools.cache
def table() -> dict[str, Param]:
    """name -> Param, in the order `gpuhunt query --help` lists the options; `limit` last."""
    params = _params_of(_query_parser(), LEFT_OUT, {**_defaults(), **DEFAULTS})
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


# `gpuhunt history` options a request does not take: output, plotting, the catalog's address.
HISTORY_LEFT_OUT = {"help", "limit", "daily", "json", "csv", "plot", "catalog_url"}


@functools.cache
def history_table() -> dict[str, Param]:
    """The parameters of `/v1/history` and the `price_history` tool: `gpuhunt history`'s."""
    return _params_of(_history_parser(), HISTORY_LEFT_OUT, _history_defaults())


def _params_of(
    parser: argparse.ArgumentParser, left_out: set[str], defaults: dict[str, Any]
) -> dict[str, Param]:
    params: dict[str, Param] = {}
    flags: dict[str, list[argparse.Action]] = {}
    for action in parser._actions:
        if action.dest in left_out or not action.option_strings:
            continue
        if action.nargs == 0:  # --spot / --on-demand, --all-regions: on/off
            flags.setdefault(action.dest, []).append(action)
            if action.dest not in params:
                params[action.dest] = Param(action.dest, action.dest, "boolean")
            continue
        name = action.option_strings[0].lstrip("-").replace("-", "_")
        kind = _KINDS.get(action.type, "string")
        convert = action.type if callable(action.type) else None
        choices = tuple(action.choices) if action.choices is not None else None
        params[name] = Param(
            name,
            action.dest,
            kind,
            repeatable=isinstance(action, argparse._AppendAction),
            choices=choices,
            help=_help(action.help),
            convert=convert,
            default=defaults.get(action.dest),
        )
    for dest, actions in flags.items():
        consts = tuple(a.const for a in actions)
        helps = "; ".join(
            f"{str(a.const).lower()}: {_help(a.help)}" for a in actions if a.help is not None
        )
        params[dest] = Param(
            dest, dest, "boolean", help=helps, consts=consts, default=defaults.get(dest)
        )
    return params


def _help(text: str | None) -> str:
    # argparse's %(default)s and the like are not used by `query`'s options; `--x` spellings
    # in help texts are turned into parameter names.
    return _OPTION.sub(lambda m: m.group(1).replace("-", "_"), text or "")


_OPTION = re.compile(r"--([a-z][a-z-]*)")


@dataclass(frozen=True)
class Request:
    """A request's parameters read: `args` the namespace `gpuhunt query` would have built,
    `limit`, and `key`, the parameters in a normal form (for the ETag: `max_price=4` and
    `max_price=4.0` are one query)."""

    args: argparse.Namespace
    limit: int
    key: str

    @property
    def filters(self) -> dict[str, Any]:
        return query.query_filters(self.args)


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
) -> argparse.Namespace:
    args = argparse.Namespace(**defaults)
    for name, values in given.items():
        param = params[name]
        if param.kind == "boolean":
            _set_flag(args, param, values[0])
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
    into a `Request`, checked as `gpuhunt query` checks its options. Raises `ParameterError`."""
    params = table()
    given = _read(pairs, params)
    key = _key(given)  # `limit` included: it is part of the answer
    limit = given.pop("limit", [DEFAULT_LIMIT])[0]
    args = _namespace(given, params, {**_defaults(), **DEFAULTS})
    args.limit = None
    _check(args)
    return Request(args, limit, key)


def parse_history(pairs: Iterable[tuple[str, str]]) -> Request:
    """`/v1/history`'s parameters: `gpuhunt history`'s options, read and checked as it does
    (GPU names it does not know are an error naming `gpu`)."""
    from gpuhunt._internal.cli import history

    params = history_table()
    given = _read(pairs, params)
    args = _namespace(given, params, _history_defaults())
    from gpuhunt._internal.history.api import parse_day

    try:
        history._check_gpu_names(args.gpu_name)
    except InputError as e:
        raise ParameterError("gpu", f"gpu: {e}", 422) from None
    try:
        parse_day(args.since)
    except InputError as e:
        raise ParameterError("since", f"since: {e}", 422) from None
    return Request(args, 0, _key(given))


def _set_flag(args: argparse.Namespace, param: Param, value: bool) -> None:
    """`spot=false` sets what `--on-demand` sets. A value no option sets (`all_regions=false`,
    where only `--all-regions` exists; `resale=true` beside `--no-resales`) is set all the
    same: the namespace's fields are `QueryFilter`'s, which take both."""
    setattr(args, param.dest, value)


def _normal(value: Any) -> Any:
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    return str(value)


def _check(args: argparse.Namespace) -> None:
    """`gpuhunt query`'s own checks (ranges, versions, names of providers), their messages
    naming parameters instead of options."""
    try:
        query._check_query_args(args)
        named = [registry.spec(p) for p in args.provider or []]  # unknown names raise
        if any(spec.online for spec in named):  # which the bundled snapshot may stand in for
            query._live_providers(args)
    except (InputError, ValueError) as e:
        raise parameter_error(str(e)) from None


def parameter_error(message: str, status: int = 422) -> ParameterError:
    """A `gpuhunt query` error message (naming `--options`) as a `ParameterError` naming the
    parameter; `--online` advice does not apply to a server."""
    names = {p.dest: p.name for p in table().values()}
    named: list[str] = []
    if "--online" in message:
        # Live providers are the command line's (`--online`); a server answers from its catalog.
        message = re.sub(r"(: |; |\()?(add )?--online\b.*", "", message).rstrip(" (")
        message = f"{message} (this server answers from the catalog only)"
    if "--online" in message or "Unknown provider" in message or "queried live" in message:
        return ParameterError("provider", f"provider: {message}", status)

    def rename(m: re.Match[str]) -> str:
        option = m.group(1).replace("-", "_")
        name = {"on_demand": "spot", "gpu_name": "gpu"}.get(option, option)
        name = names.get(name, name)
        named.append(name)
        return name

    text = _OPTION.sub(rename, message)
    return ParameterError(named[0] if named else None, text, status)
