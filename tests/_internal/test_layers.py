"""Each layer of `_internal` imports only from the layers below it (see docs/design.md), and
nothing in it imports `gpuhunt.providers` (the registry imports provider modules by name)."""

import ast
from pathlib import Path

import gpuhunt._internal

ROOT = Path(list(gpuhunt._internal.__path__)[0])
LAYERS = [
    {"models", "schema", "accelerators", "constraints", "errors", "registry", "freshness"},
    {"query"},
    {"formats", "history.table", "history.daily", "history.diff"},
    {"load"},
    {"catalog", "default", "publish.build", "history.remote", "history.plot"},
    {"publish"},
    {"cli", "cli_query", "cli_format", "history.commands"},
]


def _layer(module: str) -> int:
    """`module` relative to `gpuhunt._internal`, e.g. "query.table" or "catalog"."""
    for rank in reversed(range(len(LAYERS))):
        for name in LAYERS[rank]:
            if module == name or module.startswith(name + "."):
                return rank
    raise AssertionError(f"{module} is in no layer")


def _imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
            found += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names]
    return found


def test_layers_import_only_downwards():
    wrong = []
    for path in ROOT.rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if module.endswith("__init__"):
            continue
        for name in _imports(path):
            assert not name.startswith("gpuhunt.providers"), f"{module} imports {name}"
            if not name.startswith("gpuhunt._internal."):
                continue
            target = name.removeprefix("gpuhunt._internal.")
            if (
                target.split(".")[0] in {"query", "formats", "load", "publish", "history"}
                and "." not in target
            ):
                continue  # `from gpuhunt._internal import query`: the named module is checked
            if _layer(target) > _layer(module):
                wrong.append(f"{module} -> {target}")
    assert not wrong
