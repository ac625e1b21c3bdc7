"""Agreement between two raters' labels (a judge and the human assessors), one implementation each.

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

Every caller passes only the pairs both raters labelled: a missing answer is counted by the
caller (coverage), never turned into a label here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .labels import GRADES


def confusion(first: Sequence[int], second: Sequence[int], labels: Sequence[int] = GRADES) -> np.ndarray:
    """Counts of (first, second) label pairs: ``cm[i, j]`` = pairs with ``first == labels[i]`` and
    ``second == labels[j]`` (pairs outside ``labels`` are not counted)."""
    pos = {lab: i for i, lab in enumerate(labels)}
    cm = np.zeros((len(labels), len(labels)), dtype=float)
    for a, b in zip(first, second):
        i, j = pos.get(a), pos.get(b)
        if i is not None and j is not None:
            cm[i, j] += 1.0
    return cm


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
    """Cohen's kappa, quadratic weighted kappa and macro F1 of a judge against the human labels;
    NaN where undefined (e.g. no pairs)."""
    y, yhat = [int(v) for v in human], [int(v) for v in predicted]
    if not y:
        return {"kappa": math.nan, "qwk": math.nan, "macro_f1": math.nan}
    cm = confusion(y, yhat, labels)
    return {
        "kappa": float(kappa_from_confusion(cm)),
        "qwk": float(kappa_from_confusion(cm, "quadratic")),
        "macro_f1": float(macro_f1_from_confusion(cm)),
    }
