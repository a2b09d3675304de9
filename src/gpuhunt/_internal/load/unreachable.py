"""Remembering, across processes, that the catalog server did not answer.

Without it every process pays the whole wait again: a CLI run one second after another one
that fell back to the snapshot would wait for the same silent server. The disk cache folder of
the catalog URL holds a small sealed record (`unreachable.json`) of the failure streak: how
many checks in a row failed and until when nobody should ask again. A process's first load
within that window answers at once from the disk cache or the bundled snapshot; a later one
asks the network again and either removes the record (an answer) or lengthens the window.

The window starts at `FIRST` seconds and doubles while failures go on, up to `CAP` (or a
quarter of the reload interval when that is shorter, so that a short reload interval is never
stretched beyond what its owner asked for). `Catalog.load()` and `gpuhunt query --refresh`
ask at once whatever the record says.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from gpuhunt._internal import backoff
from gpuhunt._internal.load.cache import DiskCache

# How often a process looks again at another process's record of a provider it has none of.
MEMORY_RECHECK = 5.0

RECORD = "unreachable.json"
FIRST = 60.0  # seconds without a check after the first failure
CAP = 15 * 60.0  # the longest window, however long failures go on


@dataclass(frozen=True)
class Unreachable:
    failures: int  # checks in a row that got no answer
    failed_at: float  # wall clock (time.time()) of the last one
    retry_at: float  # wall clock: nobody asks again before this
    error: str  # why the last one failed

    def active(self, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        # A record from the future (the clock was set back) is not trusted.
        return self.failed_at <= now + 1 and now < self.retry_at


def window(failures: int, reload_interval: float) -> float:
    """Seconds without a check after `failures` failures in a row."""
    cap = CAP
    if math.isfinite(reload_interval) and 0 <= reload_interval / 4 < cap:
        cap = reload_interval / 4
    return backoff.delay(max(failures, 1), (FIRST, cap))


def read(cache: DiskCache) -> Unreachable | None:
    data = cache.get_json(RECORD)
    if not isinstance(data, dict):
        return None
    try:
        failures = int(data["failures"])
        failed_at = float(data["failed_at"])
        retry_at = float(data["retry_at"])
        error = str(data.get("error") or "")
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    if failures < 1 or not math.isfinite(failed_at) or not math.isfinite(retry_at):
        return None
    if retry_at - failed_at > CAP + 1:  # not a window this code writes: ignore it
        return None
    return Unreachable(failures, failed_at, retry_at, error[:500])


def note(cache: DiskCache, error: str, reload_interval: float) -> Unreachable:
    """Record one more check that got no answer; the streak goes on if the last failure's
    window ended less than `CAP` ago, else starts again."""
    now = time.time()
    before = read(cache)
    streak = before is not None and before.failed_at <= now < before.retry_at + CAP
    failures = before.failures + 1 if streak and before is not None else 1
    record = Unreachable(failures, now, now + window(failures, reload_interval), error[:500])
    cache.put_json(
        {
            "failures": record.failures,
            "failed_at": record.failed_at,
            "retry_at": record.retry_at,
            "error": record.error,
        },
        RECORD,
    )
    return record


def clear(cache: DiskCache) -> None:
    """The server answered: the next process asks as usual."""
    cache.delete(RECORD)


class Providers:
    """Online providers that got no answer, remembered across processes (`query.online`'s
    `Memory`): one sealed
    `unreachable.json` per provider, in a disk cache folder of its own (keyed like a catalog
    URL's, by `online-provider:NAME`), with the catalog server's window (60 s, doubling to
    15 min)."""

    def __init__(self, root: Path | None = None) -> None:
        self._root = root
        self._lock = threading.Lock()
        self._seen: dict[str, float] = {}  # name -> monotonic time of the last disk read
        self._noted: set[str] = set()  # names this process wrote or read a record of

    def _cache(self, name: str) -> DiskCache:
        return DiskCache(f"online-provider:{name.lower()}", self._root)

    def quiet(self, name: str) -> Unreachable | None:
        """The active record of `name`, read from the disk at most every `MEMORY_RECHECK`
        seconds (a query must not pay a file read per provider)."""
        now = time.monotonic()
        with self._lock:
            last = self._seen.get(name)
            if last is not None and now - last < MEMORY_RECHECK:
                return None
            self._seen[name] = now
        record = read(self._cache(name))
        if record is None or not record.active():
            return None
        with self._lock:
            self._noted.add(name)
        return record

    def note(self, name: str, error: str) -> None:
        with self._lock:
            self._noted.add(name)
        note(self._cache(name), error, math.inf)

    def clear(self, name: str) -> None:
        with self._lock:
            if name not in self._noted:
                return
            self._noted.discard(name)
        clear(self._cache(name))
