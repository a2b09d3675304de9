"""What every provider shares: `last_report` (a `ParseReport`) and `resolve_gpu`.

A GPU name given without memory resolves to the same canonical name and memory in every
provider, and a name the tables do not know is counted the same way, in
`ParseReport.unknown_gpus` under the provider's spelling. Each provider's own GPU helper is
called here with the same names.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuhunt._internal.gpu_names import resolve_gpu
from gpuhunt._internal.models import AcceleratorVendor
from gpuhunt._internal.registry import PROVIDERS
from gpuhunt.providers import (
    _report,
    azure,
    cloudrift,
    crusoe,
    cudo,
    digitalocean,
    gcp,
    lambdalabs,
    nebius,
    seeweb,
    tensordock,
    verda,
)
from gpuhunt.providers._report import ParseReport
from gpuhunt.providers.base import AbstractProvider

PROVIDERS_DIR = Path(__file__).resolve().parents[2] / "src" / "gpuhunt" / "providers"


@pytest.mark.parametrize("spec", PROVIDERS, ids=lambda s: s.name)
def test_every_provider_has_a_last_report(spec: Any) -> None:
    cls = getattr(importlib.import_module(spec.module), spec.class_name)
    assert issubclass(cls, AbstractProvider)
    provider = cls.__new__(cls)  # no credentials needed to look at the contract
    report = provider.last_report
    assert isinstance(report, ParseReport)
    assert report.provider == spec.name
    assert report.skipped == [] and not report.unknown_gpus and not report.counts
    replaced = ParseReport(provider=spec.name)
    provider.last_report = replaced
    assert provider.last_report is replaced


def test_no_provider_keeps_diagnostics_under_another_name() -> None:
    for path in sorted(PROVIDERS_DIR.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        found = re.findall(r"self\.(stats|last_stats|last_counts)\b", text)
        assert not found, f"{path.name}: {sorted(set(found))}; use last_report"


@pytest.mark.parametrize("spec", [s for s in PROVIDERS if s.online], ids=lambda s: s.name)
def test_every_online_parser_guards_each_record_with_the_shared_guard(spec: Any) -> None:
    """One guard (`ParseReport.record`), not per-provider lists of exceptions that miss one
    (an OverflowError from a count of 1e999 lost Seeweb's whole answer, issue 27)."""
    text = (PROVIDERS_DIR / f"{spec.name}.py").read_text(encoding="utf-8")
    # Directly, or through `_records.read_each`, the shared loop that puts the guard around each.
    shared = (PROVIDERS_DIR / "_records.py").read_text(encoding="utf-8")
    assert "report.record(" in text or ("read_each(" in text and "report.record(" in shared)

    narrow = re.findall(r"except \((?:KeyError|TypeError|ValueError)[^)]*\) as e:\n\s+report", text)
    assert not narrow, f"{spec.name}: a per-provider try block around a record"


def test_the_record_guard_skips_any_exception_and_counts_it() -> None:
    report = ParseReport(provider="p")
    kept = []
    for record in ({"n": "1"}, {"n": 1e999}, {"n": {}}, None, {"n": "4"}):
        with report.record(lambda record=record: f"record {record!r:.20}"):
            kept.append(int(record["n"]))  # type: ignore[index]
    assert kept == [1, 4] and report.counts == {"malformed": 3} and report.skipped == []
    with report.record("refused"):
        raise _report.SkipRecord("too old")
    assert report.skipped == ["refused: too old"] and report.counts["malformed"] == 3
    with pytest.raises(KeyboardInterrupt), report.record("x"):
        raise KeyboardInterrupt


# Each provider's GPU helper, reduced to (name, memory) for a spelling given without memory,
# with the report it counts unknown names in.
def _lambdalabs(spelling: str, report: Any) -> tuple[str | None, float | None]:
    instance = {"name": "gpu_1x_x", "description": f"1x {spelling}", "specs": {"gpus": 1}}
    _, name, memory = lambdalabs._parse_gpu(instance, report)
    return name, memory


def _gcp(spelling: str, report: Any) -> tuple[str | None, float | None]:
    info = gcp.gpu_info(spelling, report)
    return (info.name, info.memory) if info else (None, None)


def _cudo(spelling: str, report: Any) -> tuple[str | None, float | None]:
    name, _, memory = cudo.gpu_identity(spelling, "nvidia-x")
    if name is not None and resolve_gpu(name) is None:
        report.unknown_gpu(spelling, "test")  # cudo counts where it builds the offer
    return name, memory


def _tensordock(spelling: str, report: Any) -> tuple[str | None, float | None]:
    name, vendor, memory = tensordock.gpu_identity(spelling)
    if vendor is None:
        report.unknown_gpu(spelling, "test")  # counted where it builds the offer
    return name, memory


def _seeweb(spelling: str, report: Any) -> tuple[str | None, float | None]:
    name, _, memory = seeweb.accelerator_identity(spelling)
    if resolve_gpu(spelling) is None:
        report.unknown_gpu(spelling, "test")  # counted where it builds the offer
    return name, memory


def _crusoe(spelling: str, report: Any) -> tuple[str | None, float | None]:
    name, memory = crusoe.gpu_identity(spelling)
    if resolve_gpu(spelling) is None:
        report.unknown_gpu(spelling, "test")  # counted where it builds the offer
    return name, memory


def _azure(spelling: str, report: Any) -> tuple[str | None, float | None]:
    spec = azure.gpu_for_size(f"Standard_ND8_{spelling.replace(' ', '')}_v9")
    if spec is None:
        report.unknown_gpu(spelling, "test")  # counted by parse_vm_size
        return None, None
    return spec.name, spec.memory


def _nebius(spelling: str, report: Any) -> tuple[str | None, float | None]:
    token = spelling.lower().replace(" ", "")
    platform = {"metadata": {"name": f"gpu-{token}-sxm"}, "spec": {}}
    gpu = nebius.platform_gpu(platform, report)
    return (gpu.name, gpu.memory) if gpu else (None, None)


def _verda(spelling: str, report: Any) -> tuple[str | None, float | None]:
    record = {"instance_type": "1X.x", "gpu": {"description": f"1x {spelling}"}}
    name, _, memory = verda._gpu(record, None, report)
    return name, memory


HELPERS: dict[str, Callable[[str, Any], tuple[str | None, float | None]]] = {
    "lambdalabs": _lambdalabs,
    "gcp": _gcp,
    "cudo": _cudo,
    "tensordock": _tensordock,
    "seeweb": _seeweb,
    "crusoe": _crusoe,
    "azure": _azure,
    "nebius": _nebius,
    "verda": _verda,
}


@pytest.mark.parametrize("provider", sorted(HELPERS))
@pytest.mark.parametrize(
    "spelling, expected",
    [("A100", ("A100", 40.0)), ("V100", ("V100", 16.0)), ("H100", ("H100", 80.0))],
)
def test_a_name_without_memory_resolves_the_same_everywhere(
    provider: str, spelling: str, expected: tuple[str, float]
) -> None:
    report = ParseReport(provider=provider)
    assert HELPERS[provider](spelling, report) == expected
    assert not report.unknown_gpus


@pytest.mark.parametrize("provider", sorted(HELPERS))
def test_an_unknown_name_is_counted_under_the_providers_spelling(provider: str) -> None:
    report = ParseReport(provider=provider)
    HELPERS[provider]("X9000", report)
    # as the provider spells it (Nebius's platform names are lower-case)
    assert {name.lower(): n for name, n in report.unknown_gpus.items()} == {"x9000": 1}


def test_reported_memory_snaps_to_the_known_size_everywhere() -> None:
    report = ParseReport()
    # DigitalOcean reports per-size VRAM; CloudRift per-GPU bytes; both near 80 for an H100
    assert digitalocean._gpu("s", "nvidia_h100", 79.6, report)[2] == 80.0
    assert cloudrift._gpu({"brand_short": "H100"}, "v", 79.6, 1, report)[2] == 80.0
    assert tensordock.gpu_identity("h100-sxm5-80gb", 79.6)[2] == 80.0
    assert report.unknown_gpus.total() == 0
    assert digitalocean._gpu("s", "amd_mi300x", 192.0, report)[1] == AcceleratorVendor.AMD
