"""Replays recorded Lambda API answers through the real `LambdaLabsProvider.get()`.

`data/lambdalabs/instance_types.json` is the shared fixture (a test fixture modelled on the live
`GET /api/v1/instance-types`, four types merged from two public sources; its recording date is not
known). `data/lambdalabs/images.json` has no recorded source: it was built on RECORDED_AT from the
documented `Image` schema of Lambda Cloud API v1.10 (`GET /api/v1/images`), with the region names
gpuhunt 0.1.34 expects; which regions carry arm64 images is illustrative.
"""

from __future__ import annotations

import json
import os
from typing import Any
from unittest import mock

import responses

from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers.lambdalabs import (
    IMAGES_URL,
    INSTANCE_TYPES_URL,
    TOKEN_ENV,
    LambdaLabsProvider,
)
from scripts.replay import RECORDINGS

RECORDED_AT = "2026-11-29"
DATA = RECORDINGS / "lambdalabs"
REPLAY_TOKEN = "replay-lambda-token"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def register(rsps: responses.RequestsMock) -> None:
    """Add the recorded answers to an active `responses` mock."""
    rsps.add(responses.GET, INSTANCE_TYPES_URL, json=load("instance_types.json"))
    rsps.add(responses.GET, IMAGES_URL, json=load("images.json"))


def collect() -> list[CatalogItem]:
    with (
        responses.RequestsMock() as rsps,
        mock.patch.dict(os.environ, {TOKEN_ENV: REPLAY_TOKEN}),
    ):
        register(rsps)
        return LambdaLabsProvider.filter(LambdaLabsProvider.from_env().get())
