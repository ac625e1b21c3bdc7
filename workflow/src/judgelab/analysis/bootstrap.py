"""The bootstrap over topics (or queries, or evaluators), written once: which units each resample
draws, how many times each unit is drawn, and the percentile interval of the resampled values.

Every resample draws ``n_units`` units with replacement from ``numpy.random.default_rng(seed)``,
one row of draws per resample (``integers(0, n_units, size=(n_boot, n_units))``): the same seed
gives the same resamples in every study (PERAS's persona-vs-reference test, the ranking study's
interval of Kendall's tau)."""

from __future__ import annotations

import numpy as np


def resample_indices(n_units: int, n_boot: int, seed: int) -> np.ndarray:
    """``(n_boot, n_units)`` unit indices: row ``b`` is resample ``b``'s draws."""
    if n_boot < 1:
        raise ValueError(f"n_boot must be positive, not {n_boot}")
    return np.random.default_rng(seed).integers(0, n_units, size=(n_boot, n_units))


def resample_counts(n_units: int, n_boot: int, seed: int) -> np.ndarray:
    """``(n_boot, n_units)`` multiplicities: how often each unit is drawn in each resample (the
    draws of :func:`resample_indices`), for statistics that are sums over units
    (``counts @ per_unit``)."""
    draws = resample_indices(n_units, n_boot, seed)
    counts = np.zeros((n_boot, n_units))
    np.add.at(counts, (np.repeat(np.arange(n_boot), n_units), draws.ravel()), 1.0)
    return counts


def percentile_interval(values: np.ndarray, alpha: float) -> tuple[float, float]:
    """The ``1 - alpha`` percentile interval of resampled ``values``: their ``alpha/2`` and
    ``1 - alpha/2`` quantiles (``numpy.quantile``, linear interpolation), NaN values left out;
    (NaN, NaN) when none is left."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, not {alpha}")
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    low, high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)
