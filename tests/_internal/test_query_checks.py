"""The checks every door runs on a query: one typed error naming the filter, which each door
spells its own way."""

from __future__ import annotations

import pytest

from gpuhunt._internal import query_checks
from gpuhunt._internal.errors import InputError, QueryInputError
from gpuhunt._internal.query import spec


def _filters(**given):
    return {**dict.fromkeys(spec.NAMES), **given}


def _error(**given) -> QueryInputError:
    with pytest.raises(QueryInputError) as e:
        query_checks.check_query(_filters(**given))
    return e.value


def test_a_range_no_offer_can_match_names_both_ends():
    e = _error(min_cpu=5, max_cpu=3)
    assert e.field == "min_cpu" and e.named == ("min_cpu", "max_cpu")
    assert str(e) == "min_cpu 5 is above max_cpu 3: no offer can match"
    assert e.text(lambda n: spec.BY_NAME[n].option) == (
        "--min-cpu 5 is above --max-cpu 3: no offer can match"
    )
    assert isinstance(e, InputError) and isinstance(e, ValueError)


def test_negative_values_and_versions():
    assert str(_error(min_memory=-0.5)) == "min_memory -0.5 is negative"
    assert str(_error(min_memory_per_gpu=-1)) == "min_memory_per_gpu -1 is negative"
    e = _error(min_compute_capability="9", max_compute_capability="8")
    assert (
        str(e)
        == "min_compute_capability 9.0 is above max_compute_capability 8.0: no offer can match"
    )
    e = _error(min_cuda="1.x")
    assert e.field == "min_cuda" and e.text(str.upper).startswith("Invalid MIN_CUDA '1.x'")


def test_a_gpu_name_error_names_the_filter_and_an_unknown_provider_names_none():
    e = _error(gpu_name=["A100:0"])
    assert e.field == "gpu_name" and e.text(lambda n: "--gpu").startswith("Invalid --gpu")
    e = _error(provider=["nope"])
    assert e.field == "provider" and e.named == () and "Unknown provider: 'nope'" in str(e)


def test_braces_in_values_are_kept_as_given():
    e = _error(provider=["{x}"])
    assert "'{x}'" in e.text(str.upper)


def test_a_good_query_is_its_filter():
    q = query_checks.check_query(_filters(min_memory_per_gpu=16, gpu_name="A100"))
    assert q.min_memory_per_gpu == 16 and q.gpu_name[0] == "A100"


def test_online_providers_named_without_asking_live(monkeypatch):
    from gpuhunt._internal.load import sources

    monkeypatch.setattr(sources, "bundled_providers", lambda: set())
    with pytest.raises(QueryInputError) as e:
        query_checks.live_providers(["vastai"], online=False)
    assert e.value.online and e.value.field == "provider"
    assert str(e.value) == "vastai is an online provider, queried live"
    assert query_checks.live_providers(["aws"], online=False) == []


def test_stand_ins_are_checked_only_for_online_providers_named():
    asked = []

    def held():
        asked.append(1)
        return {"aws"}

    query_checks.check_stand_ins(["aws"], False, held)
    query_checks.check_stand_ins(["vastai"], True, held)
    assert not asked
    with pytest.raises(QueryInputError) as e:
        query_checks.check_stand_ins(["vastai"], False, held)
    assert e.value.online and e.value.note == query_checks.STAND_IN_NOTE


def test_gpu_names_the_tables_do_not_know():
    query_checks.check_gpu_names(["H100", "RTX 4090"])
    with pytest.raises(InputError, match="Unknown GPU name 'H1000'"):
        query_checks.check_gpu_names(["H1000"])
