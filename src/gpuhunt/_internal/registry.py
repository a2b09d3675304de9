"""The one table of providers. The CLI, the catalog, `default_catalog()`, the nightly build
matrix and the tests all read it: adding a provider is one module, one line here, its fixtures
and its tests. Provider modules are imported lazily, so a missing SDK only matters to whoever
uses that provider (and then the error says which extra to install)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from gpuhunt._internal.errors import ProviderError, UnknownProviderError


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    class_name: str
    online: bool
    extra: str | None = None  # pip extra holding the provider's SDK, if it needs one
    env: tuple[str, ...] = field(default=())  # credentials it reads, for docs and `--help`

    @property
    def module(self) -> str:
        return f"gpuhunt.providers.{self.name}"


PROVIDERS: tuple[ProviderSpec, ...] = (
    # Offline: collected nightly into the published catalog.
    ProviderSpec(
        "aws", "AWSProvider", False, "aws", ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
    ),
    ProviderSpec("azure", "AzureProvider", False, "azure", ("AZURE_SUBSCRIPTION_ID",)),
    ProviderSpec("gcp", "GCPProvider", False, "gcp", ("GCP_PROJECT_ID",)),
    ProviderSpec(
        "oci",
        "OCIProvider",
        False,
        "oci",  # or the profile of ~/.oci/config when none of these is set
        (
            "OCI_CLI_USER",
            "OCI_CLI_TENANCY",
            "OCI_CLI_FINGERPRINT",
            "OCI_CLI_KEY_CONTENT",
            "OCI_CLI_REGION",
        ),
    ),
    ProviderSpec("lambdalabs", "LambdaLabsProvider", False, None, ("LAMBDALABS_TOKEN",)),
    ProviderSpec("verda", "VerdaProvider", False, None, ("VERDA_CLIENT_ID", "VERDA_CLIENT_SECRET")),
    ProviderSpec(
        "nebius",
        "NebiusProvider",
        False,
        "nebius",  # the SDK is imported only when collecting
        (
            "NEBIUS_ACCESS_TOKEN",
            "NEBIUS_SERVICE_ACCOUNT_ID",
            "NEBIUS_PUBLIC_KEY_ID",
            "NEBIUS_PRIVATE_KEY_FILE",
        ),
    ),
    ProviderSpec("runpod", "RunpodProvider", False, None, ()),
    ProviderSpec("cloudrift", "CloudRiftProvider", False, None, ()),
    # Online: queried live at query time.
    ProviderSpec("vastai", "VastAIProvider", True, None, ()),
    ProviderSpec("vultr", "VultrProvider", True, None, ()),
    ProviderSpec(
        "hotaisle", "HotAisleProvider", True, None, ("HOTAISLE_API_KEY", "HOTAISLE_TEAM_HANDLE")
    ),
    ProviderSpec("digitalocean", "DigitalOceanProvider", True, None, ("DIGITAL_OCEAN_API_KEY",)),
    ProviderSpec("jarvislabs", "JarvisLabsProvider", True, None, ("JL_API_KEY",)),
    ProviderSpec(
        "crusoe",
        "CrusoeProvider",
        True,
        None,
        ("CRUSOE_ACCESS_KEY", "CRUSOE_SECRET_KEY", "CRUSOE_PROJECT_ID"),
    ),
    ProviderSpec("seeweb", "SeewebProvider", True, None, ("SEEWEB_API_TOKEN",)),
    ProviderSpec("tensordock", "TensorDockProvider", True, None, ()),
    ProviderSpec("cudo", "CudoProvider", True, None, ()),
    ProviderSpec("lium", "LiumProvider", True, None, ()),
    # Both optional: the key adds the organization's GPU capacity; the URL is for other installs.
    ProviderSpec("daytona", "DaytonaProvider", True, None, ("DAYTONA_API_KEY", "DAYTONA_API_URL")),
)

_BY_NAME = {spec.name: spec for spec in PROVIDERS}
OFFLINE_PROVIDERS: list[str] = [p.name for p in PROVIDERS if not p.online]
ONLINE_PROVIDERS: list[str] = [p.name for p in PROVIDERS if p.online]
ALL_PROVIDERS: list[str] = [p.name for p in PROVIDERS]


def spec(name: str) -> ProviderSpec:
    try:
        return _BY_NAME[name.lower()]
    except KeyError:
        raise UnknownProviderError(
            f"Unknown provider: {name!r} (known: {', '.join(ALL_PROVIDERS)})"
        ) from None


def missing_package_error(name: str, error: ImportError) -> ProviderError:
    """The one-line error for a provider whose SDK (or another package) is not installed."""
    s = spec(name)
    hint = f": pip install 'gpuhunt[{s.extra}]'" if s.extra else ""
    missing = error.name or str(error)
    return ProviderError(
        f"Provider {s.name} needs a package that is not installed ({missing}){hint}"
    )


@contextmanager
def sdk_imports(name: str) -> Iterator[None]:
    """Wrap a provider's SDK imports, done where the SDK is used rather than at module level
    (so every provider module, and its integrity tests, import without it):
    `with sdk_imports("gcp"): from google.cloud import compute_v1`."""
    try:
        yield
    except ImportError as e:
        raise missing_package_error(name, e) from e


def provider_class(name: str) -> Any:
    """Import a provider's class; a missing SDK becomes an error with the install hint."""
    s = spec(name)
    try:
        module = importlib.import_module(s.module)
    except ImportError as e:
        raise missing_package_error(s.name, e) from e
    return getattr(module, s.class_name)
