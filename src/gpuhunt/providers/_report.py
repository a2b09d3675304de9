"""What one collection had to skip or could not name: for logs, tests and the nightly build.

Providers subclass `ParseReport` with their name (and any counters of their own) and keep the
last one as `provider.last_report`.
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

    def skip(self, what: str, why: str) -> None:
        """A record left out: logged and kept for the report."""
        logger.warning("%s: skipping %s: %s", self.provider, what, why)
        self.skipped.append(f"{what}: {why}")

    def unknown_gpu(self, name: str, where: str) -> None:
        """A GPU the accelerator tables do not know, kept under the provider's name: logged once
        per name, counted every time."""
        if name not in self.unknown_gpus:
            logger.warning(
                "%s: GPU %r of %s is not in the accelerator tables; kept as is",
                self.provider,
                name,
                where,
            )
        self.unknown_gpus[name] += 1
