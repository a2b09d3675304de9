"""The one table of providers. The CLI, the catalog, `default_catalog()`, the nightly build
matrix and the tests all read it: adding a provider is one module, one line here, its fixtures
and its tests. Provider modules are imported lazily, so a missing SDK only matters to whoever
uses that provider (and then the error says which extra to install)."""

from __future__ import annotations

import difflib
import importlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from gpuhunt._internal.errors import ProviderError, UnknownProviderError


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    class_name: str
    # Keyword-only from here: `ProviderSpec("x", "X", False, None)` hid which flag was False.
    _: KW_ONLY
    online: bool
    extra: str | None = None  # pip extra holding the provider's SDK, if it needs one
    env: tuple[str, ...] = field(default=())  # credentials it reads, for docs and `--help`
    # Offline providers only (docs/pipeline.md): how often the hourly workflow collects it, and
    # when `catalog build` finds a fresh CSV implausible next to the previous one (`gate.py`).
    # The defaults suit a hyperscaler's price list, which changes by the month and never loses a
    # region or a GPU model overnight; a marketplace's availability changes by the hour.
    # `cadence_hours`: how often to collect, chosen per provider with the reason in a comment
    # on its line (docs/pipeline.md); online providers are asked at query time instead.
    cadence_hours: int = 24
    max_offer_drop: float = 0.5  # share of the previous offers that may disappear
    max_price_ratio: float = 2.0  # how far an instance type's median price may move, either way
    regions_may_vanish: bool = False
    gpus_may_vanish: bool = False
    # Beyond these a change is a broken collection, never a repricing, and no run of agreeing
    # collections publishes it (only an operator's accept does): prices read in cents move
    # x100, per month instead of per hour x730; an SDK returning one page loses nearly all.
    hard_price_ratio: float = 10.0
    hard_offer_drop: float = 0.9
    # How many consecutive collections that agree with each other publish a change the gate
    # refused (the first refused one included): a real repricing is published by the third.
    confirmations: int = 3
    # Carried over for longer than this (hours; default 3x the cadence), the provider is stale
    # and the workflow fails after publishing (docs/pipeline.md, `catalog report`).
    stale_after_hours: int | None = None
    # Set for a provider whose offers are listings of other people's hosts (a marketplace of
    # hosts: Lium, Vast.ai): each is one host free at the moment it was read, a momentary
    # listing (`CatalogItem.momentary`), not a standing offer. How many hours such a listing
    # stays meaningful; older ones are not answered by default (`include`, docs/decisions.md).
    listing_cadence_hours: float | None = None

    @property
    def momentary(self) -> bool:
        """Whether its offers are momentary listings of other people's hosts."""
        return self.listing_cadence_hours is not None

    @property
    def module(self) -> str:
        return f"gpuhunt.providers.{self.name}"

    @property
    def stale_limit_hours(self) -> int:
        return (
            self.stale_after_hours if self.stale_after_hours is not None else 3 * self.cadence_hours
        )


# A marketplace lists what is for rent right now: offers, regions and GPU models come and go by the
# hour and spot prices float, so it is collected hourly and only a collapse stops its CSV.
MARKETPLACE: dict[str, Any] = dict(
    cadence_hours=1,
    max_offer_drop=0.8,
    max_price_ratio=3.0,
    regions_may_vanish=True,
    gpus_may_vanish=True,
    hard_offer_drop=0.95,
    # Hourly, so 3x the cadence would alert on any three-hour API outage.
    stale_after_hours=12,
)

# How long a marketplace host's listing stays meaningful: a judgement, not a measurement. A
# free host is rented by someone else within hours; these providers' live answers are reused
# for minutes (GPUHUNT_LIVE_CACHE_TTL) and a nightly copy is a day old, so six hours keeps a
# same-morning reading and drops yesterday's (docs/decisions.md "Momentary listings").
LISTING_HOURS = 6.0

PROVIDERS: tuple[ProviderSpec, ...] = (
    # Offline: collected nightly into the published catalog.
    ProviderSpec(
        "aws",
        "AWSProvider",
        online=False,
        extra="aws",
        env=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
    ),
    ProviderSpec(
        "azure", "AzureProvider", online=False, extra="azure", env=("AZURE_SUBSCRIPTION_ID",)
    ),
    ProviderSpec("gcp", "GCPProvider", online=False, extra="gcp", env=("GCP_PROJECT_ID",)),
    ProviderSpec(
        "oci",
        "OCIProvider",
        online=False,
        extra="oci",  # or the profile of ~/.oci/config when none of these is set
        env=(
            "OCI_CLI_USER",
            "OCI_CLI_TENANCY",
            "OCI_CLI_FINGERPRINT",
            "OCI_CLI_KEY_CONTENT",
            "OCI_CLI_REGION",
        ),
    ),
    # GPU clouds: a price list, but the regions offered follow live capacity.
    ProviderSpec(
        "lambdalabs",
        "LambdaLabsProvider",
        online=False,
        env=("LAMBDALABS_TOKEN",),
        cadence_hours=6,
        regions_may_vanish=True,  # regions with capacity are added to those with images
    ),
    ProviderSpec(
        "verda",
        "VerdaProvider",
        online=False,
        env=("VERDA_CLIENT_ID", "VERDA_CLIENT_SECRET"),
        cadence_hours=6,
    ),
    ProviderSpec(
        "nebius",
        "NebiusProvider",
        online=False,
        extra="nebius",  # the SDK is imported only when collecting
        env=(
            "NEBIUS_ACCESS_TOKEN",
            "NEBIUS_SERVICE_ACCOUNT_ID",
            "NEBIUS_PUBLIC_KEY_ID",
            "NEBIUS_PRIVATE_KEY_FILE",
        ),
    ),
    ProviderSpec("runpod", "RunpodProvider", online=False, **MARKETPLACE),
    ProviderSpec("cloudrift", "CloudRiftProvider", online=False, **MARKETPLACE),
    # Issue 30. Public price lists that change by the month: the defaults (daily, a
    # hyperscaler's gate thresholds) fit.
    ProviderSpec("scaleway", "ScalewayProvider", online=False, cadence_hours=24),
    ProviderSpec("ovhcloud", "OVHcloudProvider", online=False, cadence_hours=24),
    # Online: queried live at query time.
    # Marketplaces of other people's hosts: a listing is one host free when it was read
    # (`listing_cadence_hours`, docs/decisions.md "Momentary listings").
    ProviderSpec("vastai", "VastAIProvider", online=True, listing_cadence_hours=LISTING_HOURS),
    ProviderSpec("vultr", "VultrProvider", online=True),
    ProviderSpec(
        "hotaisle",
        "HotAisleProvider",
        online=True,
        env=("HOTAISLE_API_KEY", "HOTAISLE_TEAM_HANDLE"),
    ),
    ProviderSpec(
        "digitalocean", "DigitalOceanProvider", online=True, env=("DIGITAL_OCEAN_API_KEY",)
    ),
    ProviderSpec("jarvislabs", "JarvisLabsProvider", online=True, env=("JL_API_KEY",)),
    ProviderSpec(
        "crusoe",
        "CrusoeProvider",
        online=True,
        env=("CRUSOE_ACCESS_KEY", "CRUSOE_SECRET_KEY", "CRUSOE_PROJECT_ID"),
    ),
    ProviderSpec("seeweb", "SeewebProvider", online=True, env=("SEEWEB_API_TOKEN",)),
    ProviderSpec(
        "tensordock", "TensorDockProvider", online=True, listing_cadence_hours=LISTING_HOURS
    ),
    ProviderSpec("cudo", "CudoProvider", online=True),
    ProviderSpec("lium", "LiumProvider", online=True, listing_cadence_hours=LISTING_HOURS),
    # Both optional: the key adds the organization's GPU capacity; the URL is for other installs.
    ProviderSpec(
        "daytona", "DaytonaProvider", online=True, env=("DAYTONA_API_KEY", "DAYTONA_API_URL")
    ),
    # Issue 30. Online providers are asked per query (their answers reused for
    # GPUHUNT_LIVE_CACHE_TTL), so `cadence_hours` does not apply to them: each needs the
    # user's key and answers with what is in stock now, which a nightly copy would misstate.
    ProviderSpec("fluidstack", "FluidstackProvider", online=True, env=("FLUIDSTACK_API_KEY",)),
    ProviderSpec("shadeform", "ShadeformProvider", online=True, env=("SHADEFORM_API_KEY",)),
    # The marketplace listing is public; the key, when set, is sent along.
    ProviderSpec(
        "hyperbolic",
        "HyperbolicProvider",
        online=True,
        env=("HYPERBOLIC_API_KEY",),
        listing_cadence_hours=LISTING_HOURS,
    ),
    ProviderSpec("primeintellect", "PrimeIntellectProvider", online=True, env=("PRIME_API_KEY",)),
    # A kept price list checked against live availability (the API lists no prices).
    ProviderSpec("paperspace", "PaperspaceProvider", online=True, env=("PAPERSPACE_API_KEY",)),
)

_BY_NAME = {spec.name: spec for spec in PROVIDERS}
OFFLINE_PROVIDERS: list[str] = [p.name for p in PROVIDERS if not p.online]
ONLINE_PROVIDERS: list[str] = [p.name for p in PROVIDERS if p.online]
ALL_PROVIDERS: list[str] = [p.name for p in PROVIDERS]


# Names people write for a provider that are not its registry name (a short form, a former
# name): only for "did you mean" hints, never resolved silently, since a filter's provider is
# compared with offers' `provider` field as written.
PROVIDER_ALIASES: dict[str, str] = {
    "lambda": "lambdalabs",
    "lambdacloud": "lambdalabs",
    "datacrunch": "verda",  # Verda is DataCrunch's new name (providers/verda.py)
    "vast": "vastai",
    "ovh": "ovhcloud",
    "do": "digitalocean",
    "jarvis": "jarvislabs",
    "google": "gcp",
    "googlecloud": "gcp",
    "amazon": "aws",
    "oracle": "oci",
    "prime": "primeintellect",
}


def closest_providers(name: str, n: int = 2) -> list[str]:
    """Registry names that look most like `name` (its aliases included), best first, for a
    "did you mean" hint."""
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    keys = {p: p for p in ALL_PROVIDERS} | PROVIDER_ALIASES
    out: list[str] = []
    if key in keys:
        out.append(keys[key])
    for k in difflib.get_close_matches(key, list(keys), n=n + 2, cutoff=0.6):
        if keys[k] not in out:
            out.append(keys[k])
    # A name that a registry name starts with ("lambda", "prime") or that starts with one
    # ("cudocompute", "runpodio"): difflib's ratio misses these.
    out += [
        p
        for p in ALL_PROVIDERS
        if min(len(key), len(p)) >= 3 and (p.startswith(key) or key.startswith(p)) and p not in out
    ]
    return out[:n]


def spec(name: str) -> ProviderSpec:
    try:
        return _BY_NAME[name.lower()]
    except KeyError:
        close = closest_providers(name)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        error = UnknownProviderError(
            f"Unknown provider: {name!r}{hint} (known: {', '.join(ALL_PROVIDERS)})"
        )
        error.suggestions = tuple(close)
        raise error from None


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
