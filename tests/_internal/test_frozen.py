"""`frozen.py`: the read-only containers offers share. Every change is refused with the same
`TypeError`, at any depth; a copy, `dataclasses.asdict` and a pickle give ordinary containers."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from gpuhunt._internal.frozen import FrozenDict, FrozenList, freeze

DATA = {"zones": ["a", "b"], "nested": {"ports": [22, 443]}, "n": 1}


def test_freeze_is_read_only_at_every_depth_and_still_a_list_and_a_dict():
    f = freeze(DATA)
    assert isinstance(f, FrozenDict) and isinstance(f["zones"], FrozenList)
    assert isinstance(f["nested"]["ports"], FrozenList)
    assert f == DATA and isinstance(f, dict) and json.loads(json.dumps(f)) == DATA
    changes = [
        lambda: f.__setitem__("n", 2),
        lambda: f.update(n=2),
        lambda: f.pop("n"),
        lambda: f.setdefault("x", 1),
        lambda: f["zones"].append("c"),
        lambda: f["zones"].__setitem__(0, "z"),
        lambda: f["nested"]["ports"].sort(),
        lambda: f["nested"].clear(),
    ]
    for change in changes:
        with pytest.raises(TypeError, match="read-only"):
            change()
    assert f == DATA  # nothing changed


def test_copies_are_ordinary_and_mutable():
    f = freeze(DATA)
    for plain in (dict(f), FrozenDict(f), pickle.loads(pickle.dumps(f))):
        assert type(plain) is dict and plain == DATA
        plain["n"] = 2
    assert type(list(f["zones"])) is list and type(FrozenList(f["zones"])) is list
    assert type(pickle.loads(pickle.dumps(f["zones"]))) is list
    # copy and deepcopy of a frozen one are the same object: nothing in it can change
    assert copy.copy(f) is f and copy.deepcopy(f) is f
