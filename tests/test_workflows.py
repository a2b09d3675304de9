"""The nightly workflow installs what its steps run.

`.github/workflows/catalogs.yml` is read as YAML; for each job, what its `run` steps execute
(collecting a provider, running integrity tests, `catalog build --integrity`, `catalog
publish`) gives the packages it needs, and its `pip install` lines must provide them. What the
integrity tests need is worked out from their imports: their own, and the module-level imports
of every gpuhunt module they reach, so that a provider module importing its SDK at module level
again (which made the nightly job carry GCP and OCI over, stale, every night) fails here.
"""

from __future__ import annotations

import ast
import re
import shlex
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuhunt._internal import registry

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "catalogs.yml"
SRC = ROOT / "src"

# What each pip extra lets Python import (top-level names); keep in step with pyproject.toml.
EXTRA_IMPORTS: dict[str, frozenset[str]] = {
    "aws": frozenset({"boto3", "botocore", "s3transfer"}),
    "azure": frozenset({"azure"}),
    "gcp": frozenset({"google"}),
    "oci": frozenset({"oci", "pydantic"}),
    "nebius": frozenset({"nebius"}),
}
# gpuhunt's own dependencies (`pip install .` brings them).
BASE_IMPORTS = frozenset(
    {"requests", "urllib3", "numpy", "platformdirs", "cachetools", "typing_extensions"}
)
# Other packages a job may install by name, and the names they are imported by.
PACKAGE_IMPORTS = {"pytest": frozenset({"pytest", "_pytest"}), "pyyaml": frozenset({"yaml"})}
LOCAL = frozenset({"gpuhunt", "integrity_tests", "tests"})

MATRIX = "${{ matrix.extra }}"


# ---------------------------------------------------------------------------------------------
# What Python code needs


def _module_file(module: str) -> Path | None:
    parts = module.split(".")
    base = (ROOT if parts[0] == "integrity_tests" else SRC).joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def _module_level_imports(path: Path, package: str) -> set[str]:
    """Modules imported when `path` is imported: top level and under `if`/`try`, but not in
    functions or under `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: from . import x
                    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    module = f"{base}.{node.module}" if node.module else base
                else:
                    module = node.module or ""
                found.add(module)
                found.update(f"{module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(node.test):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)  # an ImportError handler still needs the import to be tried
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(tree.body)
    return found


@cache
def third_party_imports(module: str) -> frozenset[str]:
    """Top-level names of the non-stdlib, non-local packages importing `module` imports."""
    seen: set[str] = set()
    needed: set[str] = set()
    pending = [module]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        path = _module_file(current)
        if path is None:
            continue  # `from pkg import name` where name is not a module
        package = current if path.name == "__init__.py" else current.rpartition(".")[0]
        # importing a.b.c imports a and a.b first
        parents = [".".join(current.split(".")[:i]) for i in range(1, current.count(".") + 1)]
        pending.extend(parents)
        for imported in _module_level_imports(path, package):
            top = imported.split(".")[0]
            if top in LOCAL:
                pending.append(imported)
            elif top and top not in sys.stdlib_module_names and top != "__future__":
                needed.add(top)
    return frozenset(needed)


def integrity_test_imports() -> frozenset[str]:
    needed: set[str] = set()
    for path in sorted((ROOT / "integrity_tests").glob("*.py")):
        needed |= third_party_imports(f"integrity_tests.{path.stem}")
    return frozenset(needed | {"pytest"})


# ---------------------------------------------------------------------------------------------
# What a job installs and runs


def _install_lines(script: str) -> list[list[str]]:
    """The arguments of every `pip install` in a shell script; a `$var` set in the script
    (the collect job's `spec=".[$EXTRA]"`, or `"."` when there is no extra) stands for every
    value it is given."""
    assigned: dict[str, list[str]] = {}
    for name, value in re.findall(r'\b(\w+)="([^"]*)"', script):
        assigned.setdefault(name, []).append(value)
    out = []
    for line in script.splitlines():
        m = re.search(r"\bpip install\b(.*)", line)
        if not m:
            continue
        args: list[str] = []
        for arg in shlex.split(m.group(1)):
            if arg.startswith("-"):
                continue
            v = re.fullmatch(r"\$(\w+)", arg)
            args += assigned.get(v.group(1), [arg]) if v else [arg]
        out.append(args)
    return out


def installed_imports(job: dict[str, Any]) -> tuple[frozenset[str], list[str]]:
    """(names the job can import, problems); `$EXTRA` counts as the matrix provider's extra
    when the job's env maps it to `matrix.extra`."""
    env = job.get("env", {})
    names: set[str] = set()
    problems: list[str] = []
    for step in job.get("steps", []):
        for args in _install_lines(step.get("run", "")):
            for arg in args:
                m = re.fullmatch(r"\.(?:\[(.*)\])?", arg)
                if m:
                    names |= BASE_IMPORTS
                    for extra in filter(None, (m.group(1) or "").split(",")):
                        if extra == "$EXTRA" and env.get("EXTRA") == MATRIX:
                            names.add("<matrix extra>")
                        elif extra in EXTRA_IMPORTS:
                            names |= EXTRA_IMPORTS[extra]
                        elif extra == "all":
                            names |= set().union(*EXTRA_IMPORTS.values())
                        else:
                            problems.append(f"installs unknown extra {extra!r}")
                elif arg.lower() in PACKAGE_IMPORTS:
                    names |= PACKAGE_IMPORTS[arg.lower()]
                else:
                    problems.append(f"installs {arg!r}, which this test does not know")
    return frozenset(names), problems


def needed_imports(job: dict[str, Any]) -> tuple[dict[str, frozenset[str]], list[str]]:
    """What each command of the job's `run` steps needs to import: command -> names."""
    env = job.get("env", {})
    needs: dict[str, frozenset[str]] = {}
    problems: list[str] = []
    for step in job.get("steps", []):
        script = step.get("run", "")
        for line in script.splitlines():
            line = line.strip()
            if re.search(r"\bpython -m pytest\b", line):
                needs[line] = integrity_test_imports()
            elif m := re.search(r"\bpython -m gpuhunt catalog ([\w-]+)", line):
                command = m.group(1)
                if command == "build":
                    # --integrity runs every provider's integrity tests with `python -m pytest`
                    needs[line] = (
                        integrity_test_imports() if "--integrity" in script else BASE_IMPORTS
                    )
                elif command in ("publish", "publish-site"):
                    needs[line] = EXTRA_IMPORTS["aws"]  # uploads with boto3
                elif command in ("verify", "status", "site"):
                    needs[line] = BASE_IMPORTS
                else:
                    problems.append(f"runs `catalog {command}`: say here what it needs")
            elif m := re.search(r'\bpython -m gpuhunt "?(\$PROVIDER|\w+)"?', line):
                provider = m.group(1)
                if provider == "$PROVIDER":
                    if env.get("PROVIDER") != "${{ matrix.provider }}":
                        problems.append("collects $PROVIDER, which is not matrix.provider")
                    needs[line] = frozenset({"<matrix extra>"})
                else:
                    extra = registry.spec(provider).extra
                    needs[line] = EXTRA_IMPORTS[extra] if extra else BASE_IMPORTS
            elif m := re.search(r"\bpython (scripts/\S+\.py)", line):
                module = Path(m.group(1))
                imports = _module_level_imports(ROOT / module, "scripts")
                needed = set()
                for imported in imports:
                    top = imported.split(".")[0]
                    if top in LOCAL:
                        needed |= third_party_imports(imported)
                    elif top not in sys.stdlib_module_names and top != "__future__":
                        needed.add(top)
                needs[line] = frozenset(needed)
    return needs, problems


def workflow_problems(workflow: dict[str, Any]) -> list[str]:
    problems = []
    for name, job in workflow["jobs"].items():
        have, install_problems = installed_imports(job)
        needs, run_problems = needed_imports(job)
        problems += [f"{name}: {p}" for p in install_problems + run_problems]
        for command, names in needs.items():
            missing = sorted(names - have)
            if missing:
                problems.append(f"{name}: `{command}` needs {missing}, not installed")
    return problems


def load_workflow() -> dict[str, Any]:
    with open(WORKFLOW, encoding="utf-8") as f:
        loaded: dict[str, Any] = yaml.safe_load(f)
    return loaded


# ---------------------------------------------------------------------------------------------


def test_every_job_installs_what_it_runs() -> None:
    assert workflow_problems(load_workflow()) == []


def test_the_matrix_gives_each_provider_its_registry_extra() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import ci_matrix
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    jobs = ci_matrix.matrix()["include"]
    assert {j["provider"] for j in jobs} == set(registry.OFFLINE_PROVIDERS)
    for job in jobs:
        assert job["extra"] == (registry.spec(job["provider"]).extra or "")
        # and that extra is enough to import the provider's module
        module_needs = third_party_imports(registry.spec(job["provider"]).module)
        allowed = BASE_IMPORTS | EXTRA_IMPORTS.get(job["extra"], frozenset())
        assert module_needs <= allowed, (job["provider"], sorted(module_needs - allowed))


def test_every_extra_is_in_pyproject() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for extra in EXTRA_IMPORTS:
        assert re.search(rf"^{extra} = \[", text, re.M), extra
    for spec in registry.PROVIDERS:
        assert spec.extra is None or spec.extra in EXTRA_IMPORTS, spec.name


def test_integrity_tests_need_no_cloud_sdk() -> None:
    sdks = set().union(*EXTRA_IMPORTS.values())
    assert not integrity_test_imports() & sdks


def _job(workflow: dict[str, Any], name: str) -> dict[str, Any]:
    job: dict[str, Any] = workflow["jobs"][name]
    return job


@pytest.mark.parametrize(
    ("job", "old", "new", "expected"),
    [
        # the publish job without pytest cannot run `catalog build --integrity`
        ("publish", '".[aws]" pytest', '".[aws]"', "`python -m gpuhunt catalog build"),
        # ... nor publish without boto3
        ("publish", '".[aws]" pytest', ". pytest", "`python -m gpuhunt catalog publish"),
        # a collect job that installs no extra cannot collect providers with an SDK
        ("collect", 'spec=".[$EXTRA]"', 'spec="."', 'python -m gpuhunt "$PROVIDER"'),
        ("collect", "pytest\n", "\n", "`python -m pytest"),
    ],
)
def test_a_missing_install_is_seen(job: str, old: str, new: str, expected: str) -> None:
    workflow = load_workflow()
    steps = _job(workflow, job)["steps"]
    changed = False
    for step in steps:
        if "run" in step and old in step["run"]:
            step["run"] = step["run"].replace(old, new)
            changed = True
    assert changed, f"{old!r} is not in the {job} job any more; update this test"
    problems = workflow_problems(workflow)
    assert any(expected in p for p in problems), problems


def test_an_sdk_imported_at_module_level_is_seen(tmp_path: Path, monkeypatch: Any) -> None:
    """What broke the nightly job: a provider module importing its SDK at the top."""
    path = tmp_path / "mod.py"
    path.write_text("import os\nimport google.auth\nif TYPE_CHECKING:\n    import oci\n")
    assert _module_level_imports(path, "x") == {"os", "google.auth"}
