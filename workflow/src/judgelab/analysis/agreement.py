"""Agreement between two raters' labels (a judge and the human assessors), one implementation each.

* :func:`transitions` - the one counter of label pairs: the K x L matrix of (first, second)
  label counts and, per first label, the pairs whose second label is missing (the transition
  matrices of the overrating, perturbation and simulation studies).
* :func:`confusion` - the K x K confusion matrix (rows: the first rater, columns: the second) over
  a label set.
* :func:`kappa_from_confusion` - Cohen's kappa, unweighted or with linear / quadratic weights
  (QWK), from one confusion matrix or a stack of them ``(..., K, K)`` (the paired bootstrap of
  PERAS evaluates thousands at once). The arithmetic is scikit-learn's ``cohen_kappa_score`` step
  for step (expected counts = outer(column sums, row sums) / n), so both give the same float to
  the last bit (tested); undefined (0 / 0: no pair, or both raters use one single label) is NaN.
* :func:`macro_f1_from_confusion` - macro F1 over the label set, an absent class counting 0
  (scikit-learn's ``zero_division=0``); NaN for an empty matrix.
* :func:`cohen_kappa`, :func:`macro_f1`, :func:`agreement` - the same from two label sequences.
* :func:`krippendorff_alpha` - Krippendorff's alpha (ordinal by default) through the
  ``krippendorff`` package; :func:`krippendorff_alpha_raters` the same for any number of raters.

:func:`krippendorff_alpha` computes Krippendorff's alpha through the ``krippendorff`` package
(``krippendorff.alpha``): alpha = 1 - D_o / D_e, with the coincidence matrix
o_ck = sum over items u of (number of ordered pairs (c, k) of labels in u) / (m_u - 1), m_u the
number of labels of u, n_c = sum_k o_ck, n = sum_c n_c, observed disagreement
D_o = sum_{c,k} o_ck delta2_ck / n and expected disagreement
D_e = sum_{c,k} n_c n_k delta2_ck / (n (n - 1)). The difference functions delta2 are
Krippendorff's: nominal (c != k), ordinal ((sum_{g=c..k} n_g - (n_c + n_k)/2)^2, g over the value
domain in order), interval ((c - k)^2), ratio (((c - k)/(c + k))^2).

Every caller passes only the pairs both raters labelled: a missing answer is counted by the
caller (coverage), never turned into a label here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import krippendorff
import numpy as np
import pandas as pd

from judgelab.data.labels import GRADES
from judgelab.errors import InputError

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")


def transitions(
    first: Sequence, second: Sequence, labels: Sequence = GRADES, second_labels: Sequence | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The one counter of label pairs (confusion and transition matrices of every study):
    ``counts[i, j]`` = pairs with ``first == labels[i]`` and ``second == second_labels[j]``
    (``second_labels``: ``labels`` when None), and ``missing[i]`` = pairs with
    ``first == labels[i]`` whose second label is missing (None, NaN, pd.NA). Pairs whose first label
    is outside ``labels``, or whose second is present but outside ``second_labels``, are not
    counted. Both arrays are int64."""
    first, second = list(first), list(second)
    if len(first) != len(second):
        raise ValueError(f"the two label sequences differ in length ({len(first)} and {len(second)})")
    columns = labels if second_labels is None else second_labels
    i = pd.Index(list(labels)).get_indexer(pd.Index(first, dtype=object))
    j = pd.Index(list(columns)).get_indexer(pd.Index(second, dtype=object))
    both = (i >= 0) & (j >= 0)
    counts = np.bincount(i[both] * len(columns) + j[both], minlength=len(labels) * len(columns))
    absent = (i >= 0) & np.asarray(pd.isna(pd.Series(second, dtype=object)), dtype=bool)
    missing = np.bincount(i[absent], minlength=len(labels))
    return counts.reshape(len(labels), len(columns)).astype(np.int64), missing.astype(np.int64)


def confusion(first: Sequence[int], second: Sequence[int], labels: Sequence[int] = GRADES) -> np.ndarray:
    """Counts of (first, second) label pairs as floats (:func:`transitions`, missing labels left
    out): ``cm[i, j]`` = pairs with ``first == labels[i]`` and ``second == labels[j]`` (pairs
    outside ``labels`` are not counted)."""
    return transitions(first, second, labels)[0].astype(float)


def kappa_from_confusion(cm: np.ndarray, weights: str | None = None) -> np.ndarray:
    """Cohen's kappa of confusion matrices ``(..., K, K)``; ``weights``: None, ``"linear"`` or
    ``"quadratic"``. NaN where undefined."""
    cm = np.asarray(cm, dtype=float)
    k = cm.shape[-1]
    n = cm.sum(axis=(-2, -1))
    rows, cols = cm.sum(axis=-1), cm.sum(axis=-2)
    idx = np.arange(k, dtype=float)
    if weights is None:
        w = 1.0 - np.eye(k)
    elif weights == "linear":
        w = np.abs(idx[:, None] - idx[None, :])
    elif weights == "quadratic":
        w = (idx[:, None] - idx[None, :]) ** 2
    else:
        raise ValueError(f"unknown kappa weights {weights!r} (None, linear or quadratic)")
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = cols[..., :, None] * rows[..., None, :] / n[..., None, None]
        return 1.0 - (w * cm).sum(axis=(-2, -1)) / (w * expected).sum(axis=(-2, -1))


def macro_f1_from_confusion(cm: np.ndarray) -> np.ndarray:
    """Macro F1 of confusion matrices ``(..., K, K)``: per class 2 tp / (2 tp + fp + fn), 0 for a
    class neither rater used, averaged over the K classes; NaN for an empty matrix."""
    cm = np.asarray(cm, dtype=float)
    tp = np.diagonal(cm, axis1=-2, axis2=-1)
    denom = cm.sum(axis=-1) + cm.sum(axis=-2)  # 2tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), 0.0)
    return np.where(cm.sum(axis=(-2, -1)) > 0, f1.mean(axis=-1), np.nan)


def cohen_kappa(
    first: Sequence[int], second: Sequence[int], labels: Sequence[int] = GRADES, weights: str | None = None
) -> float:
    """Cohen's kappa of two label sequences over ``labels`` (NaN when empty or undefined)."""
    if not len(first):
        return math.nan
    return float(kappa_from_confusion(confusion(first, second, labels), weights))


def macro_f1(first: Sequence[int], second: Sequence[int], labels: Sequence[int] = GRADES) -> float:
    """Macro F1 of two label sequences over ``labels`` (NaN when empty)."""
    return float(macro_f1_from_confusion(confusion(first, second, labels)))


def agreement(
    human: Sequence[int], predicted: Sequence[int], labels: Sequence[int] = GRADES
) -> dict[str, float]:
    """Cohen's kappa, quadratic weighted kappa, macro F1 and Krippendorff's ordinal alpha (the
    label agreement LLMJudge reports beside kappa) of a judge against the human labels over
    ``labels``; NaN where undefined (e.g. no pairs). The one agreement row of every study's
    tables."""
    y, yhat = [int(v) for v in human], [int(v) for v in predicted]
    if not y:
        return {"kappa": math.nan, "qwk": math.nan, "macro_f1": math.nan, "alpha": math.nan}
    cm = confusion(y, yhat, labels)
    return {
        "kappa": float(kappa_from_confusion(cm)),
        "qwk": float(kappa_from_confusion(cm, "quadratic")),
        "macro_f1": float(macro_f1_from_confusion(cm)),
        "alpha": krippendorff_alpha(y, yhat, "ordinal", list(labels)),
    }


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


def krippendorff_alpha(
    a: Sequence, b: Sequence, level: Level = "ordinal", values: Sequence[float] | None = None
) -> float:
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
    if len(a) != len(b):
        raise InputError(f"the two raters label different numbers of items ({len(a)} and {len(b)})")
    return krippendorff_alpha_raters([a, b], level, values, names=("first rater's", "second rater's"))


def krippendorff_alpha_raters(
    raters: Sequence[Sequence],
    level: str = "ordinal",
    values: Sequence[float] | None = None,
    names: Sequence[str] | None = None,
) -> float:
    """Krippendorff's alpha of any number of raters: ``raters[r][i]`` is rater r's label of item
    i, missing (None, NaN, pd.NA) where r did not label i - every rater's list has one entry per
    item. The same computation and conventions as :func:`krippendorff_alpha` (which is this with
    two raters): an item labelled by fewer than two raters is not pairable; NaN when alpha is
    undefined (no pairable item, or fewer than two distinct labels among the pairable items).
    ``names``: how an error names each rater (default "rater 1's", ...)."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r} (known: {', '.join(LEVELS)})")
    if len(raters) < 2:
        raise InputError(f"Krippendorff's alpha needs at least two raters, got {len(raters)}")
    sizes = {len(r) for r in raters}
    if len(sizes) != 1:
        raise InputError(f"the raters label different numbers of items ({sorted(sizes)})")
    names = list(names) if names is not None else [f"rater {k + 1}'s" for k in range(len(raters))]
    data = np.vstack([_as_float_labels(r, names[k]) for k, r in enumerate(raters)])
    domain = None
    if values is not None:
        domain = _as_float_labels(list(values), "values'")
        if np.isnan(domain).any() or len(set(domain)) != len(domain):
            raise InputError(f"values {list(values)} must be distinct numbers")
        used = data[~np.isnan(data)]
        outside = sorted(set(used.tolist()) - set(domain.tolist()))
        if outside:
            raise InputError(f"label(s) {outside} are not in values {list(values)}")
    pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    labels = pairable[~np.isnan(pairable)]
    if pairable.shape[1] == 0 or np.unique(labels).size < 2:
        return float("nan")
    return float(krippendorff.alpha(reliability_data=data, value_domain=domain, level_of_measurement=level))
