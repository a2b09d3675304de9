import datetime as dt
from fractions import Fraction

import pytest

from gpuhunt._internal import registry, rentable
from gpuhunt._internal.models import AcceleratorVendor, CatalogItem
from gpuhunt._internal.query import spec


def item(name, location, price, *, spot=False, provider="azure", gpu=("A10", 1, 24.0)):
    gpu_name, count, memory = gpu
    return CatalogItem(
        instance_name=name,
        location=location,
        price=price,
        cpu=8,
        memory=32.0,
        gpu_count=count,
        gpu_name=gpu_name,
        gpu_memory=memory,
        spot=spot,
        disk_size=None,
        gpu_vendor=AcceleratorVendor.NVIDIA if count else None,
        provider=provider,
    )


def region(location, ratios, provider="azure", sizes=None):
    """On-demand and spot offers of sizes s0, s1, ... whose spot/on-demand ratios are `ratios`."""
    out = []
    for n, ratio in enumerate(ratios):
        name = (sizes or [f"s{k}" for k in range(len(ratios))])[n]
        on_demand = round(1.0 + n * 0.37, 4)
        out.append(item(name, location, on_demand, provider=provider))
        out.append(item(name, location, round(on_demand * ratio, 6), spot=True, provider=provider))
    return out


# A provider-wide discount (0.185 nearly everywhere) is a price, one region's odd fixed share a
# placeholder: the Azure snapshot's australiacentral2 is 10.0% where others are 18.5%.
USUAL = [0.185] * 10 + [0.2, 0.31]


def test_a_region_at_one_unusual_fixed_share_is_a_placeholder():
    items = region("eastus", USUAL) + region("westus", USUAL) + region("odd", [0.1] * 10)
    assert rentable.placeholder_regions("azure", items) == {"odd": 0.1}
    kept, report = rentable.drop_placeholder_spot("azure", items)
    assert report.count == 10 and report.dropped == {"odd": 10}
    assert not [i for i in kept if i.spot and i.location == "odd"]
    assert len([i for i in kept if i.location == "odd"]) == 10  # on-demand offers stay
    entry = report.manifest_entry()
    assert entry["count"] == 10 and entry["regions"] == {"odd": {"ratio": 0.1, "offers": 10}}
    assert "placeholder" in entry["reason"]


def test_the_rule_holds_at_its_bounds():
    base = region("eastus", USUAL) + region("westus", USUAL)
    # 9 of 10 at one share: 90%, a placeholder; 8 of 10 is not.
    nine = region("odd", [0.1] * 9 + [0.4])
    assert rentable.placeholder_regions("azure", base + nine) == {"odd": 0.1}
    eight = region("odd", [0.1] * 8 + [0.4, 0.5])
    assert rentable.placeholder_regions("azure", base + eight) == {}
    # Fewer than PLACEHOLDER_MIN_PAIRS sizes priced both ways: too few to tell.
    few = region("odd", [0.1] * (rentable.PLACEHOLDER_MIN_PAIRS - 1))
    assert rentable.placeholder_regions("azure", base + few) == {}
    # Ratios are compared to 3 decimals: 0.1004 is 0.100.
    near = region("odd", [0.1, 0.1004, 0.0996] * 4)
    assert rentable.placeholder_regions("azure", base + near) == {"odd": 0.1}


def test_the_providers_usual_share_is_not_a_placeholder():
    # Every region at the same 18.5%: how the provider prices, left alone.
    items = [o for r in ("a", "b", "c") for o in region(r, [0.185] * 12)]
    assert rentable.placeholder_regions("azure", items) == {}
    kept, report = rentable.drop_placeholder_spot("azure", items)
    assert kept == items and report.count == 0


def test_gcp_regions_priced_at_one_discount_each_are_prices():
    # GCP gives each region one spot discount for a family: never called a placeholder.
    items = region("us-east1", USUAL, "gcp") + region("odd", [0.1] * 12, "gcp")
    assert rentable.placeholder_regions("gcp", items) == {}
    assert rentable.drop_placeholder_spot("gcp", items)[1].count == 0


def test_offers_without_both_prices_do_not_count():
    items = region("eastus", USUAL) + [
        item(f"x{n}", "odd", 0.1, spot=True) for n in range(20)
    ]  # spot only: no on-demand price to compare with
    assert rentable.placeholder_regions("azure", items) == {}


def test_restricted_regions_and_fractions_are_flagged():
    assert rentable.offer_flags("azure", "Standard_NC4as_T4_v3", "australiacentral2") == [
        "azure-restricted-region"
    ]
    assert rentable.offer_flags("azure", "Standard_NC4as_T4_v3", "eastus") == []
    assert rentable.offer_flags("azure", "Standard_NV6ads_A10_v5", "koreasouth") == [
        "azure-restricted-region",
        "fractional-gpu",
    ]
    assert rentable.offer_flags("aws", "Standard_NV6ads_A10_v5", "koreasouth") == []
    for name in ("koreasouth", "germanynorth", "norwaywest", "francesouth", "brazilsoutheast"):
        assert name in rentable.AZURE_RESTRICTED_REGIONS


@pytest.mark.parametrize(
    ("name", "share"),
    [
        ("Standard_NV6ads_A10_v5", Fraction(1, 6)),
        ("Standard_NV12ads_A10_v5", Fraction(1, 3)),
        ("Standard_NV18ads_A10_v5", Fraction(1, 2)),
        ("Standard_NV36ads_A10_v5", None),
        ("Standard_NV36adms_A10_v5", None),
        ("Standard_NV6ads_A10_v5_x", None),
    ],
)
def test_gpu_fraction(name, share):
    assert rentable.gpu_fraction("azure", name) == share


def test_a_share_counts_as_its_share_in_price_per_gpu_and_tflops_per_dollar():
    sixth = item("Standard_NV6ads_A10_v5", "westeurope", 0.454, gpu=("A10", 1, 4.0))
    whole = item("Standard_NV36ads_A10_v5", "westeurope", 3.2, gpu=("A10", 1, 24.0))
    assert sixth.price_per_gpu == pytest.approx(0.454 * 6)
    assert whole.price_per_gpu == 3.2
    assert sixth.tflops_per_dollar is not None and whole.tflops_per_dollar is not None
    # TFLOPS per dollar: a sixth of an A10's figure for its price, not a whole A10's.
    per_gpu = whole.tflops_per_dollar * whole.price
    assert sixth.tflops_per_dollar == pytest.approx(per_gpu / 6 / 0.454)
    assert sixth.tflops_per_dollar < 100  # 1490 when counted as a whole A10


NOW = dt.datetime(2026, 12, 7, 12, tzinfo=dt.timezone.utc)


def test_marketplaces_of_hosts_are_momentary_with_a_cadence():
    assert rentable.momentary_field("lium") is True and rentable.momentary_field("vastai") is True
    assert rentable.momentary_field("aws") is None and rentable.momentary_field("mine") is None
    assert rentable.listing_cadence("lium") == dt.timedelta(hours=registry.LISTING_HOURS)
    assert rentable.listing_cadence("runpod") is None
    assert rentable.offer_facts("azure", "Standard_NV6ads_A10_v5") == {
        "gpu_fraction": 1 / 6,
        "momentary": None,
    }


@pytest.mark.parametrize(
    ("age_hours", "momentary", "stale"),
    [
        (1, True, False),
        (5.9, True, False),
        (6.1, True, True),
        (None, True, True),
        (99, None, False),
    ],
)
def test_a_momentary_listing_is_stale_past_its_cadence(age_hours, momentary, stale):
    seen = None if age_hours is None else NOW - dt.timedelta(hours=age_hours)
    assert rentable.is_stale("lium", momentary, seen, NOW) is stale
    # A provider with no cadence never ages out this way (max_age does that).
    assert rentable.is_stale("aws", momentary, seen, NOW) is False


def test_hidden_kind_names_the_first_kind_asked_for():
    restricted = item("Standard_NC4as_T4_v3", "koreasouth", 1.0)
    restricted.flags = [rentable.AZURE_RESTRICTED_FLAG]
    share = item("Standard_NV6ads_A10_v5", "eastus", 0.5)
    share.gpu_fraction = 1 / 6
    listing = item("node", "us", 0.3, provider="lium")
    listing.momentary, listing.observed_at = True, NOW - dt.timedelta(days=100)
    enumerated = item("1x_MI300X_SECURE", "AP-IN-1", 2.39, provider="runpod")
    enumerated.location_source = "enumerated"
    every = set(spec.INCLUDE_KINDS)
    assert rentable.hidden_kind(restricted, every, NOW) == "restricted"
    assert rentable.hidden_kind(share, every, NOW) == "fractional"
    assert rentable.hidden_kind(listing, every, NOW) == "stale-listings"
    assert rentable.hidden_kind(enumerated, every, NOW) == "enumerated"
    for one in (restricted, share, listing, enumerated):
        assert rentable.hidden_kind(one, (), NOW) is None
    plain = item("Standard_NC4as_T4_v3", "eastus", 0.5)
    assert rentable.hidden_kind(plain, every, NOW) is None
    assert rentable.shape_kind(enumerated, NOW) == "enumerated"
    assert rentable.is_restricted_location("azure", "koreasouth")
    assert not rentable.is_restricted_location("aws", "koreasouth")


def test_include_values_read_as_the_kinds_left_out():
    assert spec.include_hidden([]) == set(spec.INCLUDE_KINDS)
    assert spec.include_hidden("restricted,fractional") == {"stale-listings", "enumerated"}
    assert spec.include_hidden(["ENUMERATED", "all"]) == set()
    with pytest.raises(ValueError, match="include: unknown kind 'spot'"):
        spec.include_hidden(["spot"])
