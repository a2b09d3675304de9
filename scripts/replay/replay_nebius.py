"""Replay Nebius's API from `tests/providers/data/nebius/` and run the real provider.

Nebius is reached through the `nebius` SDK, so the boundary replayed here is the provider's
`NebiusClient` (one method per RPC, answering dicts), not HTTP. The data was built from Nebius's
documentation (see the data directory's README), not recorded.
"""

from __future__ import annotations

import json
import os
from typing import Any
from unittest import mock

from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers import nebius
from gpuhunt.providers.nebius import NebiusCredentials, NebiusProvider
from scripts.replay import RECORDINGS

RECORDED_AT = "2026-11-29"
DATA = RECORDINGS / "nebius"
DUMMY_TOKEN = "replay-access-token"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


class FakeNebiusClient:
    """Answers the provider's RPCs from the data files; `calls` records what was asked."""

    def __init__(self, credentials: NebiusCredentials) -> None:
        self.credentials = credentials
        self.calls: list[tuple[Any, ...]] = []
        self.closed = False
        self.tenants = load("tenants.json")
        self.projects = load("projects.json")
        self.platforms: dict[str, list[dict[str, Any]]] = load("platforms.json")
        self.estimates = {
            (e["project_id"], e["platform"], e["preset"], e["preemptible"]): e["response"]
            for e in load("estimates.json")["estimates"]
        }

    def list_tenants(self, page_token: str) -> dict[str, Any]:
        self.calls.append(("list_tenants", page_token))
        return self.tenants

    def list_projects(self, tenant_id: str, page_token: str) -> dict[str, Any]:
        self.calls.append(("list_projects", tenant_id, page_token))
        return self.projects

    def list_platforms(self, project_id: str, page_token: str) -> dict[str, Any]:
        self.calls.append(("list_platforms", project_id, page_token))
        pages = self.platforms.get(project_id, [{"items": [], "next_page_token": ""}])
        index = int(page_token.removeprefix("page-")) - 1 if page_token else 0
        return pages[index]

    def estimate(
        self, project_id: str, platform: str, preset: str, preemptible: bool
    ) -> dict[str, Any]:
        self.calls.append(("estimate", project_id, platform, preset, preemptible))
        key = (project_id, platform, preset, preemptible)
        if key not in self.estimates:
            raise LookupError(f"no recorded estimate for {key}")
        return self.estimates[key]

    def close(self) -> None:
        self.closed = True


def collect() -> list[CatalogItem]:
    """The offers the nightly build would publish from the data files."""
    with (
        mock.patch.dict(os.environ, {nebius.TOKEN_ENV: DUMMY_TOKEN}),
        mock.patch.object(nebius, "SDKClient", FakeNebiusClient),
    ):
        provider = NebiusProvider.from_env()
        offers = provider.get()
    return NebiusProvider.filter(offers)
