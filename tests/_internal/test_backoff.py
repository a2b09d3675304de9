"""The one backoff rule shared by catalog reloads, online providers and the unreachable window."""

import pytest

from gpuhunt._internal import backoff


def test_doubles_from_the_first_wait_up_to_the_cap():
    assert [backoff.delay(n) for n in range(7)] == [0.0, 30.0, 60.0, 120.0, 240.0, 480.0, 900.0]
    assert backoff.delay(50) == 900.0


@pytest.mark.parametrize("failures", [0, -1])
def test_no_failure_no_wait(failures):
    assert backoff.delay(failures, (60.0, 900.0)) == 0.0


def test_a_policy_of_its_own():
    assert [backoff.delay(n, (60.0, 900.0)) for n in (1, 2, 3, 4, 5, 6)] == [
        60.0,
        120.0,
        240.0,
        480.0,
        900.0,
        900.0,
    ]


def test_very_many_failures_stay_at_the_cap_without_overflow():
    assert backoff.delay(10**6) == 900.0


def test_retry_at_is_on_the_given_clock():
    assert backoff.retry_at(2, lambda: 1000.0) == 1060.0
    assert backoff.retry_at(0, lambda: 5.0) == 5.0
