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
    "dataset": frozenset({"duckdb", "pyarrow", "s3fs", "fsspec"}),
}
# gpuhunt's own dependencies (`pip install .` brings them).
BASE_IMPORTS = frozenset(
    {"requests", "urllib3", "numpy", "platformdirs", "cachetools", "typing_extensions"}
)
# Other packages a job may install by name, and the names they are imported by.
PACKAGE_IMPORTS = {
    "pytest": frozenset({"pytest", "_pytest"}),
    "pyyaml": frozenset({"yaml"}),
    # the observations dataset (docs/availability.md): the build writes it, the page reads it
    "pyarrow": frozenset({"pyarrow"}),
    "duckdb": frozenset({"duckdb"}),
}
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
                elif command in (
                    "verify",
                    "status",
                    "report",
                    "site",
                ):  # report posts with requests
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


@pytest.mark.slow
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


# ---------------------------------------------------------------------------------------------
# The publish job's steps, run as the workflow runs them


def _steps(job: str) -> dict[str, dict[str, Any]]:
    return {s["name"]: s for s in _job(load_workflow(), job)["steps"] if "name" in s}


def _run_step(step: dict[str, Any], cwd: Path, env: dict[str, str]) -> Any:
    import subprocess

    script = step["run"]
    # Expressions are GitHub's to expand; these steps must work from the environment alone.
    assert "${{" not in script, step["name"]
    return subprocess.run(
        # GitHub runs `run:` with `bash --noprofile --norc -eo pipefail {0}`.
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


class _Hook:
    """A JSON-accepting webhook on 127.0.0.1 that records what it gets."""

    def __init__(self, status: int = 200) -> None:
        import http.server
        import json
        import threading

        got: list[Any] = []
        self.got = got

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = self.rfile.read(int(self.headers["Content-Length"]))
                got.append((self.headers["Content-Type"], json.loads(body)))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook/SECRET-TOKEN"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _integrity_tests(folder: Path) -> None:
    """The project's shared invariants and a test file per provider of this test."""
    import shutil

    folder.mkdir()
    for name in ["__init__.py", "base.py", "conftest.py"]:
        shutil.copy(ROOT / "integrity_tests" / name, folder / name)
    for provider in ("aws", "lambdalabs"):
        (folder / f"test_{provider}.py").write_text(
            "from integrity_tests.base import BaseIntegrity\n\n\n"
            f"class TestIt(BaseIntegrity):\n    provider = {provider!r}\n"
        )


@pytest.mark.moto
@pytest.mark.slow
@pytest.mark.subprocess
def test_the_publish_steps_summarize_publish_and_fail_on_stale(tmp_path, monkeypatch) -> None:
    """Build, Publish, Verify and Staleness of catalogs.yml, run by bash in subprocesses
    against a moto S3 on 127.0.0.1: Lambda's collection has failed for four days (its limit
    is 18 hours), AWS is fresh. The new version is published, the summary says Lambda is
    stale, the Staleness step exits 3 and posts the summary to the webhook; a webhook that
    fails changes nothing, and without a stale provider the step passes."""
    import datetime as dt
    import json
    import os
    import shutil

    import boto3
    from botocore.config import Config
    from moto.server import ThreadedMotoServer

    from gpuhunt._internal.formats.archive import read_archive
    from gpuhunt._internal.formats.csv import csv_bytes
    from gpuhunt._internal.publish import build as pipeline
    from gpuhunt._internal.publish import files, s3
    from tests.helpers import item

    steps = _steps("publish")
    names = list(steps)
    assert names.index("Build") < names.index("Publish") < names.index("Verify")
    assert names.index("Verify") < names.index("Staleness")
    assert "steps.build.outcome == 'success'" in steps["Staleness"]["if"]
    assert steps["Build"]["id"] == "build"

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    hook = _Hook()
    failing = _Hook(status=500)
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        aws_env = {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
        for k, v in aws_env.items():
            monkeypatch.setenv(k, v)
        client = boto3.client(
            "s3", endpoint_url=endpoint, config=Config(s3={"addressing_style": "path"})
        )
        client.create_bucket(Bucket="catalogs")

        lam = [item("lambdalabs", instance_name="gpu_1x_a10", gpu_name="A10", price=0.75)]
        aws = [item("aws", instance_name="g5.xlarge", gpu_name="A10G", price=1.006)]
        now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
        old = (now - dt.timedelta(days=4)).isoformat()
        first = pipeline.build_catalog(
            "20261120-1",
            {
                "aws": pipeline.Collected(csv_bytes(aws), old),
                "lambdalabs": pipeline.Collected(csv_bytes(lam), old),
            },
            None,
            providers=["aws", "lambdalabs"],
        )
        files.write_build(first, tmp_path / "first")
        s3.publish(tmp_path / "first", "catalogs", "v3", client=client)

        work = tmp_path / "work"
        (work / "catalogs").mkdir(parents=True)
        (work / ".github").mkdir()
        shutil.copy(ROOT / ".github" / "catalog-accept.json", work / ".github")
        _integrity_tests(work / "integrity_tests")
        # As the collect job leaves it after the artifact download: the CSV and its start time.
        (work / "catalogs" / "aws.csv").write_bytes(csv_bytes(aws))
        started = (now - dt.timedelta(minutes=20)).isoformat()
        (work / "catalogs" / "aws.csv.meta.json").write_text(
            json.dumps({"provider": "aws", "started_at": started})
        )

        env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUHUNT_", "GITHUB_"))}
        env.update(aws_env)
        env.update(
            PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            CATALOG_BUCKET="catalogs",
            CATALOG_REGION="us-east-1",
            CATALOG_URL=f"{endpoint}/catalogs",
            CATALOG_ACL="public-read",
            PREFIX="v3",
            GITHUB_RUN_NUMBER="7",
            GITHUB_ENV=str(tmp_path / "github_env"),
            GITHUB_STEP_SUMMARY=str(tmp_path / "step_summary.md"),
            GPUHUNT_S3_ENDPOINT_URL=endpoint,
            GPUHUNT_CACHE_DIR=str(tmp_path / "cache"),
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        version = f"{dt.datetime.now(dt.timezone.utc):%Y%m%d}-7"

        done = _run_step(steps["Build"], work, env)
        assert done.returncode == 0, done.stderr[-3000:]
        assert f"VERSION={version}" in (tmp_path / "github_env").read_text()
        summary = (tmp_path / "step_summary.md").read_text()
        assert summary == (work / "catalog-summary.md").read_text() + "\n"
        assert f"## Catalog {version}" in summary and "**Stale: lambdalabs**" in summary
        assert "| lambdalabs | STALE | 1 |" in summary and "since 20261120-1: no CSV" in summary
        assert f"| aws | fresh | 1 | {started} |" in summary

        for name in ("Publish", "Verify"):
            done = _run_step(steps[name], work, env)
            assert done.returncode == 0, (name, done.stderr[-3000:])
        assert client.get_object(Bucket="catalogs", Key="v3/version")["Body"].read() == (
            version.encode()
        )
        manifest = read_archive(
            client.get_object(Bucket="catalogs", Key=f"v3/{version}/catalog.zip")["Body"].read()
        ).manifest
        assert manifest is not None and manifest["providers"]["aws"]["collected_at"] == started

        # Published, and then the run fails: Lambda is four days old.
        done = _run_step(steps["Staleness"], work, {**env, "GPUHUNT_ALERT_WEBHOOK": hook.url})
        assert done.returncode == 3, done.stderr[-3000:]
        assert "stale beyond the limit: lambdalabs" in done.stdout
        ((content_type, posted),) = hook.got
        assert content_type == "application/json"
        assert posted["report"]["stale"] == ["lambdalabs"]
        # The same summary, its ages as of the report.
        assert posted["text"].startswith(f"## Catalog {version}\n\n**Stale: lambdalabs**")
        assert "| lambdalabs | STALE | 1 |" in posted["text"]

        done = _run_step(steps["Staleness"], work, {**env, "GPUHUNT_ALERT_WEBHOOK": failing.url})
        assert done.returncode == 3 and len(failing.got) == 1
        assert "the alert webhook failed (HTTP 500)" in done.stdout
        assert "SECRET-TOKEN" not in done.stdout + done.stderr

        # Lambda collected again: nothing stale, nothing to alert, the step passes, even with
        # a webhook that fails.
        shutil.rmtree(work / "build")
        (work / "catalogs" / "lambdalabs.csv").write_bytes(csv_bytes(lam))
        env["GITHUB_RUN_NUMBER"] = "8"
        for name in ("Build", "Publish", "Verify"):
            done = _run_step(steps[name], work, env)
            assert done.returncode == 0, (name, done.stderr[-3000:])
        done = _run_step(steps["Staleness"], work, {**env, "GPUHUNT_ALERT_WEBHOOK": failing.url})
        assert done.returncode == 0, done.stdout + done.stderr[-3000:]
        assert len(failing.got) == 1 and "Stale" not in done.stdout
    finally:
        hook.close()
        failing.close()
        server.stop()


def test_the_collect_job_uploads_the_start_time_and_takes_reference_secrets() -> None:
    workflow = load_workflow()
    collect = _job(workflow, "collect")
    upload = next(s for s in collect["steps"] if s.get("name") == "Upload the CSV")
    assert upload["with"]["path"].splitlines() == [
        "catalogs/${{ matrix.provider }}.csv",
        "catalogs/${{ matrix.provider }}.csv.meta.json",
    ]
    text = WORKFLOW.read_text(encoding="utf-8")
    # The reference deployment's secret names work unchanged (docs/pipeline.md lists them).
    for name in (
        "secrets.AWS_ACCESS_KEY_ID",
        "secrets.AWS_SECRET_ACCESS_KEY",
        "secrets.AZURE_CLIENT_ID",
        "secrets.AZURE_CLIENT_SECRET",
        "secrets.AZURE_TENANT_ID",
        "secrets.AZURE_SUBSCRIPTION_ID",
        "vars.GCP_WORKLOAD_IDENTITY_PROVIDER",
        "secrets.SLACK_WEBHOOK_URL",
        "secrets[matrix.alias_",
    ):
        assert name in text, name
    docs = (ROOT / "docs" / "pipeline.md").read_text(encoding="utf-8")
    for secret in set(re.findall(r"secrets\.([A-Z0-9_]+)", text)):
        assert f"`{secret}`" in docs, f"docs/pipeline.md does not list the secret {secret}"
    for spec in registry.PROVIDERS:
        if not spec.online:
            for name in spec.env:
                assert f"`{name}`" in docs, name
