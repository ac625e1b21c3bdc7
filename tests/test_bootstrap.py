"""judgelab.analysis.bootstrap on hand cases: the resamples are numpy's default_rng integers (the
stream every study's bootstrap draws, so a merged implementation kept the numbers), counts are
their multiplicities, the percentile interval is numpy's quantile with NaN left out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgelab.analysis.bootstrap import percentile_interval, resample_counts, resample_indices


def test_the_resamples_are_the_default_rng_stream():
    want = np.random.default_rng(3).integers(0, 5, size=(4, 5))
    assert (resample_indices(5, 4, 3) == want).all()
    counts = resample_counts(5, 4, 3)
    assert [list(np.bincount(r, minlength=5)) for r in want] == counts.astype(int).tolist()
    with pytest.raises(ValueError, match="n_boot must be positive"):
        resample_indices(5, 0, 3)


def test_percentile_interval_by_hand():
    values = np.array([0.0, 1.0, 2.0, 3.0, 4.0, np.nan])
    # quantiles 0.1 and 0.9 of 0..4 by linear interpolation: 0.4 and 3.6
    assert percentile_interval(values, 0.2) == pytest.approx((0.4, 3.6))
    low, high = percentile_interval(np.array([np.nan, np.nan]), 0.05)
    assert math.isnan(low) and math.isnan(high)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        percentile_interval(values, 1.0)
