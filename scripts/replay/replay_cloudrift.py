"""Replays a CloudRift `instance-types/list` answer through the real `CloudRiftProvider.get()`.

There is no recorded CloudRift answer (the shared fixture is SHAPE only, with placeholder
values). `data/cloudrift/instance_types_list.json` was built on RECORDED_AT in that shape from
public facts: the field list of CloudRift's OpenAPI spec (rift-server 0.62) as quoted in public
notes, prices in cents (RTX PRO 6000 139.36, RTX 5090 62.4-65.0, RTX 4090 39.0, V100 25.0),
variant names (`rtx59-7-50-400-ec.1`, `rtxpro6000-12-100-1500-nr`, `v100-5-85-800-generic.16`,
...), `brand_short` spellings ("RTX 5090", "RTX PRO 6000", "V100 SXM2") and datacenter names
(`ustx1a_a01`, `usny01_a01`, `eu-central-it-gv-1`, `ap_northeast_kr_se_1`, `ap-east-tw-kn-2`)
observed live in October 2026. Node counts, RAM, disk and the 2-GPU prices are illustrative.
"""

from __future__ import annotations

import json
import os
from typing import Any
from unittest import mock

import responses
from responses import matchers

from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers.cloudrift import (
    API_VERSION,
    LIST_REQUEST,
    SERVER_ADDRESS_ENV,
    CloudRiftProvider,
    list_url,
)
from scripts.replay import RECORDINGS

RECORDED_AT = "2026-11-29"
DATA = RECORDINGS / "cloudrift"


def load(name: str = "instance_types_list.json") -> Any:
    return json.loads((DATA / name).read_text())


def register(rsps: responses.RequestsMock) -> None:
    """Add the answer to an active `responses` mock; it only matches the request body the
    provider must send."""
    rsps.add(
        responses.POST,
        list_url(),
        json=load(),
        match=[matchers.json_params_matcher({"version": API_VERSION, "data": LIST_REQUEST})],
    )


def collect() -> list[CatalogItem]:
    # A server override in the caller's environment must not redirect the replay.
    with responses.RequestsMock() as rsps, mock.patch.dict(os.environ):
        os.environ.pop(SERVER_ADDRESS_ENV, None)
        register(rsps)
        return CloudRiftProvider.filter(CloudRiftProvider.from_env().get())
