"""Statistics shared by the studies: adjusted p-values for a family of tests (statsmodels)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: The adjustments a config may name: Holm's step-down and Benjamini-Hochberg's false discovery rate.
ADJUSTMENTS = ("holm", "fdr_bh")


def adjust_pvalues(pvalues: Sequence[float], method: str = "holm") -> np.ndarray:
    """Holm (``"holm"``: step-down, monotone, capped at 1) or Benjamini-Hochberg (``"fdr_bh"``)
    adjusted p-values (statsmodels' ``multipletests``); NaN p-values stay NaN and are left out of
    the family."""
    from statsmodels.stats.multitest import multipletests

    if method not in ADJUSTMENTS:
        raise ValueError(f"unknown p-value adjustment {method!r} ({', '.join(ADJUSTMENTS)})")
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method=method)[1]
    return out
