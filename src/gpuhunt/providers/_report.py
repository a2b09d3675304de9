"""What one collection had to skip or could not name: for logs, tests and the nightly build.

Every provider keeps the report of its last `get()` as `provider.last_report` (declared on
`AbstractProvider`): records skipped and why, GPU names the accelerator tables do not know
(counted by the provider's spelling, through `unknown_gpu`, whichever provider), and `counts`
of anything else worth counting ("malformed", "filtered", "rows", ...). Providers may subclass
it with their name and fields of their own.

`report.record(what)` is the one guard every online parser's loop puts around one record:
any exception parsing that record (a field of the wrong type, a count of `1e999`, a bug the
record triggers) skips it and counts it as "malformed", never the provider's whole answer. A
parser that refuses a record for a reason of its own raises `SkipRecord` (kept in `skipped`
with the reason, not counted as malformed).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType

logger = logging.getLogger("gpuhunt.providers")


class SkipRecord(ValueError):
    """A record a parser refuses, with the reason (see `ParseReport.record`)."""


@dataclass
class ParseReport:
    provider: str = "provider"
    skipped: list[str] = field(default_factory=list)
    unknown_gpus: Counter[str] = field(default_factory=Counter)
    counts: Counter[str] = field(default_factory=Counter)

    def skip(self, what: str, why: str) -> None:
        """A record left out: logged and kept for the report."""
        logger.warning("%s: skipping %s: %s", self.provider, what, why)
        self.skipped.append(f"{what}: {why}")

    def record(self, what: str | Callable[[], str]) -> RecordGuard:
        """`with report.record("offer 12"):` around the parsing of one record (see the module
        docstring); `what` names the record in the log, or is called to name it."""
        return RecordGuard(self, what)

    def malformed(self, what: str, error: BaseException) -> None:
        self.counts["malformed"] += 1
        logger.warning("%s: skipping malformed %s: %r", self.provider, what, error)

    def warn_if_incomplete(self) -> None:
        """One warning at the end of a collection that skipped records or met unknown GPUs."""
        if self.skipped or self.unknown_gpus:
            logger.warning(
                "%s: %d records skipped, unknown GPUs: %s",
                self.provider,
                len(self.skipped),
                dict(self.unknown_gpus),
            )

    def unknown_gpu(self, name: str, where: str) -> None:
        """A GPU name `resolve_gpu` does not know, as the provider spells it: logged once per
        name, counted every time. `where` says where it was seen and what became of the offer
        ("plan X; kept under that name")."""
        if name not in self.unknown_gpus:
            logger.warning(
                "%s: GPU %r is not in the accelerator tables (%s)", self.provider, name, where
            )
        self.unknown_gpus[name] += 1


class RecordGuard:
    """What `ParseReport.record` returns: swallows (and reports) any `Exception` in its block."""

    __slots__ = ("report", "what")

    def __init__(self, report: ParseReport, what: str | Callable[[], str]) -> None:
        self.report = report
        self.what = what

    def __enter__(self) -> RecordGuard:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        if error is None or not isinstance(error, Exception):
            return False  # KeyboardInterrupt, SystemExit: not the record's fault
        what = self.what
        try:
            name = what() if callable(what) else what
        except Exception:  # noqa: BLE001 - naming a broken record must not break the guard
            name = "a record"
        if isinstance(error, SkipRecord):
            self.report.skip(name, str(error))
        else:
            self.report.malformed(name, error)
        return True
