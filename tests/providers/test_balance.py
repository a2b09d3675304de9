"""The shared vCPU/RAM/disk sizing used by TensorDock and CUDO (pure)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from gpuhunt._internal.models import QueryFilter
from gpuhunt.providers._balance import (
    HostLimits,
    Resources,
    size_resources,
    smallest_gpu_count,
)
from tests.helpers import possible_ranges

BIG_HOST = HostLimits(max_cpu=256, max_memory=2048, max_disk=10000, min_disk=30)


def test_balanced_gpu_offer():
    # 1x A100 80GB: 160 GB RAM, 27 -> 27 vCPUs (step 1), disk = max(RAM, VRAM).
    assert size_resources(1, 80, BIG_HOST) == Resources(cpu=27, memory=160, disk=160)
    even = HostLimits(max_cpu=256, max_memory=2048, cpu_step=2, memory_step=2)
    assert size_resources(1, 80, even) == Resources(cpu=28, memory=160, disk=160)


def test_small_gpus_get_at_least_two_vcpus_each():
    assert size_resources(4, 4, BIG_HOST) == Resources(cpu=8, memory=32, disk=32)


def test_unbalanced_offer_is_the_minimums():
    assert size_resources(1, 80, BIG_HOST, balance=False) == Resources(cpu=1, memory=1, disk=30)
    q = QueryFilter(min_cpu=4, min_memory=16, min_disk_size=50)
    assert size_resources(1, 80, BIG_HOST, q, balance=False) == Resources(4, 16, 50)


def test_filter_and_host_cap_the_targets():
    assert size_resources(1, 80, BIG_HOST, QueryFilter(max_memory=64)) == Resources(11, 64, 80)
    small = HostLimits(max_cpu=8, max_memory=48, max_disk=100)
    assert size_resources(1, 80, small) == Resources(cpu=8, memory=48, disk=80)


def test_filter_minimums_win_over_smaller_targets():
    q = QueryFilter(min_memory=500, min_cpu=100)
    assert size_resources(1, 24, BIG_HOST, q) == Resources(cpu=100, memory=500, disk=500)


def test_nothing_to_offer():
    assert size_resources(1, 80, BIG_HOST, QueryFilter(min_memory=4096)) is None
    assert size_resources(1, 80, BIG_HOST, QueryFilter(max_cpu=0)) is None
    assert size_resources(1, 80, BIG_HOST, QueryFilter(max_disk_size=20)) is None


def test_cpu_only():
    assert size_resources(0, None, BIG_HOST, QueryFilter(min_cpu=2)) == Resources(2, 8, 30)
    assert size_resources(0, None, BIG_HOST, QueryFilter(min_memory=64)) == Resources(16, 64, 64)


def test_ratio_raises_the_smaller_side():
    host = HostLimits(max_cpu=64, max_memory=256, cpu_per_memory=(0.25, 1.0))
    assert size_resources(1, 10, host) == Resources(cpu=5, memory=20, disk=20)  # 4 -> 5 vCPUs
    q = QueryFilter(min_cpu=32)
    assert size_resources(1, 10, host, q, balance=False) == Resources(32, 32, 0)  # RAM raised


def test_ratio_lowers_the_larger_side_when_the_smaller_cannot_grow():
    host = HostLimits(max_cpu=4, max_memory=256, cpu_per_memory=(0.25, 1.0))
    # 40 GB RAM would need 10 vCPUs; only 4 exist, so RAM drops to 16 GB.
    assert size_resources(1, 20, host) == Resources(cpu=4, memory=16, disk=40)
    assert size_resources(1, 20, host, QueryFilter(min_memory=20)) is None


def test_vcpus_per_gpu():
    host = HostLimits(max_cpu=64, max_memory=512, cpu_per_gpu=(1, 4))
    assert size_resources(2, 80, host).cpu == 8  # type: ignore[union-attr]
    assert size_resources(2, 80, host, QueryFilter(min_cpu=9)) is None


def test_smallest_gpu_count():
    assert smallest_gpu_count(8, 48, QueryFilter()) == 1
    assert smallest_gpu_count(8, 48, QueryFilter(min_gpu_count=0)) == 1
    assert smallest_gpu_count(8, 48, QueryFilter(min_total_gpu_memory=100)) == 3
    assert smallest_gpu_count(8, 48, QueryFilter(min_total_gpu_memory=96)) == 2
    assert smallest_gpu_count(8, 48, QueryFilter(max_total_gpu_memory=40)) is None
    assert smallest_gpu_count(2, 48, QueryFilter(min_gpu_count=3)) is None
    assert smallest_gpu_count(0, 48, QueryFilter()) is None


hosts = st.builds(
    HostLimits,
    max_cpu=st.integers(1, 512),
    max_memory=st.integers(1, 4096),
    max_disk=st.one_of(st.none(), st.integers(0, 20000)),
    min_cpu=st.integers(1, 4),
    min_memory=st.integers(1, 16),
    min_disk=st.integers(0, 100),
    cpu_step=st.sampled_from([1, 2]),
    memory_step=st.sampled_from([1, 2]),
    cpu_per_memory=st.one_of(
        st.none(), st.tuples(st.floats(0, 0.5), st.floats(0.5, 4)), st.just((0.25, math.inf))
    ),
    cpu_per_gpu=st.one_of(st.none(), st.tuples(st.integers(0, 2), st.integers(2, 32))),
)
optional = st.one_of(st.none(), st.integers(1, 3000))
filters = st.builds(
    # bounds drawn independently; a maximum below its minimum is refused by QueryFilter
    lambda **kw: QueryFilter(**possible_ranges(kw)),
    min_cpu=optional,
    max_cpu=optional,
    min_memory=optional,
    max_memory=optional,
    min_disk_size=optional,
    max_disk_size=optional,
)


@given(st.integers(0, 8), st.sampled_from([None, 8, 24, 80, 141]), hosts, filters, st.booleans())
def test_sizes_respect_the_filter_the_host_and_the_steps(gpus, vram, host, q, balance):
    r = size_resources(gpus, vram, host, q, balance)
    if r is None:
        return
    assert max(host.min_cpu, q.min_cpu or 0) <= r.cpu <= min(host.max_cpu, q.max_cpu or 10**9)
    assert max(host.min_memory, q.min_memory or 0) <= r.memory
    assert r.memory <= min(host.max_memory, q.max_memory or 10**9)
    assert max(host.min_disk, q.min_disk_size or 0) <= r.disk
    assert r.disk <= min(host.max_disk or 10**9, q.max_disk_size or 10**9)
    assert r.cpu % host.cpu_step == 0 and r.memory % host.memory_step == 0
    if host.cpu_per_memory:
        low, high = host.cpu_per_memory
        assert r.memory * low - 1e-6 <= r.cpu <= r.memory * high + 1e-6
    if gpus and host.cpu_per_gpu:
        assert gpus * host.cpu_per_gpu[0] <= r.cpu <= gpus * host.cpu_per_gpu[1]


@given(st.integers(1, 8), st.sampled_from([8, 24, 80]), filters)
def test_balanced_never_offers_less_than_the_minimums(gpus, vram, q):
    balanced = size_resources(gpus, vram, BIG_HOST, q, True)
    minimal = size_resources(gpus, vram, BIG_HOST, q, False)
    assert (balanced is None) == (minimal is None)
    if balanced and minimal:
        assert balanced.cpu >= minimal.cpu
        assert balanced.memory >= minimal.memory
        assert balanced.disk >= minimal.disk


@given(st.integers(0, 8), st.sampled_from([None, 8, 24, 80]), hosts, filters)
def test_balancing_never_loses_an_offer_the_minimums_allow(gpus, vram, host, q):
    if size_resources(gpus, vram, host, q, False) is not None:
        assert size_resources(gpus, vram, host, q, True) is not None
