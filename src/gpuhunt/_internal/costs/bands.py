"""Spot interruption bands over an answer's rows (pure numpy), and the `max_interruption`
filter: spot rows whose band is known and whose upper bound is at most the value are kept,
on-demand rows always, spot rows of unknown band never (an unknown risk is not a low one).
The bands come from a `BandSource`: a loaded catalog's `aws.interruption` (`load.sides`)."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from gpuhunt._internal.costs.interruption import BandTable

BAND_PROVIDERS = ("aws",)  # who publishes interruption bands (docs/costs.md)


class BandSource(Protocol):
    def bands(self, provider: str) -> BandTable | None: ...


def row_bands(
    sides: BandSource | None,
    providers: npt.NDArray[np.str_],
    instance_names: npt.NDArray[np.str_],
    locations: npt.NDArray[np.str_],
    spot: npt.NDArray[np.bool_],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], list[str]]:
    """Per row: (band index or -1, upper bound % or NaN) of spot rows of a provider with
    bands, and the labels by band index; on-demand rows and unknown bands are -1 / NaN."""
    n = len(providers)
    index = np.full(n, -1, dtype=np.int64)
    upper = np.full(n, np.nan)
    labels: list[str] = []
    if sides is None or n == 0:
        return index, upper, labels
    for provider in BAND_PROVIDERS:
        rows = np.flatnonzero(spot & (providers == provider))
        table = sides.bands(provider) if len(rows) else None
        if table is None:
            continue
        index[rows], upper[rows] = table.bands(locations[rows], instance_names[rows])
        for a in table.advice:
            while len(labels) <= a.band.index:
                labels.append("")
            labels[a.band.index] = a.band.label
    return index, upper, labels


def spot_band_mask(
    spot: npt.NDArray[np.bool_], upper: npt.NDArray[np.float64], max_interruption: float
) -> npt.NDArray[np.bool_]:
    """`max_interruption` over rows: on demand kept, spot kept when its known band's upper
    bound is at most the value."""
    with np.errstate(invalid="ignore"):
        return np.asarray(~spot | (upper <= max_interruption))
