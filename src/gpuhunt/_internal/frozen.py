"""Read-only lists and dicts: what offers built from the catalog share (`flags`, `provider_data`
and the lists and dicts inside it), so that one caller cannot change another caller's offers.
They are still a `list` and a `dict` to `isinstance`, `==`, `json.dumps` and
`dataclasses.asdict`; a copy of one is an ordinary mutable container."""

from __future__ import annotations

from typing import Any


class FrozenList(list):  # type: ignore[type-arg]
    """A read-only list: what offers built from the catalog share (flags, lists inside
    `provider_data`), so that one caller cannot change another caller's offers.

    It is a `list` (`isinstance`, `==`, `json.dumps` and `dataclasses.asdict` treat it as one);
    every method that would change it raises `TypeError`. `FrozenList(x)`, which is what
    `dataclasses.asdict` and `copy` call on a list's type, gives an ordinary mutable `list`.
    """

    __slots__ = ()

    def __new__(cls, iterable: Any = ()) -> Any:
        return list(iterable)

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "this list is shared by offers from the catalog and is read-only; "
            "change a copy (list(...)) instead"
        )

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __reduce__(self) -> Any:
        # Unpickled as a plain list: a copy nobody shares, readable by any version.
        return (list, (list(self),))

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: Any) -> FrozenList:
        return self  # everything inside is immutable too


class FrozenDict(dict):  # type: ignore[type-arg]
    """A read-only dict: what offers built from the catalog share as `provider_data`.

    It is a `dict` (`isinstance`, `==`, `json.dumps` and `dataclasses.asdict` treat it as one);
    every method that would change it raises `TypeError`. `FrozenDict(x)` gives an ordinary
    mutable `dict`, so `dataclasses.asdict(item)` hands back plain, mutable dicts.
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        return dict(*args, **kwargs)

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "this provider_data is shared by offers from the catalog and is read-only; "
            "change a copy (dict(...)) instead"
        )

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: Any) -> FrozenDict:
        return self


def freeze(value: Any) -> Any:
    """`value` with every list and dict in it (at any depth) made read-only."""
    if isinstance(value, dict):
        return _frozen_dict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return _frozen_list([freeze(v) for v in value])
    return value


def _frozen_list(values: list[Any]) -> FrozenList:
    obj = list.__new__(FrozenList)
    list.extend(obj, values)
    return obj


def _frozen_dict(values: dict[Any, Any]) -> FrozenDict:
    obj = dict.__new__(FrozenDict)
    dict.update(obj, values)
    return obj
