"""What one collection had to skip or could not name: for logs, tests and the nightly build.

Every provider keeps the report of its last `get()` as `provider.last_report` (declared on
`AbstractProvider`): records skipped and why, GPU names the accelerator tables do not know
(counted by the provider's spelling, through `unknown_gpu`, whichever provider), and `counts`
of anything else worth counting ("malformed", "filtered", "rows", ...). Providers may subclass
it with their name and fields of their own.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

logger = logging.getLogger("gpuhunt.providers")


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

    def unknown_gpu(self, name: str, where: str) -> None:
        """A GPU name `resolve_gpu` does not know, as the provider spells it: logged once per
        name, counted every time. `where` says where it was seen and what became of the offer
        ("plan X; kept under that name")."""
        if name not in self.unknown_gpus:
            logger.warning(
                "%s: GPU %r is not in the accelerator tables (%s)", self.provider, name, where
            )
        self.unknown_gpus[name] += 1
