"""Agreement of two raters' labels on the same items (e.g. the human grade and a judge's label).

:func:`krippendorff_alpha` computes Krippendorff's alpha through the ``krippendorff`` package
(``krippendorff.alpha``): alpha = 1 - D_o / D_e, with the coincidence matrix
o_ck = sum over items u of (number of ordered pairs (c, k) of labels in u) / (m_u - 1), m_u the
number of labels of u, n_c = sum_k o_ck, n = sum_c n_c, observed disagreement
D_o = sum_{c,k} o_ck delta2_ck / n and expected disagreement
D_e = sum_{c,k} n_c n_k delta2_ck / (n (n - 1)). The difference functions delta2 are
Krippendorff's: nominal (c != k), ordinal ((sum_{g=c..k} n_g - (n_c + n_k)/2)^2, g over the value
domain in order), interval ((c - k)^2), ratio (((c - k)/(c + k))^2).
"""

from __future__ import annotations

from typing import Sequence

import krippendorff
import numpy as np
import pandas as pd

from .errors import InputError

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _as_float_labels(labels: Sequence, what: str) -> np.ndarray:
    """``labels`` as floats with NaN for a missing label (None, NaN, pd.NA, pd.NaT)."""
    out = np.full(len(labels), np.nan)
    for i, value in enumerate(labels):
        if pd.isna(value):
            continue
        try:
            out[i] = float(value)
        except (TypeError, ValueError):
            raise InputError(f"{what} label of item {i} is {value!r}, not a number") from None
    return out


def krippendorff_alpha(a: Sequence, b: Sequence, level: str = "ordinal",
                       values: Sequence[float] | None = None) -> float:
    """Krippendorff's alpha of two raters' numeric labels ``a`` and ``b`` (item i labelled a[i]
    by one rater and b[i] by the other) at ``level`` (nominal, ordinal, interval, ratio), by
    ``krippendorff.alpha`` (formula in the module docstring).

    Missing labels (None, NaN, pd.NA) are passed to ``krippendorff`` as missing data. An item with
    a single label is not pairable (m_u = 1) and so contributes nothing to the coincidence
    matrix: with two raters this is the same as leaving out every item where either label is
    missing.

    ``values`` (e.g. ``[0, 1, 2, 3]``) is the label domain, passed as ``value_domain``; for the
    ordinal level its order is the order of the grades. A label outside ``values`` is an error.
    A grade of ``values`` that nobody used has n_g = 0, so it changes none of the four difference
    functions above: ordinal alpha with and without an unused grade in ``values`` is the same
    (tested). Without ``values`` the domain is the set of labels used, in numeric order.

    Returns NaN when alpha is undefined: fewer than two distinct labels among the pairable items
    (D_e = 0, e.g. everyone used one label), or no item labelled by both raters."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r} (known: {', '.join(LEVELS)})")
    if len(a) != len(b):
        raise InputError(f"the two raters label different numbers of items ({len(a)} and {len(b)})")
    data = np.vstack([_as_float_labels(a, "first rater's"), _as_float_labels(b, "second rater's")])
    domain = None
    if values is not None:
        domain = _as_float_labels(list(values), "values'")
        if np.isnan(domain).any() or len(set(domain)) != len(domain):
            raise InputError(f"values {list(values)} must be distinct numbers")
        used = data[~np.isnan(data)]
        outside = sorted(set(used.tolist()) - set(domain.tolist()))
        if outside:
            raise InputError(f"label(s) {outside} are not in values {list(values)}")
    pairable = data[:, ~np.isnan(data).any(axis=0)]
    if pairable.shape[1] == 0 or np.unique(pairable).size < 2:
        return float("nan")
    return float(krippendorff.alpha(reliability_data=data, value_domain=domain,
                                    level_of_measurement=level))
