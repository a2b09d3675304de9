"""A catalog's pool for online providers: made on first use, replaced after a shut-down."""

from gpuhunt._internal.load.threads import Owner
from gpuhunt._internal.online_pool import OnlinePool


def test_submit_shut_down_and_submit_again():
    owner = Owner()
    pool = OnlinePool(2, owner)
    assert pool.executor is None  # nothing started before the first request
    assert pool.submit(lambda x: x + 1, 1).result(timeout=5) == 2
    first = pool.executor
    assert first is not None
    pool.shut_down()
    assert pool.executor is None
    assert pool.submit(lambda: "again").result(timeout=5) == "again"
    assert pool.executor is not None and pool.executor is not first
    pool.after_fork()  # a child's pool starts empty: the threads stayed in the parent
    assert pool.executor is None
    owner.close(5)
