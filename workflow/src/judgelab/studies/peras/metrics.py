"""Agreement and calibration metrics.

* Agreement with human grades: Cohen's kappa, quadratic weighted kappa, macro F1 (scikit-learn),
  over the pairs whose answer parsed; ``coverage`` says how many that is.
* Calibration (seed 000, Eq. 1-3, after Sakai 2024): with I+ the correct and I- the incorrect
  instances and p(i) = confidence / 100,
  O = sum_{I-} p(i), U = sum_{I+} (1 - p(i)),
  RO = 1 - O/|I-| (1 if I- is empty), RU = 1 - U/|I+| (1 if I+ is empty),
  HMR = 2 RO RU / (RO + RU) (0 if RO = RU = 0).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import cohen_kappa_score, f1_score

LABELS = [0, 1, 2, 3]


def sakai(correct: Sequence[bool], confidence: Sequence[float]) -> dict[str, float]:
    """RO, RU, HMR of seed 000 Eq. 1-3; ``confidence`` in [0, 1]."""
    c = np.asarray(correct, dtype=bool)
    p = np.asarray(confidence, dtype=float)
    if c.shape != p.shape:
        raise ValueError("correct and confidence differ in length")
    if np.any((p < 0) | (p > 1)):
        raise ValueError("confidence must lie in [0, 1]")
    n_neg, n_pos = int((~c).sum()), int(c.sum())
    ro = 1.0 if n_neg == 0 else 1.0 - p[~c].sum() / n_neg
    ru = 1.0 if n_pos == 0 else 1.0 - (1.0 - p[c]).sum() / n_pos
    hmr = 0.0 if ro == 0 and ru == 0 else 2 * ro * ru / (ro + ru)
    return {"RO": float(ro), "RU": float(ru), "HMR": float(hmr)}


def agreement(human: Sequence[int], predicted: Sequence[int]) -> dict[str, float]:
    """Cohen's kappa, QWK and macro F1 (labels 0-3); NaN when undefined (e.g. no pairs)."""
    y, yhat = list(map(int, human)), list(map(int, predicted))
    if not y:
        return {"kappa": math.nan, "qwk": math.nan, "macro_f1": math.nan}
    with warnings.catch_warnings():
        # kappa is undefined (0/0) when both raters use one single label; sklearn warns and
        # returns nan, which is what we report
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        kappa = cohen_kappa_score(y, yhat, labels=LABELS)
        qwk = cohen_kappa_score(y, yhat, labels=LABELS, weights="quadratic")
    f1 = f1_score(y, yhat, labels=LABELS, average="macro", zero_division=0)
    return {"kappa": float(kappa), "qwk": float(qwk), "macro_f1": float(f1)}


def job_metrics(pairs: pd.DataFrame) -> dict[str, float]:
    """Metrics for one judge job. ``pairs`` has ``grade`` (human), ``label`` (nullable) and
    ``confidence`` (nullable, 0-100) columns, one row per judged pair."""
    n = len(pairs)
    parsed = pairs[pairs["label"].notna()]
    out: dict[str, float] = {
        "n_pairs": n,
        "n_parsed": len(parsed),
        "coverage": (len(parsed) / n) if n else math.nan,
    }
    out.update(agreement(parsed["grade"], parsed["label"]))
    with_conf = parsed[parsed["confidence"].notna()] if "confidence" in parsed else parsed.iloc[0:0]
    out["n_confidence"] = len(with_conf)
    out["confidence_coverage"] = (len(with_conf) / len(parsed)) if len(parsed) else math.nan
    if len(with_conf):
        out.update(
            sakai(
                (with_conf["label"].astype(int) == with_conf["grade"].astype(int)).to_numpy(),
                with_conf["confidence"].astype(float).to_numpy() / 100.0,
            )
        )
        out["mean_confidence"] = float(with_conf["confidence"].astype(float).mean())
    else:
        out.update({"RO": math.nan, "RU": math.nan, "HMR": math.nan, "mean_confidence": math.nan})
    return out
