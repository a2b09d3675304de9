"""Each layer of `_internal` imports only from the layers below it (see docs/design.md), and
nothing in it imports `gpuhunt.providers` (the registry imports provider modules by name);
nothing under src/ or scripts/ imports `tests`; no `_internal` module reads the environment
when it is imported."""

import ast
from collections.abc import Container
from pathlib import Path

import pytest

import gpuhunt._internal

ROOT = Path(list(gpuhunt._internal.__path__)[0])
LAYERS = [
    {
        "vocabulary",
        "offer_state",
        "offer_spec",
        "rows",
        "models",
        "forks",
        "frozen",
        "schema",
        "accelerators",
        "gpu_names",
        "errors",
        "registry",
        "freshness",
        "validate",
        "geography",
        "collapse",
        "distinct",
        "form_factor",
        "gpu_specs",
        "backoff",
        "currency",
        "observed",
        "costs",  # pure data and arithmetic of issue 49 (terms, usage, interruption, transfer)
        "rentable",
    },
    {"query", "constraints"},  # constraints: 0.1.x's import path of `query.match`
    {
        "formats",
        "history.table",
        "history.daily",
        "history.diff",
        "site.arrays",
        "site.controls",
        "site.data",
        "site.marks",
        "site.usage",
    },
    {"load"},
    {
        "catalog",
        "catalog_costs",
        "catalog_query",
        "catalog_status",
        "query_checks",
        "online_pool",
        "default",
        "explain",
        "site.facts",
        "publish.build",
        "history.remote",
        "history.api",
        "history.plot",
        "history.observations",
        "history.availability",
        "publish.converge",
        "publish.dataset",
        "site.build",
    },
    {"publish", "site.publish"},
    {"cli", "serve"},  # the doors: siblings, neither imports the other (serve.py/mcp.py start them)
]


# Modules of a package placed below the package's layer: the query spec is pure data that
# `validate` (the base) and every door read.
BELOW = {"query.spec": 0}


def _layer(module: str) -> int:
    """`module` relative to `gpuhunt._internal`, e.g. "query.table" or "catalog"."""
    if module in BELOW:
        return BELOW[module]
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


@pytest.mark.slow
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


# ------------------------------------------------------- only the top reads the environment

SRC = ROOT.parent  # src/gpuhunt

# Where the environment may be read, and why each is "the top" (see docs/design.md, "One
# context"): everything else gets settings from the `Catalog` (or command) that called it.
ENV_READERS = {
    ("_internal/load/settings.py", "Settings.from_env"): "the one reader of GPUHUNT_*",
    ("_internal/catalog.py", "Catalog.__init__"): "a Catalog made without settings",
    ("_internal/history/api.py", "diff"): "gpuhunt.diff, a public entry point",
    ("_internal/cli/collect.py", "_collect"): "`python -m gpuhunt PROVIDER`",
    ("_internal/cli/layout.py", "terminal_width"): "COLUMNS, the terminal's, for the CLI",
    ("_internal/cli/serve.py", "open_catalog"): "`gpuhunt serve` and `gpuhunt mcp` --catalog",
    ("_internal/cli/history.py", "run"): "`gpuhunt history`",
    ("_internal/cli/catalog_site.py", "run"): "`gpuhunt catalog site`",
    ("_internal/cli/catalog_build.py", "run"): "`gpuhunt catalog build`",
    ("_internal/cli/catalog_verify.py", "run"): "`gpuhunt catalog verify`",
    ("_internal/cli/catalog_report.py", "run"): "`gpuhunt catalog report` (webhook)",
    ("_internal/publish/integrity.py", "run_integrity_tests"): "the build's test subprocess",
    ("_internal/publish/report.py", "write"): "GITHUB_STEP_SUMMARY, the build's CI job",
    ("_internal/publish/s3.py", "s3_client"): "the S3 endpoint of `catalog publish`",
    # Providers read their own credential variables, in `from_env()` (called from the top:
    # default_catalog(), the CLI) and the helpers it calls; three constructors keep the
    # environment fallback they had in 0.1.x.
    ("providers/base.py", "get_creds_env"): "credentials, for from_env()",
    ("providers/jarvislabs.py", "_key_from_env"): "credentials, for from_env() and __init__",
    ("providers/oci.py", "credentials_from_env"): "credentials, for from_env()",
    ("providers/oci.py", "load_config"): "the OCI config file named by OCI_CONFIG_FILE",
    ("providers/aws.py", "AWSProvider.__init__"): "the pricing cache path (0.1.x)",
    ("providers/cloudrift.py", "CloudRiftProvider.__init__"): "the server address (0.1.x)",
}

# Where threads start, and who ends them (docs/design.md, "Threads").
THREAD_STARTERS = {
    ("_internal/load/threads.py", "Owner.start"): "the Catalog's Owner: Catalog.close()",
    ("_internal/load/threads.py", "run"): "without an owner: a daemon, ends with its work",
    ("_internal/load/threads.py", "DaemonPool.submit"): "without an owner: its pool's shutdown",
    ("providers/runpod.py", "run_batched"): "the with-block of the call",
    ("providers/aws.py", "fetch_spot_prices"): "the with-block of the call",
    ("providers/azure.py", "fetch_prices"): "the with-block of the call",
    ("providers/azure.py", "fetch_reservations"): "the with-block of the call",
    ("providers/vultr.py", "fetch_vdm_locations"): "the with-block of the call",
}


def _found(want) -> set[tuple[str, str]]:
    """(file, function) of every node `want(node)` accepts under src/gpuhunt."""
    hits: set[tuple[str, str]] = set()

    def walk(node: ast.AST, where: str, names: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                walk(child, where, [*names, child.name])
                continue
            if want(child):
                hits.add((where, ".".join(names) or "<module>"))
            walk(child, where, names)

    for path in SRC.rglob("*.py"):
        walk(ast.parse(path.read_text()), path.relative_to(SRC).as_posix(), [])
    return hits


def _reads_environment(node: ast.AST) -> bool:
    if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name):
        return False
    return (node.value.id, node.attr) in {
        ("os", "environ"),
        ("os", "getenv"),
        ("Settings", "from_env"),
    }


def _starts_threads(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return name in {"Thread", "ThreadPoolExecutor"}


def test_only_the_top_reads_the_environment():
    found = _found(_reads_environment)
    allowed = set(ENV_READERS)
    providers_from_env = {
        (f, fn) for f, fn in found if f.startswith("providers/") and fn.endswith(".from_env")
    }
    assert sorted(found - allowed - providers_from_env) == []
    assert sorted(allowed - found) == []  # the list is kept exact, so a stale entry is seen
    assert len(providers_from_env) >= 5  # the scan sees through provider classes


def test_every_thread_has_an_owner():
    found = _found(_starts_threads)
    assert sorted(found) == sorted(THREAD_STARTERS)


CLOSE_SCRIPT = r"""
import json, sys, threading
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from gpuhunt import Catalog
from gpuhunt._internal.load import threads
from gpuhunt._internal.load.settings import Settings
from tests.helpers import folder_transport, item

started = []
real_start = threads.Owner.start
def start(self, target, name):
    started.append(name)
    return real_start(self, target, name)
threads.Owner.start = start

class Clock:
    now = 1000.0
    def __call__(self):
        return self.now

class Live:
    NAME = "vastai"
    session = None
    def get(self, query_filter=None, balance_resources=True):
        return [item("vastai", price=0.3, instance_name="live")]

tmp = Path(sys.argv[1])
clock = Clock()
c = Catalog(
    catalog_url="https://catalog.test/v3",
    transport=folder_transport(tmp / "bucket"),
    settings=Settings(cache_dir=tmp / "cache"),
    clock=clock,
)
c.add_provider(Live())
first = [o.instance_name for o in c.query()]
clock.now += 5 * 3600  # past the reload interval: the next query reloads in the background
second = [o.instance_name for o in c.query()]
c.close()
after_close = sorted(t.name for t in threading.enumerate() if t is not threading.main_thread())
again = [o.instance_name for o in c.query()]  # a closed catalog reopens
with c:
    pass
after_with = sorted(t.name for t in threading.enumerate() if t is not threading.main_thread())
print(json.dumps([first, second, after_close, again, after_with, sorted(set(started))]))
"""


@pytest.mark.subprocess
def test_close_leaves_no_thread_of_ours_running(tmp_path):
    """In a fresh interpreter (so every thread but the main one is ours): a load on the
    download thread, a reload in the background and an online query, then `close()`: no
    thread is left, and the catalog still answers afterwards (and closes again)."""
    import json
    import subprocess
    import sys

    from gpuhunt._internal.formats.csv import csv_bytes
    from tests.helpers import item, publish_archive

    publish_archive(
        tmp_path / "bucket",
        "20261129-1",
        {"aws": csv_bytes([item(price=2.0, instance_name="p4d")])},
    )
    out = subprocess.run(
        [sys.executable, "-c", CLOSE_SCRIPT, str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    first, second, after_close, again, after_with, started = json.loads(out.stdout)
    assert first == second == again == ["live", "p4d"]
    assert after_close == [] and after_with == []
    assert started == [
        "gpuhunt-download",
        "gpuhunt-load-side-1",
        "gpuhunt-online-1",
        "gpuhunt-reload",
    ]


# ------------------------------------------------------------------ no circle


def _internal_imports() -> dict[str, dict[str, bool]]:
    """module -> {imported `_internal` module: whether only inside a function}, for every module
    of `_internal`; imports under `if TYPE_CHECKING:` (annotations only) left out."""
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    found: dict[str, dict[str, bool]] = {}
    for name, path in modules.items():
        edges: dict[str, bool] = {}

        def walk(
            node: ast.AST, in_function: bool, edges: dict[str, bool] = edges, me: str = name
        ) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    continue
                inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                if isinstance(child, ast.ImportFrom) and (child.module or "").startswith(
                    "gpuhunt._internal"
                ):
                    base = child.module.removeprefix("gpuhunt._internal").lstrip(".")
                    for alias in child.names:
                        full = f"{base}.{alias.name}" if base else alias.name
                        target = full if full in modules else base
                        if target in modules and target != me:
                            edges[target] = edges.get(target, True) and in_function
                walk(child, inner)

        walk(ast.parse(path.read_text()), False)
        found[name] = edges
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_in_internal():
    """Drawn from its imports (module level and inside functions alike), `_internal` has no
    circle: a lazy import may save start-up time, never hide a loop."""
    graph = {m: set(edges) for m, edges in _internal_imports().items()}
    assert _cycles(graph) == []
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


BASE = ["accelerators", "constraints", "gpu_names", "gpu_specs", "models", "validate", "vocabulary"]


def test_the_base_imports_at_module_level_only():
    """The six files issue 39 found in a circle import each other at the top, not inside
    functions."""
    imports = _internal_imports()
    inside = {m: [t for t, lazy in imports[m].items() if lazy] for m in BASE}
    assert inside == {m: [] for m in BASE}


MAX_LINES = 450
# Over the limit today and being split by their owners (issue 39); remove each when it is.
NOT_YET_SPLIT: set[str] = set()


def test_no_internal_module_over_450_lines():
    long = {
        p.relative_to(ROOT).as_posix(): n
        for p in ROOT.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert set(long) <= NOT_YET_SPLIT, long


# ------------------------------------------------------- no cycles, thin doors, no private reads


def _modules() -> dict[str, Path]:
    """Every module of `_internal` by dotted name ("query.table"; a package is its name)."""
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _edges(path: Path, modules: Container[str]) -> set[str]:
    """The `_internal` modules `path` imports anywhere: at the top, under TYPE_CHECKING, in a
    function (a lazy import is an arrow all the same)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gpuhunt._internal"):
            base = (node.module or "").removeprefix("gpuhunt._internal").lstrip(".")
            for alias in node.names:
                name = f"{base}.{alias.name}" if base else alias.name
                out.add(name if name in modules else base)
        elif isinstance(node, ast.Import):
            out |= {
                a.name.removeprefix("gpuhunt._internal.")
                for a in node.names
                if a.name.removeprefix("gpuhunt._internal.") in modules
            }
    return out - {""}


def test_no_import_cycle_even_under_type_checking():
    modules = _modules()
    graph = {m: _edges(p, modules) - {m} for m, p in modules.items() if m}
    cycles = []
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                cycles.append(" -> ".join([*path[path.index(n) :], n]))
            elif n not in state:
                walk(n, [*path, n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            walk(m, [m])
    assert not cycles


# The one arrow from serve/ into cli/ left: the JSON row of an offer (`render.as_dict`,
# `csv_header`), which the offer spec moves into the library (issue 47's other half).
SERVE_READS_OF_CLI: set[str] = set()


def test_the_servers_import_no_cli_and_no_argparse():
    modules = _modules()
    wrong = []
    for name, path in modules.items():
        if not name.startswith("serve"):
            continue
        for target in _edges(path, modules):
            if target.startswith("cli") and target not in SERVE_READS_OF_CLI:
                wrong.append(f"{name} -> {target}")
        wrong += [f"{name} -> argparse" for n in _imports(path) if n.split(".")[0] == "argparse"]
    assert not wrong


def test_the_library_imports_no_door():
    modules = _modules()
    wrong = [
        f"{name} -> {target}"
        for name, path in modules.items()
        if name.split(".")[0] not in {"cli", "serve"}
        for target in _edges(path, modules)
        if target.split(".")[0] in {"cli", "serve"}
    ]
    assert not wrong


# Private names of the standard library itself (not of another gpuhunt module) a module may
# use: namedtuple's methods, `os._exit`, `sys._getframe`, and `atexit._run_exitfuncs`, which
# `cli.run` calls before `os._exit` (Python has no public way to run the exit hooks and then
# skip the interpreter's teardown).
PYTHON_PRIVATE = {"_replace", "_asdict", "_fields", "_make", "_exit", "_getframe", "_run_exitfuncs"}


def _own_names(tree: ast.Module) -> set[str]:
    """The names a module defines: at its top, and in its classes (methods, class attributes,
    `self._x = ...` in a method)."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            names |= {
                t.id
                for t in ast.walk(node)
                if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
            }
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for item in cls.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(item.name)
            elif isinstance(item, ast.Assign):
                names |= {t.id for t in item.targets if isinstance(t, ast.Name)}
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                names.add(item.target.id)
        for node in ast.walk(cls):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")
            ):
                names.add(node.attr)
    return names


def test_no_private_attribute_of_another_module_is_read():
    """`x._name` is read or set only where `_name` is the module's own: on `self`/`cls`/
    `super()`, or a name the module itself defines (a method or attribute of one of its classes,
    read on another instance of it). Everything else goes through public names: what a
    module needs of another's object is handed over explicitly (`catalog_query.Asking`) or
    read through a public accessor (`Catalog.current()`, `Table.by_shape`)."""
    wrong = []
    for path in ROOT.rglob("*.py"):
        tree = ast.parse(path.read_text())
        own = _own_names(tree)
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            name, value = node.attr, node.value
            if not name.startswith("_") or name.startswith("__") or name in own | PYTHON_PRIVATE:
                continue
            if isinstance(value, ast.Name) and value.id in ("self", "cls"):
                continue
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "super":
                continue
            wrong.append(f"{where}:{node.lineno} {ast.unparse(node)}")
    assert not wrong


# `import X as X` re-exports kept where callers find the names: 0.1.x's homes (`models`, the
# `constraints` shim); internal code imports a name from where it is defined.
RE_EXPORTERS = {"models.py", "constraints.py"}


def test_no_re_export_serves_internal_imports_only():
    wrong = []
    for path in ROOT.rglob("*.py"):
        where = str(path.relative_to(ROOT))
        if where in RE_EXPORTERS or path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                wrong += [
                    f"{where}:{node.lineno} {a.name}"
                    for a in node.names
                    if a.asname == a.name and not (node.module or "").startswith("typing")
                ]
    assert not wrong
