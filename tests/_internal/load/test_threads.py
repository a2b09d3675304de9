import threading
import time

import pytest

from gpuhunt._internal.load import threads


def test_pool_runs_every_task_on_daemon_threads_within_its_bound():
    pool = threads.DaemonPool(4, "t")
    seen: set[str] = set()
    lock = threading.Lock()
    running = [0]
    peak = [0]

    def task(k: int) -> int:
        with lock:
            seen.add(threading.current_thread().name)
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        assert threading.current_thread().daemon
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        return k * k

    futures = [pool.submit(task, k) for k in range(40)]
    assert [f.result(timeout=30) for f in futures] == [k * k for k in range(40)]
    assert 1 <= len(seen) <= 4 and peak[0] <= 4
    pool.shutdown()
    with pytest.raises(RuntimeError):
        pool.submit(task, 1)


def test_pool_hands_exceptions_to_the_future_and_cancels_queued_work_on_shutdown():
    pool = threads.DaemonPool(1, "t")
    gate = threading.Event()
    first = pool.submit(gate.wait, 30)
    queued = pool.submit(lambda: 1)
    pool.shutdown(cancel_futures=True)
    gate.set()
    assert first.result(timeout=30) is True and queued.cancelled()
    other = threads.DaemonPool(2, "t")
    with pytest.raises(ZeroDivisionError):
        other.submit(lambda: 1 / 0).result(timeout=30)


def test_run_is_one_daemon_thread_with_a_future():
    fut = threads.run(lambda: threading.current_thread().daemon, "t")
    assert fut.result(timeout=30) is True


def test_an_idle_worker_keeps_nothing_of_its_last_job():
    """A job's arguments (a provider's CSV bytes) are freed when it ends, not when the worker
    takes its next job."""
    import gc
    import weakref

    class Payload:
        pass

    pool = threads.DaemonPool(1, "t")
    payload = Payload()
    ref = weakref.ref(payload)
    future = pool.submit(lambda p=payload: None)
    del payload
    future.result(timeout=30)
    del future
    for _ in range(100):  # the worker's `finally` runs just after the result is set
        gc.collect()
        if ref() is None:
            break
        time.sleep(0.01)
    assert ref() is None
    pool.shutdown()
