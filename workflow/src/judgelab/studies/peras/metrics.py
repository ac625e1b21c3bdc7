"""The metrics of one PERAS judge job: agreement with the human grades and calibration.

* Agreement: Cohen's kappa, quadratic weighted kappa, macro F1 (:mod:`judgelab.analysis.agreement`), over
  the pairs whose answer parsed; ``coverage`` says how many that is.
* Calibration (PERAS, Eq. 1-3, after Sakai 2024): with I+ the correct and I- the incorrect
  instances and p(i) = confidence / 100,
  O = sum_{I-} p(i), U = sum_{I+} (1 - p(i)),
  RO = 1 - O/|I-| (1 if I- is empty), RU = 1 - U/|I+| (1 if I+ is empty),
  HMR = 2 RO RU / (RO + RU) (0 if RO = RU = 0). :func:`calibration_from_sums` is the one
  implementation (the paired bootstrap evaluates it on resampled sums); :func:`sakai` gives it
  per-pair values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import numpy as np
import pandas as pd

from judgelab.analysis.agreement import agreement
from judgelab.data.tables import missing_split


def calibration_from_sums(n_neg, o_sum, n_pos, u_sum) -> dict[str, np.ndarray]:
    """RO, RU and HMR (PERAS Eq. 1-3) from the number of incorrect pairs and the sum of their
    confidences, and the number of correct pairs and the sum of 1 - confidence (arrays: one
    value per resample); HMR is NaN with no pair."""
    n_neg, o_sum, n_pos, u_sum = (np.asarray(a, dtype=float) for a in (n_neg, o_sum, n_pos, u_sum))
    with np.errstate(invalid="ignore", divide="ignore"):
        ro = np.where(n_neg > 0, 1.0 - o_sum / np.where(n_neg > 0, n_neg, 1), 1.0)
        ru = np.where(n_pos > 0, 1.0 - u_sum / np.where(n_pos > 0, n_pos, 1), 1.0)
        s = ro + ru
        hmr = np.where(s > 0, 2 * ro * ru / np.where(s > 0, s, 1), 0.0)
    return {"RO": ro, "RU": ru, "HMR": np.where(n_neg + n_pos > 0, hmr, np.nan)}


def sakai(correct: Sequence[bool], confidence: Sequence[float]) -> dict[str, float]:
    """RO, RU, HMR of PERAS Eq. 1-3; ``confidence`` in [0, 1]."""
    c = np.asarray(correct, dtype=bool)
    p = np.asarray(confidence, dtype=float)
    if c.shape != p.shape:
        raise ValueError("correct and confidence differ in length")
    if np.any((p < 0) | (p > 1)):
        raise ValueError("confidence must lie in [0, 1]")
    out = cast(
        "dict[str, np.ndarray | np.float64]",
        calibration_from_sums((~c).sum(), p[~c].sum(), c.sum(), (1.0 - p[c]).sum()),
    )
    if not len(c):  # Eq. 1-3 with I- and I+ empty: RO = RU = 1, so HMR = 1
        out["HMR"] = np.float64(1.0)
    return {k: float(v) for k, v in out.items()}


def job_metrics(pairs: pd.DataFrame) -> dict[str, float]:
    """Metrics for one judge job. ``pairs`` has ``grade`` (human), ``label`` (nullable) and
    ``confidence`` (nullable, 0-100) columns, one row per judged pair, and optionally
    ``truncated`` (the answer was cut by the bound: its missing label counts in ``n_truncated``,
    the other missing ones in ``n_unparsable``)."""
    n = len(pairs)
    parsed = pairs[pairs["label"].notna()]
    out: dict[str, float] = {
        "n_pairs": n,
        "n_parsed": len(parsed),
        "coverage": (len(parsed) / n) if n else math.nan,
        # the missing answers split: cut by the answer bound, or written but not readable
        **missing_split(pairs),
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


def common_support(tables: Sequence[pd.DataFrame], keys: Sequence[str] = ("qid", "docid")) -> pd.DataFrame:
    """The pairs (``keys``) whose label parsed in every one of ``tables`` (one per persona of a
    dataset x model x template, each with the keys and a nullable ``label``): the common support,
    on which persona contrasts are not confounded by which answers parsed."""
    keys = list(keys)
    if not tables:
        return pd.DataFrame(columns=keys)
    common = tables[0].loc[tables[0]["label"].notna(), keys]
    for t in tables[1:]:
        common = common.merge(t.loc[t["label"].notna(), keys], on=keys, how="inner")
    return common.reset_index(drop=True)
