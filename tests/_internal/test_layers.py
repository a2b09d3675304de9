"""Each layer of `_internal` imports only from the layers below it (see docs/design.md), and
nothing in it imports `gpuhunt.providers` (the registry imports provider modules by name);
nothing under src/ or scripts/ imports `tests`; no `_internal` module reads the environment
when it is imported."""

import ast
from pathlib import Path

import gpuhunt._internal

ROOT = Path(list(gpuhunt._internal.__path__)[0])
LAYERS = [
    {
        "models",
        "forks",
        "frozen",
        "schema",
        "accelerators",
        "gpu_names",
        "constraints",
        "errors",
        "registry",
        "freshness",
        "validate",
        "geography",
        "collapse",
        "form_factor",
        "gpu_specs",
        "backoff",
    },
    {"query"},
    {"formats", "history.table", "history.daily", "history.diff", "site.data"},
    {"load"},
    {
        "catalog",
        "default",
        "explain",
        "site.facts",
        "publish.build",
        "history.remote",
        "history.api",
        "history.plot",
        "site.build",
    },
    {"publish", "site.publish"},
    {"cli", "cli_query", "cli_format", "history.commands", "site.commands"},
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
                target.split(".")[0] in {"query", "formats", "load", "publish", "history", "site"}
                and "." not in target
            ):
                continue  # `from gpuhunt._internal import query`: the named module is checked
            if _layer(target) > _layer(module):
                wrong.append(f"{module} -> {target}")
    assert not wrong


REPO = ROOT.parents[2]  # src/gpuhunt/_internal -> the repository


def test_nothing_shipped_or_scripted_imports_tests():
    """`src/` ships to users and `scripts/` builds what ships: neither may need the tests."""
    wrong = [
        f"{path.relative_to(REPO)} imports {name}"
        for folder in (REPO / "src", REPO / "scripts")
        for path in folder.rglob("*.py")
        for name in _imports(path)
        if name == "tests" or name.startswith("tests.")
    ]
    assert (REPO / "scripts").is_dir() and not wrong


def _runs_at_import(tree: ast.Module) -> list[ast.AST]:
    """The nodes Python evaluates when the module is imported: module and class bodies,
    decorators and default values, but not function bodies."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo += [*node.decorator_list, *node.args.defaults]
            todo += [d for d in node.args.kw_defaults if d is not None]
        elif isinstance(node, ast.Lambda):
            todo += node.args.defaults
        elif isinstance(node, ast.ClassDef):
            todo += [*node.decorator_list, *node.bases, *node.body]
        else:
            out.append(node)
            todo += list(ast.iter_child_nodes(node))
    return out


def test_no_environment_read_at_import_time():
    """Settings are read per `Catalog` (load/settings.py), never when a module is imported."""
    wrong = []
    for path in ROOT.rglob("*.py"):
        for node in _runs_at_import(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in {"getenv", "environ"}:
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not wrong
