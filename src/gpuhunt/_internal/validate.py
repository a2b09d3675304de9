"""The one check of query arguments (pure): what `QueryFilter` takes field by field, and the
ranges across fields. `QueryFilter` runs `check_field` on every assignment (its constructor and
any later `q.min_cpu = ...`, as dstack builds its filters), `check_ranges` when it is made;
`Catalog.query()` and `gpuhunt.query()` build a `QueryFilter` (the fast path), and `matches()`
runs `check_ranges` on a filter changed since it was last checked.

Which rule a filter follows is its `check` in the query spec (`query/spec.py`). The rules
(docs/python.md, "Arguments"):

- counts (`min/max_cpu`, `min/max_gpu_count`): a whole number >= 0 (`8` or `8.0`);
- sizes and prices (memory, GPU memory, total GPU memory, disk, price, memory per GPU): a
  number >= 0; NaN is refused; a maximum may be `inf` (no bound);
- numbers are never taken from strings: `min_gpu_count="8"` is a `TypeError`, so text is never
  compared as a number or a number as text (the CLI parses its own arguments). Booleans are not
  numbers here either;
- `spot`, `available`, `resale`: `True`, `False` or `None` only (`"false"` would otherwise read
  as true);
- `max_age`: a `datetime.timedelta`, at least 0;
- names (`provider`, `gpu_name`, `location`, `country`, `area`): a string or a list, tuple or set of strings;
- `allowed_flags`: a collection of strings (a list, set, ...), not a string, whose `in` would
  test substrings;
- `cpu_arch`, `gpu_vendor`: the enum or a name `cast` knows; versions (`min/max_compute_capability`,
  `min_cuda`) as `parse_version` reads them;
- `include`: a string or a list of strings, each a kind of `spec.INCLUDE_KINDS`, `all`, or
  several joined by commas;
- every minimum at most its maximum.

A wrong type is a `TypeError`, an impossible value a `ValueError`; each names the argument and
the value.
"""

from __future__ import annotations

import datetime as dt
import math
import numbers
import re
from collections.abc import Collection
from dataclasses import fields
from typing import Any

from gpuhunt._internal.query import spec
from gpuhunt._internal.vocabulary import AcceleratorVendor, CPUArchitecture

# Set in a `QueryFilter`'s `__dict__` (not a field: `asdict`, `==` and `repr` ignore it) while
# every field and range is known good; any assignment to a field removes it.
CHECKED = "_gpuhunt_checked"
# Where a filter keeps its parsed form (`query/parsed.py`), dropped with `CHECKED`.
PARSED = "_gpuhunt_parsed"

# The filters by how they are checked, from the query spec.
COUNTS = spec.names_of("count")
SIZES = spec.names_of("size")
NAMES = spec.names_of("names")
FLAGS = spec.names_of("flag")  # True, False or None
VERSIONS = spec.names_of("version")
RANGES = spec.RANGES
_AGES = spec.names_of("age")
_FLAG_SETS = spec.names_of("flag_set")
_ENUMS = spec.names_of("enum")
_KINDS = spec.names_of("kinds")


def _shown(value: Any) -> str:
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{text} ({type(value).__name__})"


def is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_number(
    name: str, value: Any, *, whole: bool = False, positive: bool = False, infinite: bool = False
) -> None:
    """A real number (not a bool or a string), not NaN, >= 0 (> 0 if `positive`), finite unless
    `infinite`, whole if `whole`."""
    kind = "a whole number" if whole else "a number"
    if not is_number(value):
        raise TypeError(f"{name} must be {kind}, got {_shown(value)}")
    if math.isnan(value):
        raise ValueError(f"{name} must be {kind}, got NaN")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be {'above' if positive else 'at least'} 0, got {value!r}")
    if math.isinf(value):
        if not infinite:
            raise ValueError(f"{name} must be finite, got {value!r}")
        return
    if whole and value != int(value):
        raise ValueError(f"{name} must be a whole number, got {value!r}")


def check_field(name: str, value: Any) -> None:
    """Raise TypeError/ValueError if `value` cannot be the filter field `name`."""
    if value is None:
        return
    if name in COUNTS:
        check_number(name, value, whole=True, infinite=name.startswith("max_"))
    elif name in SIZES:
        check_number(name, value, infinite=name.startswith("max_"))
    elif name in FLAGS:
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True, False or None, got {_shown(value)}")
    elif name in _AGES:
        if not isinstance(value, dt.timedelta):
            raise TypeError(f"{name} must be a datetime.timedelta, got {_shown(value)}")
        if value < dt.timedelta(0):
            raise ValueError(f"{name} must be at least 0, got {value!r}")
    elif name in NAMES:
        if isinstance(value, str):
            return
        if not isinstance(value, (list, tuple, set, frozenset)) or not all(
            isinstance(v, str) for v in value
        ):
            raise TypeError(f"{name} must be a string or a list of strings, got {_shown(value)}")
    elif name in _FLAG_SETS:
        if isinstance(value, (str, bytes)) or not isinstance(value, Collection):
            raise TypeError(f"{name} must be a list or set of flags (or None), got {_shown(value)}")
        if isinstance(value, (list, tuple, set, frozenset)) and not all(
            isinstance(v, str) for v in value
        ):
            raise TypeError(f"{name} must hold strings, got {_shown(value)}")
    elif name in _ENUMS:
        enum: type[CPUArchitecture] | type[AcceleratorVendor] = (
            CPUArchitecture if name == "cpu_arch" else AcceleratorVendor
        )
        if isinstance(value, enum):
            return
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a {enum.__name__} or its name, got {_shown(value)}")
        try:
            enum.cast(value)
        except ValueError:
            known = ", ".join(v.value for v in enum)
            raise ValueError(f"{name} must be one of {known}, got {value!r}") from None
    elif name in _KINDS:
        if not isinstance(value, str) and (
            not isinstance(value, (list, tuple, set, frozenset))
            or not all(isinstance(v, str) for v in value)
        ):
            raise TypeError(f"{name} must be a string or a list of strings, got {_shown(value)}")
        spec.include_hidden(value)
    elif name in VERSIONS:
        # A pair of ints is compared as it is, (major, minor), never misread.
        if isinstance(value, tuple) and len(value) == 2 and all(is_int(v) for v in value):
            return
        # Any unreadable version is a ValueError (as it always was), whatever its type.
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{name} must be a version such as 9.0, got {value!r}")
        parse_version(value, name)


def check_ranges(q: Any) -> None:
    """Every minimum of `q` at most its maximum (versions compared as versions)."""
    for what in RANGES:
        low, high = getattr(q, f"min_{what}"), getattr(q, f"max_{what}")
        if low is None or high is None:
            continue
        if what == "compute_capability":
            low_v, high_v = _version(low), _version(high)
            if low_v is not None and high_v is not None and low_v > high_v:
                raise ValueError(
                    f"min_{what} ({low!r}) is above max_{what} ({high!r}): no offer can match"
                )
        elif low > high:
            raise ValueError(
                f"min_{what} ({low!r}) is above max_{what} ({high!r}): no offer can match"
            )


def ensure_checked(q: Any) -> None:
    """Check a filter whose fields changed (or were set around `__setattr__`) since it was
    last checked; a no-op, one dictionary lookup, for one already checked."""
    state = getattr(q, "__dict__", None)
    if state is None or state.get(CHECKED):
        return
    for f in fields(q):
        check_field(f.name, getattr(q, f.name))
    check_ranges(q)
    state.pop(PARSED, None)  # read from fields since changed: made again on use
    state[CHECKED] = True


def _version(value: Any) -> tuple[int, int] | None:
    if isinstance(value, tuple):
        return value
    return parse_version(value)


def parse_version(value: Any, what: str = "version") -> tuple[int, int] | None:
    """A MAJOR.MINOR version as people write it - `9`, `"9"`, `9.0`, `"9.0"`, `(9, 0)`, `"12.8"` -
    as a tuple; None stays None. Anything else is a ValueError naming `what` was wrong."""
    if value is None:
        return None
    parts: Any = None
    if isinstance(value, (tuple, list)) and len(value) == 2:
        parts = value
    elif isinstance(value, (int, float, str)) and not isinstance(value, bool):
        text = str(value).strip()
        parts = text.split(".") if re.fullmatch(r"\d+(\.\d+)?", text) else None
        if parts is not None and len(parts) == 1:
            parts.append("0")
    if parts is not None and all(
        (isinstance(p, int) and not isinstance(p, bool)) or (isinstance(p, str) and p.isdigit())
        for p in parts
    ):
        major, minor = int(parts[0]), int(parts[1])
        if 0 <= major < 1000 and 0 <= minor < 1000:
            return major, minor
    raise ValueError(f"Invalid {what} {value!r}: expected MAJOR.MINOR such as 9.0, 9 or (9, 0)")


def check_flag(name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {_shown(value)}")


def check_timeout(name: str, value: Any) -> tuple[float, float]:
    """Seconds: one number for connect and read alike, or a (connect, read) pair; each above 0
    and finite."""
    pair = value if isinstance(value, (tuple, list)) else (value, value)
    if len(pair) != 2:
        raise TypeError(f"{name} must be seconds or a (connect, read) pair, got {_shown(value)}")
    for part in pair:
        try:
            check_number(name, part, positive=True)
        except TypeError:
            raise TypeError(
                f"{name} must be seconds or a (connect, read) pair, got {_shown(value)}"
            ) from None
    return float(pair[0]), float(pair[1])


def check_catalog_arguments(
    *,
    balance_resources: Any,
    auto_reload: Any,
    reload_interval: Any,
    catalog_url: Any,
    timeout: Any,
    retries: Any,
    online_timeout: Any,
    load_timeout: Any,
) -> tuple[float, float]:
    """`Catalog(...)`'s arguments, each checked as it enters; the (connect, read) timeout."""
    check_flag("balance_resources", balance_resources)
    check_flag("auto_reload", auto_reload)
    if reload_interval is not None:
        # inf: never reload; 0: check for a new version on every query (tests use it).
        check_number("reload_interval", reload_interval, infinite=True)
    if catalog_url is not None and (not isinstance(catalog_url, str) or not catalog_url.strip()):
        raise TypeError(f"catalog_url must be a URL or a folder, got {_shown(catalog_url)}")
    pair = check_timeout("timeout", timeout)
    check_number("retries", retries, whole=True)
    if online_timeout is not None:
        check_number("online_timeout", online_timeout, positive=True)
    if load_timeout is not None:
        check_number("load_timeout", load_timeout)  # 0: no whole-load limit
    return pair
