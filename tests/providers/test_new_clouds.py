"""What the seven providers of issue 30 share: they are in `gpuhunt providers` (run as the CLI
runs, in a subprocess), and each resolves a GPU named without memory as every other provider
does (`resolve_gpu`), counting a name the tables do not know under its own spelling."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest

from gpuhunt.providers import fluidstack, hyperbolic, ovhcloud, primeintellect, scaleway, shadeform
from gpuhunt.providers._report import ParseReport

NEW = {
    "fluidstack": ("online", "FLUIDSTACK_API_KEY"),
    "shadeform": ("online", "SHADEFORM_API_KEY"),
    "hyperbolic": ("online", "HYPERBOLIC_API_KEY"),
    "primeintellect": ("online", "PRIME_API_KEY"),
    "paperspace": ("online", "PAPERSPACE_API_KEY"),
    "scaleway": ("offline", ""),
    "ovhcloud": ("offline", ""),
}


@pytest.mark.subprocess
def test_gpuhunt_providers_lists_them() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpuhunt", "providers"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    rows = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines() if line.strip()}
    for name, (kind, env) in NEW.items():
        assert rows[name][0] == kind, name
        assert rows[name][1:] == ([env] if env else []), name


# Each provider's parser over one record naming the GPU `spelling` and no memory; the offer's
# (gpu_name, gpu_memory), with unknown names counted in `report`.
def _fluidstack(spelling: str, report: ParseReport) -> Any:
    record = {"gpu_type": spelling, "gpu_counts": [1], "price_per_gpu_hr": 1, "regions": ["X"]}
    # a shape for the made-up type, for this call only
    with mock.patch.dict(fluidstack.SHAPES, {(spelling, 1): (8, 32.0)}):
        [offer] = fluidstack.parse_configurations([record], report)
    return offer


def _shadeform(spelling: str, report: ParseReport) -> Any:
    record = {
        "cloud": "c",
        "shade_instance_type": "t",
        "configuration": {
            "vcpus": 8,
            "memory_in_gb": 32,
            "num_gpus": 1,
            "gpu_type": spelling,
            "gpu_manufacturer": "nvidia",
        },
        "hourly_price": 100,
        "availability": [{"region": "r", "available": True}],
    }
    [offer] = shadeform.parse_instance_types({"instance_types": [record]}, report)
    return offer


def _hyperbolic(spelling: str, report: ParseReport) -> Any:
    node = {
        "id": "n",
        "status": "node_ready",
        "gpus_total": 1,
        "gpus_reserved": 0,
        "hardware": {
            "gpus": [{"model": spelling}],
            "cpus": [{"virtual_cores": 8}],
            "ram": [{"capacity": 32}],
            "storage": [{"capacity": 100}],
        },
        "location": {"region": "region-1"},
        "pricing": {"price": {"amount": 100}},
    }
    [offer] = hyperbolic.parse_marketplace({"instances": [node]}, report)
    return offer


def _primeintellect(spelling: str, report: ParseReport) -> Any:
    item = {
        "cloudId": "c",
        "provider": "p",
        "gpuType": spelling,
        "gpuCount": 1,
        "dataCenter": "d",
        "vcpu": {"defaultCount": 8},
        "memory": {"defaultCount": 32},
        "prices": {"onDemand": 1.0, "currency": "USD"},
    }
    [offer] = primeintellect.parse_items([item], report)
    return offer


def _scaleway(spelling: str, report: ParseReport) -> Any:
    product = {
        "sku": "s",
        "locality": {"zone": "fr-par-1"},
        "unit_of_measure": {"unit": "hour", "size": 1},
        "price": {"retail_price": {"currency_code": "EUR", "units": 1, "nanos": 0}},
        "properties": {
            "instance": {"offer_id": "GPU-1"},
            "hardware": {
                "cpu": {"virtual": {"count": 8}},
                "ram": {"size": 32 * 1024**3},
                "gpu": {"count": 1, "type": spelling, "description": ""},
            },
        },
    }
    [offer] = scaleway.parse_products([product], report)
    return offer


def _ovhcloud(spelling: str, report: ParseReport) -> Any:
    addon = {
        "planCode": "g-1.consumption",
        "product": "publiccloud-instance",
        "pricings": [{"intervalUnit": "hour", "price": 100_000_000}],
        "blobs": {
            "technical": {
                "cpu": {"cores": 8},
                "memory": {"size": 32},
                "gpu": {"model": spelling, "number": 1},
            }
        },
    }
    [offer] = ovhcloud.parse_catalog({"locale": {"currencyCode": "EUR"}, "addons": [addon]}, report)
    return offer


PARSERS: dict[str, Callable[[str, ParseReport], Any]] = {
    "fluidstack": _fluidstack,
    "shadeform": _shadeform,
    "hyperbolic": _hyperbolic,
    "primeintellect": _primeintellect,
    "scaleway": _scaleway,
    "ovhcloud": _ovhcloud,
}


@pytest.mark.parametrize("provider", sorted(PARSERS))
@pytest.mark.parametrize(
    "spelling, expected",
    [("A100", ("A100", 40.0)), ("V100", ("V100", 16.0)), ("H100", ("H100", 80.0))],
)
def test_a_name_without_memory_resolves_as_everywhere(
    provider: str, spelling: str, expected: tuple[str, float]
) -> None:
    report = ParseReport(provider=provider)
    offer = PARSERS[provider](spelling, report)
    assert (offer.gpu_name, offer.gpu_memory) == expected
    assert not report.unknown_gpus


@pytest.mark.parametrize("provider", sorted(PARSERS))
def test_an_unknown_name_is_kept_and_counted_under_the_providers_spelling(provider: str) -> None:
    report = ParseReport(provider=provider)
    offer = PARSERS[provider]("X9000", report)
    assert offer.gpu_name == "X9000"
    assert dict(report.unknown_gpus) == {"X9000": 1}
