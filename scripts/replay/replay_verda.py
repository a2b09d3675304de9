"""Replays recorded Verda API answers through the real `VerdaProvider.get()`.

`data/verda/instance_types.json`, `locations.json` and `instance_availability_spot.json` are the
shared fixtures (verbatim test fixtures modelled on the live API; recording date unknown).
`instance_availability_on_demand.json` has no recorded source: it was built on RECORDED_AT in
the same shape as the spot answer, from the types and locations of the other files.
"""

from __future__ import annotations

import json
import os
from typing import Any
from unittest import mock

import responses
from responses import matchers

from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers.verda import (
    AVAILABILITY_URL,
    CLIENT_ID_ENV,
    CLIENT_SECRET_ENV,
    INSTANCE_TYPES_URL,
    LOCATIONS_URL,
    TOKEN_URL,
    VerdaProvider,
)
from scripts.replay import RECORDINGS

RECORDED_AT = "2026-11-29"
DATA = RECORDINGS / "verda"
REPLAY_CLIENT_ID = "replay-client-id"
REPLAY_CLIENT_SECRET = "replay-client-secret"
REPLAY_ACCESS_TOKEN = "replay-access-token"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def token_answer(access_token: str = REPLAY_ACCESS_TOKEN) -> dict[str, Any]:
    return {
        "access_token": access_token,
        "refresh_token": "replay-refresh-token",
        "scope": "cloud-api-v1",
        "token_type": "Bearer",
        "expires_in": 3600,
    }


def register(
    rsps: responses.RequestsMock,
    client_id: str = REPLAY_CLIENT_ID,
    client_secret: str = REPLAY_CLIENT_SECRET,
) -> None:
    """Add the recorded answers to an active `responses` mock; each answer only matches the
    request the provider must send (token body, query parameters)."""
    rsps.add(
        responses.POST,
        TOKEN_URL,
        json=token_answer(),
        match=[
            matchers.json_params_matcher(
                {
                    "grant_type": "client_credentials",
                    "client_id": client_id,
                    "client_secret": client_secret,
                }
            )
        ],
    )
    rsps.add(
        responses.GET,
        INSTANCE_TYPES_URL,
        json=load("instance_types.json"),
        match=[matchers.query_param_matcher({"currency": "usd"})],
    )
    rsps.add(responses.GET, LOCATIONS_URL, json=load("locations.json"))
    rsps.add(
        responses.GET,
        AVAILABILITY_URL,
        json=load("instance_availability_spot.json"),
        match=[matchers.query_param_matcher({"is_spot": "true"})],
    )
    rsps.add(
        responses.GET,
        AVAILABILITY_URL,
        json=load("instance_availability_on_demand.json"),
        match=[matchers.query_param_matcher({"is_spot": "false"})],
    )


def collect() -> list[CatalogItem]:
    env = {CLIENT_ID_ENV: REPLAY_CLIENT_ID, CLIENT_SECRET_ENV: REPLAY_CLIENT_SECRET}
    with responses.RequestsMock() as rsps, mock.patch.dict(os.environ, env):
        register(rsps)
        return VerdaProvider.filter(VerdaProvider.from_env().get())
