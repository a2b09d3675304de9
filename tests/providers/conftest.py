"""Provider tests that need a cloud SDK at import time are left out, and named in the report
header, when that SDK's extra is not installed (`pip install -e '.[all,dev]'` has them all)."""

from __future__ import annotations

import importlib.util

# test file -> (the module it imports, the extra that installs it)
NEEDS_SDK = {
    "test_azure.py": ("azure.mgmt.compute", "azure"),
    "test_gcp.py": ("google.cloud.compute_v1", "gcp"),
    "test_oci.py": ("oci", "oci"),
}


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # a parent package is missing
        return True


collect_ignore = [name for name, (module, _) in NEEDS_SDK.items() if _missing(module)]


def pytest_report_header() -> list[str]:
    return [
        f"{name} not collected: {NEEDS_SDK[name][0]} missing (pip install 'gpuhunt[{NEEDS_SDK[name][1]}]')"
        for name in collect_ignore
    ]
