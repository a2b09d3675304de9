"""Every provider module, and every integrity test, works without the cloud SDKs.

The nightly publish job installs `.[aws] pytest` and runs every provider's integrity tests;
before this was tested, `integrity_tests/test_gcp.py` failed on `import google...` in
`gpuhunt.providers.gcp`, so GCP and OCI were silently carried over every night. Here a
subprocess makes the SDK packages unimportable (a meta-path finder that raises ImportError for
them, installed before anything else is imported) and checks that:

- every `gpuhunt.providers.<name>` of the registry imports;
- `pytest --collect-only integrity_tests` collects every test file without an error, and the
  integrity tests run against the bundled snapshot's CSVs without an import error (their data
  assertions may fail on the trimmed snapshot: that is not what is tested here);
- using a provider that needs a missing SDK raises the one-line error with the install hint.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

import gpuhunt
from gpuhunt._internal.registry import ALL_PROVIDERS, spec

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(gpuhunt.__file__).resolve().parents[1]
INTEGRITY_DIR = ROOT / "integrity_tests"

# Top-level packages of the extras (and what they pull in) that the subprocess cannot import.
BLOCKED = (
    "boto3",
    "botocore",
    "s3transfer",
    "google",
    "grpc",
    "azure",
    "msal",
    "msrest",
    "oci",
    "pydantic",
    "pydantic_core",
    "nebius",
)

PRELUDE = f"""
import importlib.abc, sys
BLOCKED = {BLOCKED!r}
for _name in list(sys.modules):  # namespace packages a .pth file may have set up
    if _name.split(".")[0] in BLOCKED:
        del sys.modules[_name]
class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{fullname!r}} (blocked)", name=fullname)
        return None
sys.meta_path.insert(0, _Blocker())
try:
    import boto3  # noqa
except ImportError:
    pass
else:
    raise SystemExit("the blocker does not block")
"""


def run_blocked(code: str, tmp_path: Path, env: dict[str, str] | None = None) -> str:
    script = tmp_path / "blocked.py"
    script.write_text(PRELUDE + code, encoding="utf-8")
    full_env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), str(ROOT)]),
        # plugins installed next to pytest are not the project's: they may import anything
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        **(env or {}),
    }
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


@pytest.mark.subprocess
def test_every_provider_module_imports_without_sdks(tmp_path: Path) -> None:
    out = run_blocked(
        "import importlib, json\n"
        f"names = {ALL_PROVIDERS!r}\n"
        "for name in names:\n"
        "    importlib.import_module('gpuhunt.providers.' + name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in BLOCKED)))\n",
        tmp_path,
    )
    assert json.loads(out.strip().splitlines()[-1]) == []


@pytest.mark.slow
@pytest.mark.subprocess
def test_integrity_tests_collect_and_run_without_sdks(tmp_path: Path) -> None:
    test_files = sorted(p.name for p in INTEGRITY_DIR.glob("test_*.py"))
    assert test_files, "no integrity tests found"
    collected = run_blocked(
        "import pytest\n"
        "code = pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', "
        "'integrity_tests'])\n"
        "sys.exit(int(code))\n",
        tmp_path,
    )
    for name in test_files:
        assert f"integrity_tests/{name}::" in collected, f"{name} collected nothing"

    # Run them on the bundled snapshot's CSVs: failures of data checks are fine here, an
    # import error anywhere is not.
    catalog_dir = tmp_path / "catalogs"
    with zipfile.ZipFile(SRC / "gpuhunt" / "resources" / "catalog.zip") as z:
        csvs = [n for n in z.namelist() if n.endswith(".csv")]
        z.extractall(catalog_dir, members=csvs)
    runnable = [f"integrity_tests/test_{Path(n).stem}.py" for n in csvs]
    runnable = [f for f in runnable if (ROOT / f).exists()]
    assert runnable
    report = tmp_path / "report.xml"
    run_blocked(
        "import pytest\n"
        f"code = pytest.main(['-q', '-p', 'no:cacheprovider', '--junitxml', {str(report)!r}, "
        f"*{runnable!r}])\n"
        "sys.exit(0 if int(code) in (0, 1) else int(code))\n",
        tmp_path,
        env={"CATALOG_DIR": str(catalog_dir)},
    )
    suite = ET.parse(report).getroot()
    cases = suite.findall(".//testcase")
    assert len(cases) > len(runnable)
    for case in cases:
        for problem in [*case.findall("error"), *case.findall("failure")]:
            text = (problem.get("message") or "") + (problem.text or "")
            assert "ImportError" not in text and "ModuleNotFoundError" not in text, text[:2000]
            assert "not installed" not in text, text[:2000]


# Per provider with an SDK: code that needs it, run in the blocked subprocess.
SDK_USES = [
    ("aws", "from gpuhunt.providers import aws\naws.ec2_regions()"),
    ("aws", "from gpuhunt.providers import aws\naws.ec2_client_config()"),
    ("azure", "from gpuhunt.providers import azure\nazure.AzureProvider('sub').client()"),
    ("gcp", "from gpuhunt.providers import gcp\ngcp.default_credentials()"),
    (
        "oci",
        "from gpuhunt.providers import oci\n"
        "oci.parse_offers({'items': []}, {'items': []}, [], oci.ParseReport())",
    ),
    (
        "oci",
        "from gpuhunt.providers import oci\n"
        "oci.OCIProvider(oci.OCICredentials(user='u', tenancy='t', fingerprint='f', "
        "region='r', key_content='k'))",
    ),
    (
        "nebius",
        "from gpuhunt.providers import nebius\n"
        "nebius.SDKClient(nebius.NebiusCredentials(access_token='t'))",
    ),
]


@pytest.mark.subprocess
@pytest.mark.parametrize(("provider", "code"), SDK_USES)
def test_missing_sdk_is_one_line_with_the_install_hint(
    provider: str, code: str, tmp_path: Path
) -> None:
    out = run_blocked(
        "from gpuhunt._internal.errors import ProviderError\n"
        "try:\n"
        + "".join(f"    {line}\n" for line in code.splitlines())
        + "except ProviderError as e:\n"
        "    print(str(e))\n"
        "else:\n"
        "    raise SystemExit('no error')\n",
        tmp_path,
    )
    message = out.strip().splitlines()[-1]
    extra = spec(provider).extra
    assert message.startswith(f"Provider {provider} needs a package that is not installed (")
    assert message.endswith(f": pip install 'gpuhunt[{extra}]'")


@pytest.mark.slow
@pytest.mark.subprocess
def test_catalog_build_integrity_runs_every_provider_without_sdks(tmp_path: Path) -> None:
    """The publish job as it runs: `catalog build --integrity` over CSVs of every offline
    provider, with only `.[aws] pytest` importable. The blocker is a `sitecustomize` on
    PYTHONPATH, so it also holds in the pytest subprocess each provider's gate starts. Data
    checks may fail on these small recordings; every provider's tests must run, none may fail
    to import."""
    from scripts.replay import (
        replay_azure,
        replay_cloudrift,
        replay_ovhcloud,
        replay_runpod,
        replay_scaleway,
        replay_verda,
    )

    from gpuhunt._internal.formats.csv import csv_bytes
    from gpuhunt._internal.registry import OFFLINE_PROVIDERS

    catalogs = tmp_path / "catalogs"
    with zipfile.ZipFile(SRC / "gpuhunt" / "resources" / "catalog.zip") as z:
        # Offline providers only: the snapshot's online providers are not built or published.
        offline = [n for n in z.namelist() if n.removesuffix(".csv") in OFFLINE_PROVIDERS]
        z.extractall(catalogs, members=offline)
    # The providers the bundled snapshot leaves out get their recordings' offers.
    replays = {
        r.__name__.rsplit("_", 1)[1]: r
        for r in (
            replay_azure,
            replay_cloudrift,
            replay_runpod,
            replay_verda,
            replay_scaleway,
            replay_ovhcloud,
        )
    }
    for name in sorted(set(OFFLINE_PROVIDERS) - {p.stem for p in catalogs.glob("*.csv")}):
        (catalogs / f"{name}.csv").write_bytes(csv_bytes(replays[name].collect()))
    assert sorted(p.stem for p in catalogs.glob("*.csv")) == sorted(OFFLINE_PROVIDERS)

    # The blocker minus aws's packages: the job installs `.[aws]`.
    site = tmp_path / "site"
    site.mkdir()
    aws_packages = ("boto3", "botocore", "s3transfer")
    prelude = PRELUDE.replace(f"BLOCKED = {BLOCKED!r}", f"BLOCKED = {BLOCKED!r}[3:]")
    assert BLOCKED[:3] == aws_packages
    prelude = prelude.replace("    import boto3  # noqa", "    import google  # noqa")
    (site / "sitecustomize.py").write_text(prelude, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuhunt",
            "catalog",
            "build",
            "--input",
            str(catalogs),
            "--version",
            "20261201",
            "--output",
            str(tmp_path / "build"),
            "--integrity",
            "--integrity-dir",
            str(INTEGRITY_DIR),
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(site), str(SRC), str(ROOT)]),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-3000:]
    for word in ("ImportError", "ModuleNotFoundError", "not installed", "error collecting"):
        assert word not in log, log[-3000:]
    verdicts = {line.split()[0]: line for line in done.stdout.splitlines() if line[:1].isalpha()}
    for provider in OFFLINE_PROVIDERS:
        line = verdicts[provider]
        # fresh (every test passed) or failed data checks with tests that ran: never an error
        # (pytest's summary may name warnings too: "3 failed, 20 passed, 1 warning in 0.21s")
        ran = re.search(r"\d+ passed(, \d+ warnings?)? in ", line)
        assert " fresh " in line or ("failed (" in line and ran), line
        assert " error" not in line, line
