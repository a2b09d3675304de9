#!/usr/bin/env python
"""Mutation testing of the filter code: would the tests notice a small deliberate bug?

Each mutant makes one small change to one function of `TARGETS` - a comparison flipped or moved
off its boundary, `and`/`or` or `&`/`|` swapped, an arithmetic operator swapped, a `not`/`~`/`-`
dropped, a number changed by one, a boolean flipped, a statement deleted, an `if` condition
forced true - and runs `TESTS` against it (stopping at the first failure). A mutant the tests
fail on is killed; one they pass is a survivor: a gap in the tests, or a change that cannot
alter any answer (an equivalent mutant, listed and explained in docs/mutation-testing.md).

    PYTHONPATH=src python scripts/mutation_test.py            # every target, 2 at a time
    PYTHONPATH=src python scripts/mutation_test.py select -j 1 --fail-under 95
    PYTHONPATH=src python scripts/mutation_test.py --list     # the mutants, without running
    PYTHONPATH=src python scripts/mutation_test.py --show 'select: ...'   # one mutant's diff

How: the parent process imports everything once; each mutant runs in a forked child that
swaps the mutated function's code object into the live function (so every reference to it,
wherever imported, runs the mutant) and calls `pytest.main`. Needs `os.fork` (Linux, macOS).
Hypothesis runs derandomized and without its example database, so a run is repeatable.

TARGETS and TESTS (TESTS_OF for a target with tests of its own) list the module and test paths of both layouts (before and after the
`_internal` subpackage move); the first that exists is used.
"""

from __future__ import annotations
import __future__

import argparse
import ast
import copy
import difflib
import importlib
import importlib.util
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# target name -> (its module: the first of these that exists, functions by qualified name; a
# function of another module is written "module:qualname").
TARGETS: dict[str, tuple[tuple[str, ...], list[str]]] = {
    "matches": (
        ("gpuhunt._internal.query.match",),
        [
            "matches",
            "_between",
            "_gpu_name_matches",
            "spec_matches",
            "_offer_state_matches",
            "location_matches",
            "gpu_name_wanted",
            "gpuhunt._internal.query.parsed:parse",
            "gpuhunt._internal.query.parsed:_gpu_names",
            "gpuhunt._internal.query.parsed:_version",
            "gpuhunt._internal.query.parsed:location_pattern",
            "gpuhunt._internal.accelerators:get_compute_capability",
            "gpuhunt._internal.offer_state:cuda_version_of",
            "gpuhunt._internal.offer_spec:read_cell",
            "gpuhunt._internal.offer_spec:parse_time",
            "gpuhunt._internal.offer_spec:migrate",
            "gpuhunt._internal.validate:parse_version",
            "gpuhunt._internal.gpu_names:memory_fits",
            "gpuhunt._internal.gpu_names:gpu_name_spec",
            "gpuhunt._internal.gpu_names:split_gpu_count",
            "gpuhunt._internal.gpu_names:tpu_generation",
            "gpuhunt._internal.form_factor:form_factor_matches",
            "_min_memory_per_gpu",
        ],
    ),
    "select": (
        ("gpuhunt._internal.query.masks",),
        [
            "select",
            "shape_mask",
            "gpu_name_mask",
            "state_mask",
            "offer_states",
            "cuda_versions",
            "form_factors",
            "one_of",
            "_range",
            "version_code",
            "_within",
            "_min_memory_per_gpu",
            "gpuhunt._internal.query.table:Table.__post_init__",
        ],
    ),
    "form_factor": (
        ("gpuhunt._internal.form_factor",),
        [
            "words_form_factor",
            "form_factor_words",
            "_word_value",
            "model_form_factor",
            "data_form_factor",
            "instance_form_factor",
            "refine",
            "offer_form_factor",
        ],
    ),
    "answers": (
        ("gpuhunt._internal.query.answers",),
        [
            "items",
            "prepare",
            "shape_groups",
            "_shapes",
            "_distinct_rows",
            "_as_bits",
            "merge_online",
            "gpuhunt._internal.models:fill_offers",
        ],
    ),
}
# The fast tests of the filter code, quickest killers first (those that exist are run).
TESTS = [
    "tests/_internal/test_filter_boundaries.py",
    "tests/_internal/test_constraints.py",
    "tests/_internal/query/test_filters.py",
    "tests/_internal/test_select_properties.py",
    "tests/_internal/query/test_table.py",
    "tests/_internal/query/test_match.py",
    "tests/_internal/query/test_masks.py",
    "tests/_internal/test_catalog_differential.py",
]
# Targets whose code other tests exercise: building answers is checked against the row-by-row
# reader and `matches` by these.
TESTS_OF = {
    "form_factor": [
        "tests/_internal/test_form_factor.py",
        "tests/_internal/test_filter_boundaries.py",
        "tests/_internal/test_select_properties.py",
    ],
    "answers": [
        "tests/_internal/query/test_answers.py",
        "tests/_internal/query/test_table.py",
        "tests/_internal/formats/test_columns.py",
        "tests/_internal/formats/test_csv_table.py",
        "tests/_internal/test_catalog_differential.py",
    ],
}
DOC = ROOT / "docs" / "mutation-testing.md"

_COMPARE: dict[type, list[type]] = {
    ast.GtE: [ast.Gt, ast.Lt],
    ast.LtE: [ast.Lt, ast.Gt],
    ast.Gt: [ast.GtE, ast.LtE],
    ast.Lt: [ast.LtE, ast.GtE],
    ast.Eq: [ast.NotEq],
    ast.NotEq: [ast.Eq],
    ast.Is: [ast.IsNot],
    ast.IsNot: [ast.Is],
    ast.In: [ast.NotIn],
    ast.NotIn: [ast.In],
}
_BINARY: dict[type, list[type]] = {
    ast.BitAnd: [ast.BitOr],
    ast.BitOr: [ast.BitAnd],
    ast.Add: [ast.Sub],
    ast.Sub: [ast.Add],
    ast.Mult: [ast.Div],
    ast.Div: [ast.Mult],
}
_BOOL: dict[type, type] = {ast.And: ast.Or, ast.Or: ast.And}


@dataclass
class Mutant:
    target: str
    function: str
    line: int
    before: str
    after: str
    site: int  # position in the function's fixed order of mutation sites
    key: str = ""  # stable name: function and change, no line number

    def describe(self) -> str:
        return f"line {self.line}: {self.key}"


# ---------------------------------------------------------------------- finding mutations


def _function_node(tree: ast.Module, qualname: str) -> ast.FunctionDef:
    scope: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for part in qualname.split("."):
        node = next(
            (n for n in scope if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part),
            None,
        )
        if node is None:
            raise SystemExit(f"mutation_test: no {qualname} in the module (TARGETS out of date?)")
        scope = node.body  # type: ignore[attr-defined]
    assert isinstance(node, ast.FunctionDef)
    return node


def _body_nodes(fn: ast.FunctionDef) -> list[ast.AST]:
    """The function body's nodes in a fixed order (annotations and defaults are not mutated;
    neither is the docstring)."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    skip = {
        id(n)
        for stmt in body
        for a in ast.walk(stmt)
        if isinstance(a, ast.AnnAssign)
        for n in ast.walk(a.annotation)
    }
    return [n for stmt in body for n in ast.walk(stmt) if id(n) not in skip]


def _parents(root: ast.AST) -> dict[int, tuple[ast.AST, str, int | None]]:
    out: dict[int, tuple[ast.AST, str, int | None]] = {}
    for parent in ast.walk(root):
        for name, value in ast.iter_fields(parent):
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, ast.AST):
                        out[id(child)] = (parent, name, i)
            elif isinstance(value, ast.AST):
                out[id(value)] = (parent, name, None)
    return out


def _replace(parents: dict, node: ast.AST, new: ast.AST) -> None:
    parent, name, index = parents[id(node)]
    ast.copy_location(new, node)
    if index is None:
        setattr(parent, name, new)
    else:
        getattr(parent, name)[index] = new


Edit = Callable[[ast.AST, dict], tuple[ast.AST, ast.AST]]  # -> (shown before, shown after)


def _edits(node: ast.AST, parents: dict) -> Iterator[Edit]:
    """The mutations of one node, each a function applying it to (a copy of) that node."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            for new in _COMPARE.get(type(op), []):

                def edit(n, p, i=i, new=new):
                    before = copy.deepcopy(n)
                    n.ops[i] = new()
                    return before, n

                yield edit
    elif isinstance(node, (ast.BinOp, ast.AugAssign)):
        for new in _BINARY.get(type(node.op), []):

            def edit(n, p, new=new):
                before = copy.deepcopy(n)
                n.op = new()
                return before, n

            yield edit
    elif isinstance(node, ast.BoolOp):

        def edit(n, p):
            before = copy.deepcopy(n)
            n.op = _BOOL[type(n.op)]()
            return before, n

        yield edit
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.Invert, ast.USub)):

        def edit(n, p):
            _replace(p, n, n.operand)
            return n, n.operand

        yield edit
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
        if isinstance(node.value, bool):
            values: list[object] = [not node.value]
        else:
            values = [node.value + 1, node.value - 1]
        for v in values:

            def edit(n, p, v=v):
                before = copy.deepcopy(n)
                n.value = v
                return before, n

            yield edit
    if isinstance(node, ast.stmt) and not isinstance(node, ast.Pass):

        def delete(n, p):
            _replace(p, n, ast.Pass())
            return n, ast.Pass()

        yield delete
    if isinstance(node, ast.If):

        def always(n, p):
            before = copy.deepcopy(n)
            n.test = ast.Constant(True)
            return before, n

        yield always


def _show(node: ast.AST) -> str:
    text = ast.unparse(node).splitlines()[0]
    return text if len(text) <= 90 else text[:87] + "..."


def mutants_of(target: str) -> list[Mutant]:
    out: list[Mutant] = []
    for entry in TARGETS[target][1]:
        module_name, qualname = _where(target, entry)
        fn = _function_node(ast.parse(_module_path(module_name).read_text()), qualname)
        seen: dict[str, int] = {}
        site = 0
        for node in _body_nodes(fn):
            for _ in _edits(node, {}):
                mutated = _mutated(fn, site)
                if mutated is not None:
                    _, before, after, line = mutated
                    key = f"{qualname}: `{before}` -> `{after}`"
                    seen[key] = seen.get(key, 0) + 1
                    if seen[key] > 1:
                        key += f" (#{seen[key]})"
                    out.append(Mutant(target, entry, line, before, after, site, key))
                site += 1
    return out


def _mutated(fn: ast.FunctionDef, site: int) -> tuple[ast.FunctionDef, str, str, int] | None:
    """A copy of `fn` mutated at `site`, the change as shown (before, after) and its line; None
    when the change would leave the source as it was."""
    fn = copy.deepcopy(fn)
    parents = _parents(fn)
    k = 0
    for node in _body_nodes(fn):
        for edit in _edits(node, parents):
            if k == site:
                line = getattr(node, "lineno", fn.lineno)
                context = _context(node, parents)
                shown_before = _show(context)
                before, after = edit(node, parents)
                shown_after = _show(after if context is node else context)
                if shown_before == shown_after:
                    return None
                return fn, shown_before, shown_after, line
            k += 1
    raise IndexError(site)


def _context(node: ast.AST, parents: dict) -> ast.AST:
    """What to show for a change at `node`: a constant with its expression, else the node."""
    if isinstance(node, ast.Constant) and id(node) in parents:
        return parents[id(node)][0]
    return node


# ---------------------------------------------------------------------- running


def _module_of(target: str) -> str:
    candidates = TARGETS[target][0]
    for name in candidates:
        try:
            if importlib.util.find_spec(name) is not None:
                return name
        except ModuleNotFoundError:  # its package does not exist in this layout
            continue
    raise SystemExit(f"mutation_test: none of {', '.join(candidates)} exists (update TARGETS)")


def _where(target: str, entry: str) -> tuple[str, str]:
    """The module and qualified name of a `TARGETS` function entry."""
    module_name, _, qualname = entry.rpartition(":")
    return module_name or _module_of(target), qualname


def _tests(targets: list[str]) -> list[str]:
    """The test files of `targets` (each target's own, else `TESTS`) that exist."""
    found: list[str] = []
    for target in targets:
        for t in TESTS_OF.get(target, TESTS):
            if t not in found and (ROOT / t).exists():
                found.append(t)
    return found


def _module_path(module_name: str) -> Path:
    spec = importlib.util.find_spec(module_name)
    if spec is None or spec.origin is None:
        raise SystemExit(f"mutation_test: cannot find module {module_name}")
    return Path(spec.origin)


def _live_function(module_name: str, qualname: str):
    obj = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return getattr(obj, "__wrapped__", obj)  # the function under a cache such as lru_cache


def mutated_code(m: Mutant):
    module_name, qualname = _where(m.target, m.function)
    path = _module_path(module_name)
    fn = _function_node(ast.parse(path.read_text()), qualname)
    mutated = _mutated(fn, m.site)
    assert mutated is not None
    mutated[0].decorator_list = []  # the live function under any decorator gets the code
    tree = ast.Module(body=[mutated[0]], type_ignores=[])
    ast.fix_missing_locations(tree)
    code = compile(
        tree,
        str(path),
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
    namespace = dict(vars(importlib.import_module(module_name)))
    exec(code, namespace)
    return namespace[mutated[0].name].__code__


def _pytest_args(verbose: bool, targets: list[str]) -> list[str]:
    args = [*_tests(targets), "-x", "-p", "no:cacheprovider", "-o", "addopts=", "--no-header"]
    return args + (["-q"] if verbose else ["-qq", "--tb=no", "-p", "no:warnings"])


def _child(m: Mutant | None, verbose: bool, targets: list[str]) -> None:
    """In a forked child: apply the mutant, run the tests, exit with pytest's code."""
    code = 3
    try:
        if not verbose:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
        if m is not None:
            live = _live_function(*_where(m.target, m.function))
            live.__code__ = mutated_code(m)
        import pytest

        code = int(pytest.main(_pytest_args(verbose, [m.target] if m else targets)))
    except BaseException:  # noqa: BLE001 - the forked child must reach os._exit, whatever happened
        code = 3
    finally:
        os._exit(code)


def run(mutants: list[Mutant | None], jobs: int, timeout: float, verbose: bool, targets: list[str]):
    """Yield (mutant, outcome, seconds); outcome is pytest's exit code or "timeout"."""
    pending = list(mutants)
    running: dict[int, tuple[Mutant | None, float]] = {}
    while pending or running:
        while pending and len(running) < jobs:
            m = pending.pop(0)
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                _child(m, verbose, targets)
            running[pid] = (m, time.monotonic())
        time.sleep(0.02)
        for pid, (m, started) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            elapsed = time.monotonic() - started
            if done:
                del running[pid]
                yield m, os.waitstatus_to_exitcode(status), elapsed
            elif elapsed > timeout:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                del running[pid]
                yield m, "timeout", elapsed


def _preload() -> None:
    """Import once in the parent what every child needs, so forks start warm."""
    sys.path.insert(0, str(ROOT / "src"))
    sys.path.insert(0, str(ROOT))
    import gpuhunt

    if not Path(gpuhunt.__file__).resolve().is_relative_to(ROOT / "src"):
        raise SystemExit(f"mutation_test: gpuhunt imported from {gpuhunt.__file__}, not {ROOT}")
    import hypothesis
    import numpy  # noqa: F401
    import pytest  # noqa: F401

    hypothesis.settings.register_profile(
        "mutation", derandomize=True, database=None, deadline=None, print_blob=False
    )
    hypothesis.settings.load_profile("mutation")
    for target, (_, functions) in TARGETS.items():
        for entry in functions:
            importlib.import_module(_where(target, entry)[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", help=f"some of {', '.join(TARGETS)} (default: all)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--list", action="store_true", help="list the mutants, do not run")
    parser.add_argument("--show", metavar="KEY", help="print one mutant's change as a diff")
    parser.add_argument("--only", metavar="TEXT", help="run the mutants whose key contains TEXT")
    parser.add_argument("--fail-under", type=float, default=0.0, metavar="PERCENT")
    parser.add_argument("-v", "--verbose", action="store_true", help="show pytest's output")
    args = parser.parse_args()
    os.chdir(ROOT)
    _preload()
    targets = args.targets or list(TARGETS)
    if unknown := [t for t in targets if t not in TARGETS]:
        parser.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    mutants = [m for t in targets for m in mutants_of(t)]
    if args.only:
        mutants = [m for m in mutants if args.only in m.key]
    if args.list:
        for m in mutants:
            print(f"{m.target:8} {m.describe()}")
        print(f"{len(mutants)} mutants")
        return 0
    if args.show:
        m = next((m for m in mutants if m.key == args.show or args.show in m.key), None)
        if m is None:
            raise SystemExit(f"mutation_test: no mutant {args.show!r}")
        _print_diff(m)
        return 0

    print(f"baseline: {' '.join(_tests(targets))}")
    ((_, code, seconds),) = list(run([None], 1, 3600, args.verbose, targets))
    if code != 0:
        print(f"the tests fail without any mutation (pytest exit code {code}); fix that first")
        return 2
    timeout = max(60.0, 5 * seconds)
    print(f"baseline passed in {seconds:.1f}s; {len(mutants)} mutants, timeout {timeout:.0f}s")

    documented = DOC.read_text() if DOC.exists() else ""
    killed: dict[str, int] = dict.fromkeys(targets, 0)
    total: dict[str, int] = dict.fromkeys(targets, 0)
    survivors: list[Mutant] = []
    errors: list[tuple[Mutant, object]] = []
    for m, outcome, seconds in run(mutants, args.jobs, timeout, args.verbose, targets):
        assert m is not None
        total[m.target] += 1
        if outcome in (1, 2, "timeout"):  # tests failed, or errored while collecting, or hung
            killed[m.target] += 1
            status = "killed" if outcome != "timeout" else "killed (timeout)"
        elif outcome == 0:
            survivors.append(m)
            status = "SURVIVED" + ("" if m.key in documented else " (not in the doc)")
        else:
            errors.append((m, outcome))
            status = f"ERROR (exit {outcome})"
        print(f"{status:18} {seconds:5.1f}s  {m.target:8} {m.describe()}", flush=True)

    print()
    print("| target | mutants | killed | survived | score |")
    print("| --- | ---: | ---: | ---: | ---: |")
    failed = bool(errors)
    for t in targets:
        score = 100.0 * killed[t] / total[t] if total[t] else 100.0
        failed |= score < args.fail_under
        print(f"| {t} | {total[t]} | {killed[t]} | {total[t] - killed[t]} | {score:.1f}% |")
    if survivors:
        print("\nsurvivors:")
        for m in survivors:
            print(f"  {m.target:8} {m.describe()}")
    for m, outcome in errors:
        print(f"error running {m.describe()}: exit code {outcome}")
    return 1 if failed else 0


def _print_diff(m: Mutant) -> None:
    module_name, qualname = _where(m.target, m.function)
    path = _module_path(module_name)
    fn = _function_node(ast.parse(path.read_text()), qualname)
    mutated = _mutated(fn, m.site)
    assert mutated is not None
    before = ast.unparse(fn).splitlines(keepends=True)
    after = ast.unparse(mutated[0]).splitlines(keepends=True)
    sys.stdout.writelines(difflib.unified_diff(before, after, m.function, m.key, n=2))
    print(m.describe())


if __name__ == "__main__":
    sys.exit(main())
