"""A griffe extension for the API reference (mkdocs.yml, mkdocstrings' `extensions`).

The reference is read by importing gpuhunt (`force_inspection`): `gpuhunt.query` is made by a
function at import time, `CatalogItem` is rebuilt once defined, and only the imported objects
show their real signatures and fields. Imported, a class attribute without a docstring of its
own (`NAME = "abstract"`, a dataclass default) would show its value's type's docstring (`str`'s,
`int`'s): those are dropped here.
"""

from __future__ import annotations

import inspect
from typing import Any

import griffe


class DropBuiltinDocstrings(griffe.Extension):
    def on_attribute_instance(self, *, node: Any, attr: griffe.Attribute, **kwargs: Any) -> None:
        value = getattr(node, "obj", None)
        if attr.docstring is None or value is None:
            return
        if attr.docstring.value == inspect.getdoc(type(value)):
            attr.docstring = None
