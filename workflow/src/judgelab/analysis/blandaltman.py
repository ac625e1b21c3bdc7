"""Agreement of values, not of ranks: Bland-Altman's limits of agreement (Bland and Altman, Lancet
1986; for LLM judges of IR evaluation Rahmani et al., CIKM 2025) of paired values - a judge's and a
reference's score of the same thing - and the range of each evaluation measure the values are read
on.

A rank correlation can be perfect while a judge scores every system too high: the bias (mean of
judge - reference) says how much, the 95% limits of agreement (bias +- 1.96 SD of the differences,
SD with n - 1) how far one pair can stray, and the proportional-bias slope (ordinary least squares
of the difference on the pair's mean, :func:`scipy.stats.linregress`) whether the difference grows
with the level.

The values are read on the measure's own range (:data:`MEASURE_RANGES`, per ir-measures measure
family: nDCG, P, AP, RBP, R, RR, ... lie in 0-1), never rescaled by the observed minimum and
maximum; a measure whose family is not in the table has no range (:func:`measure_range` gives
None) and the caller flags it.
"""

from __future__ import annotations

import math
import re

import numpy as np
from numpy.typing import ArrayLike

#: The z of the 95% limits of agreement (Bland and Altman's 1.96).
LOA_Z = 1.96

#: Keys of :func:`bland_altman`, in order.
BLAND_ALTMAN_KEYS = ["n", "bias", "sd", "loa_low", "loa_high", "slope", "intercept", "slope_p"]

#: (low, high) of every measure of an ir-measures family (the name before ``@`` or ``(``); MAP is
#: AP's mean, named as trec_eval prints it). Every one lies in 0-1 whatever the gains: the
#: normalised measures divide by their ideal, the others are shares of documents or topics.
MEASURE_RANGES: dict[str, tuple[float, float]] = {
    family: (0.0, 1.0)
    for family in (
        "nDCG",
        "P",
        "AP",
        "MAP",
        "RBP",
        "R",
        "RR",
        "Compat",
        "Bpref",
        "infAP",
        "Judged",
        "ERR",
        "Rprec",
        "Success",
        "SetP",
        "SetR",
        "SetF",
        "SetAP",
        "IPrec",
        "alpha_nDCG",
    )
}


def measure_family(measure: str) -> str:
    """The ir-measures family of a measure name: the name before its parameters (``nDCG@10`` ->
    ``nDCG``, ``P(rel=2)@10`` -> ``P``, ``alpha_nDCG@20`` -> ``alpha_nDCG``)."""
    found = re.match(r"[A-Za-z_]+", measure.strip())
    return found.group(0) if found else measure.strip()


def measure_range(measure: str) -> tuple[float, float] | None:
    """(low, high) of the measure's family in :data:`MEASURE_RANGES`; None when the family is not
    in the table (the caller flags it; nothing is rescaled)."""
    return MEASURE_RANGES.get(measure_family(measure))


def bland_altman(judge: ArrayLike, reference: ArrayLike) -> dict[str, float | int]:
    """Bland-Altman agreement of paired values (keys :data:`BLAND_ALTMAN_KEYS`).

    Pairs where either value is not finite are left out; ``n`` counts the others. With
    d = judge - reference and m = (judge + reference) / 2: ``bias`` = mean(d); ``sd`` = the
    standard deviation of d with n - 1 (NaN below 2 pairs); ``loa_low``, ``loa_high`` =
    bias -+ 1.96 sd; ``slope``, ``intercept``, ``slope_p``: the ordinary least-squares line of d
    on m (:func:`scipy.stats.linregress`) and the two-sided p of slope 0 (a proportional bias),
    NaN below 3 pairs or when every m is equal. Unequal lengths are an error."""
    j = np.asarray(judge, dtype=float)
    r = np.asarray(reference, dtype=float)
    if j.shape != r.shape or j.ndim != 1:
        raise ValueError(
            f"judge and reference values must be two vectors of one length, not {j.shape} and {r.shape}"
        )
    keep = np.isfinite(j) & np.isfinite(r)
    j, r = j[keep], r[keep]
    n = int(j.size)
    d = j - r
    m = (j + r) / 2.0
    bias = float(d.mean()) if n else math.nan
    sd = float(d.std(ddof=1)) if n >= 2 else math.nan
    slope = intercept = slope_p = math.nan
    if n >= 3 and np.ptp(m) > 0:
        from scipy import stats

        fit = stats.linregress(m, d)
        slope, intercept, slope_p = float(fit.slope), float(fit.intercept), float(fit.pvalue)
    return {
        "n": n,
        "bias": bias,
        "sd": sd,
        "loa_low": bias - LOA_Z * sd,
        "loa_high": bias + LOA_Z * sd,
        "slope": slope,
        "intercept": intercept,
        "slope_p": slope_p,
    }
