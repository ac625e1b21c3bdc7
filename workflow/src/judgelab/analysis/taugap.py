"""tau_gap: a rank correlation that weighs each misordering by how far apart the reference puts the
two systems (the gap-weighted tau of the TREC AutoJudge evaluation tool, trec-auto-judge's
auto-judge-evaluate; written here from its definition, its hand cases reproduced in the tests).

For each system i below the top of the judge's order, take the systems the judge puts strictly
above it (a tie in the judge's order is not "above"); each has a reference gap r_above - r_i, in the
right direction when positive. The system's share is the sum of the right-direction gaps over the
sum of the absolute gaps (a system whose gaps sum to 0 - the reference ties it with every system
above it - is left out). tau_gap = 2 x the mean share - 1: 1 when the judge orders every gap as
the reference does, -1 when it reverses every one; a swap of two systems the reference puts close
together costs little, one of systems far apart much. It is asymmetric (the reference's values
weigh, the judge's only order) and invariant to scaling the reference. 0 when the judge ties every
system; NaN (n/a) below 3 systems, or when no system has a gap.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike


def _vectors(reference: ArrayLike, judge: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    r = np.asarray(reference, dtype=float)
    j = np.asarray(judge, dtype=float)
    if r.shape != j.shape or r.ndim != 1:
        raise ValueError(
            f"reference and judge must be two vectors of one length, not {r.shape} and {j.shape}"
        )
    return r, j


def tau_gap(reference: ArrayLike, judge: ArrayLike) -> float:
    """tau_gap of the ``judge``'s scores against the ``reference``'s, one value per system in the
    same order (see the module docstring). Unequal lengths are an error."""
    r, j = _vectors(reference, judge)
    if r.size < 3:
        return math.nan
    if np.all(j == j[0]):
        return 0.0
    above = j[None, :] > j[:, None]  # above[i, k]: the judge puts k strictly above i
    gaps = np.where(above, r[None, :] - r[:, None], 0.0)
    total = np.abs(gaps).sum(axis=1)
    counted = total > 0  # below the top, with a gap: the top and gapless systems are left out
    if not counted.any():
        return math.nan
    right = np.where(gaps > 0, gaps, 0.0).sum(axis=1)
    return float(2.0 * np.mean(right[counted] / total[counted]) - 1.0)


def tau_gap_at_k(reference: ArrayLike, judge: ArrayLike, k: int) -> float:
    """:func:`tau_gap` over the reference's top ``k`` systems (by reference value descending, ties
    to the system given first: the caller orders the systems, e.g. by name); all systems when
    there are at most ``k``."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    r, j = _vectors(reference, judge)
    top = np.argsort(-r, kind="stable")[:k]
    return tau_gap(r[top], j[top])
