"""Replays recorded OCI answers through the real `OCIProvider.from_env().get()`.

The Cost Estimator documents go through gpuhunt's transport; `ListRegions` goes through the oci
SDK, whose vendored `requests` is intercepted by a second `responses` mock (`target=` the SDK's
adapter), so the SDK signs and sends the real request. Credentials are `OCI_CLI_*` variables set
for the duration of the call, with an API key generated on the fly (never stored).

What the data is (details in `data/oci/README.md`): the shapes are a verbatim excerpt of the real
shapes.json plus GPU shapes rebuilt from values a public test reported from the Cost Estimator
on 2026-09-18; the products are those rebuilt GPU prices plus the E4 OCPU and memory prices;
the regions are names and keys from Oracle's region list. RECORDED_AT is the day the set was
assembled.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import responses
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from gpuhunt._internal.models import CatalogItem
from gpuhunt.providers.oci import PRODUCTS_URL, SHAPES_URL, OCIProvider
from scripts.replay import RECORDINGS

RECORDED_AT = "2026-11-29"
DATA = RECORDINGS / "oci"
REGION = "us-ashburn-1"
REGIONS_URL = f"https://identity.{REGION}.oci.oraclecloud.com/20160918/regions"
SDK_ADAPTER = "oci._vendor.requests.adapters.HTTPAdapter.send"
USER = "ocid1.user.oc1..replayuser"
TENANCY = "ocid1.tenancy.oc1..replaytenancy"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text())


def new_api_key() -> tuple[str, str]:
    """A throwaway RSA key in PEM and its OCI fingerprint (MD5 of the public key, colon hex)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    digest = hashlib.md5(public, usedforsecurity=False).hexdigest()
    return pem, ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def env(key_content: str, fingerprint: str) -> dict[str, str]:
    return {
        "OCI_CLI_USER": USER,
        "OCI_CLI_TENANCY": TENANCY,
        "OCI_CLI_FINGERPRINT": fingerprint,
        "OCI_CLI_REGION": REGION,
        "OCI_CLI_KEY_CONTENT": key_content,
    }


@contextmanager
def mocks() -> Iterator[tuple[responses.RequestsMock, responses.RequestsMock]]:
    """(gpuhunt transport mock, oci SDK mock), both active."""
    with responses.RequestsMock() as http, responses.RequestsMock(target=SDK_ADAPTER) as sdk:
        yield http, sdk


def register(http: responses.RequestsMock, sdk: responses.RequestsMock) -> None:
    """Add every recorded answer to active mocks."""
    http.add(responses.GET, SHAPES_URL, json=load("replay_shapes.json"))
    http.add(responses.GET, PRODUCTS_URL, json=load("replay_products.json"))
    sdk.add(responses.GET, REGIONS_URL, json=load("list_regions.json"))


def collect() -> list[CatalogItem]:
    key_content, fingerprint = new_api_key()
    with mocks() as (http, sdk), mock.patch.dict(os.environ, env(key_content, fingerprint)):
        register(http, sdk)
        return OCIProvider.filter(OCIProvider.from_env().get())
