"""The provider table's entry type: everything after the name and class is given by keyword."""

from __future__ import annotations

import pytest

from gpuhunt._internal import registry
from gpuhunt._internal.errors import UnknownProviderError
from gpuhunt._internal.registry import ProviderSpec


def test_online_flag_is_keyword_only():
    with pytest.raises(TypeError):
        ProviderSpec("x", "XProvider", False)  # type: ignore[misc]
    with pytest.raises(TypeError):
        ProviderSpec("x", "XProvider", True, None, ())  # type: ignore[misc]


def test_keywords_and_defaults():
    spec = ProviderSpec("x", "XProvider", online=True)
    assert (spec.online, spec.extra, spec.env) == (True, None, ())
    assert (spec.cadence_hours, spec.stale_limit_hours) == (24, 72)


def test_table_split_by_the_flag():
    # The table as it was written positionally (main before the keyword change).
    assert registry.OFFLINE_PROVIDERS == [
        "aws", "azure", "gcp", "oci", "lambdalabs", "verda", "nebius", "runpod", "cloudrift",
        "scaleway", "ovhcloud",
    ]  # fmt: skip
    assert {p.name: p.extra for p in registry.PROVIDERS if p.extra} == {
        "aws": "aws",
        "azure": "azure",
        "gcp": "gcp",
        "oci": "oci",
        "nebius": "nebius",
    }
    assert registry.spec("crusoe").env == (
        "CRUSOE_ACCESS_KEY",
        "CRUSOE_SECRET_KEY",
        "CRUSOE_PROJECT_ID",
    )
    assert registry.spec("runpod").cadence_hours == 1


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("lambda", ["lambdalabs"]),
        ("Lambda Labs", ["lambdalabs"]),
        ("datacrunch", ["verda"]),  # its former name
        ("vast.ai", ["vastai"]),
        ("cudo compute", ["cudo"]),
        ("hotisle", ["hotaisle"]),
        ("nosuch", []),
    ],
)
def test_an_unknown_provider_names_the_closest(name, expected):
    assert registry.closest_providers(name) == expected
    with pytest.raises(UnknownProviderError) as e:
        registry.spec(name)
    assert e.value.suggestions == tuple(expected)
    hint = f"did you mean {expected[0]!r}?" if expected else "did you mean"
    assert (hint in str(e.value)) == bool(expected)


def test_query_of_a_misspelt_provider_names_the_close_match():
    import gpuhunt

    with pytest.raises(UnknownProviderError, match="did you mean 'lambdalabs'"):
        gpuhunt.Catalog(auto_reload=False).query(provider="lambda")
