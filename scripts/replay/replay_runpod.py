"""Replay RunPod's GraphQL API from `tests/providers/data/runpod/` and run the real provider.

RunPod answers each aliased `lowestPrice` quote of a batch separately, so this fake endpoint
reads every request, checks that each alias it declares is also selected in the document, and
answers each alias from the per-query records (see the data directory's README).
"""

from __future__ import annotations

import json
import re
from typing import Any

import responses

from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers.runpod import API_URL, RunpodProvider
from scripts.replay import RECORDINGS

RECORDED_AT = "2026-11-29"
DATA = RECORDINGS / "runpod"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def _out_of_stock(discovery: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {**gpu, "lowestPrice": {"stockStatus": None, "minVcpu": None, "minMemory": None}}
        for gpu in discovery["data"]["gpuTypes"]
    ]


class FakeRunpod:
    """A stateless GraphQL endpoint over the recorded records; `requests` keeps what was sent."""

    def __init__(self) -> None:
        self.discovery = load("discovery.json")
        self.pods = {
            (a["secureCloud"], a["location"], a["gpuCount"]): a["gpuTypes"]
            for a in load("pod_prices.json")["answers"]
        }
        self.cpus = {
            a["dataCenterId"]: a["cpuFlavors"] for a in load("cpu_flavors.json")["answers"]
        }
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: Any) -> tuple[int, dict[str, str], str]:
        body = json.loads(request.body)
        self.requests.append(body)
        document: str = body["query"]
        variables: dict[str, Any] = body.get("variables") or {}
        if "query GpuhuntDiscovery" in document:
            return 200, {}, json.dumps(self.discovery)
        data: dict[str, Any] = {}
        for alias, value in variables.items():
            if "query GpuhuntPodPrices" in document:
                if not re.search(rf"\b{alias}: gpuTypes\b", document) or (
                    f"lowestPrice(input: ${alias})" not in document
                ):
                    return 400, {}, json.dumps({"errors": [{"message": f"unused ${alias}"}]})
                location = value.get("dataCenterId") or value.get("countryCode")
                key = (value["secureCloud"], location, value["gpuCount"])
                data[alias] = self.pods.get(key, _out_of_stock(self.discovery))
            elif "query GpuhuntCpuPrices" in document:
                if f"dataCenterId: ${alias}" not in document:
                    return 400, {}, json.dumps({"errors": [{"message": f"unused ${alias}"}]})
                data[alias] = self.cpus.get(value, [])
            else:
                return 400, {}, json.dumps({"errors": [{"message": "unknown operation"}]})
        return 200, {}, json.dumps({"data": data})


def register(rsps: responses.RequestsMock) -> FakeRunpod:
    fake = FakeRunpod()
    rsps.add_callback(responses.POST, API_URL, callback=fake, content_type="application/json")
    return fake


def collect() -> list[CatalogItem]:
    """The offers the nightly build would publish from the recorded answers."""
    with responses.RequestsMock(assert_all_requests_are_fired=True) as rsps:
        register(rsps)
        offers = RunpodProvider.from_env().get()
    return RunpodProvider.filter(offers)
