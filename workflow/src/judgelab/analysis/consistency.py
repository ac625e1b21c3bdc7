"""Self-consistency of a judge asked the same pair k times (a study's ``repeats``): how its k
labels of a pair are drawn where they come from a label distribution, and how much they agree.

* :func:`draw_label` - one repeat's label of a judge read from the logits: a draw from the label
  distribution (over the template's labels, renormalised) at temperature T (probabilities
  p_i^(1/T), renormalised), by inverse CDF on one uniform number of a generator seeded by the
  sample index and the pair (:func:`pair_seed`): the same pair and index always draw the same
  label, whatever else is judged.
* :func:`flip_rate` - over the pairs all k repeats labelled, the share whose k labels are not
  all equal (``n_complete`` of them); NaN with none. A pair with a missing label is left out (its
  missing answer is counted by the coverage, not as a flip).
* :func:`repeat_kappa` - Cohen's kappa (unweighted, over the grades) of every two repeats i < j on
  the pairs both labelled, averaged over the k (k - 1) / 2 repeat pairs whose kappa is defined.
* :func:`repeat_alpha` - Krippendorff's ordinal alpha with the k repeats as coders and the pairs
  as units (a missing label is missing data), by the ``krippendorff`` package.
* :func:`majority` - the majority of each pair's k labels as one more judge: the committee rule
  ``majority`` (:mod:`judgelab.analysis.committee`: a tie goes to the lower label; a pair with no
  more than half of the k labels present is unlabelled).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence
from typing import cast

import numpy as np
import pandas as pd

from judgelab.analysis.agreement import cohen_kappa, krippendorff_alpha_raters
from judgelab.analysis.committee import committee_labels
from judgelab.data.labels import GRADES


def pair_seed(qid: str, docid: str) -> int:
    """A pair's part of a draw's seed: 8 bytes of the SHA-256 of ``qid<TAB>docid``."""
    return int.from_bytes(hashlib.sha256(f"{qid}\t{docid}".encode()).digest()[:8], "big")


def tempered(probs: Sequence[float], temperature: float) -> np.ndarray:
    """``probs`` at ``temperature`` (> 0): p_i^(1/T), renormalised (T = 1: ``probs`` renormalised)."""
    p = np.asarray(probs, dtype=float)
    if temperature <= 0:
        raise ValueError("a draw needs a temperature above 0")
    if not np.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
        raise ValueError(f"not a distribution: {list(p)}")
    logp = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), -np.inf) / temperature
    w = np.exp(logp - logp.max())
    return w / w.sum()


def draw_label(
    probs: Sequence[float | None] | None,
    labels: Sequence[int],
    temperature: float,
    sample: int,
    seed: int,
) -> int | None:
    """Repeat ``sample``'s label of one pair (``seed``: :func:`pair_seed`) from ``probs`` (one
    probability per grade 0-3, the first-position label distribution of a judgment row; the
    template's ``labels`` kept and renormalised) at ``temperature``; None where the row has no
    distribution or none of the template's labels has mass."""
    if probs is None or any(p is None or pd.isna(p) for p in probs):
        return None
    labels = [int(x) for x in labels]
    kept = [float(cast("float", probs[GRADES.index(lab)])) for lab in labels]
    if sum(kept) <= 0:
        return None
    p = tempered(kept, temperature)
    u = np.random.default_rng([int(sample), int(seed)]).random()
    i = int(np.searchsorted(np.cumsum(p), u, side="right"))
    return labels[min(i, len(labels) - 1)]


def wide_labels(repeats: pd.DataFrame) -> pd.DataFrame:
    """A repeats table (qid, docid, sample, label: one row per pair x sample) as one row per pair
    (qid, docid) and one nullable label column per sample 0..k-1, in sample order."""
    t = repeats.astype({"qid": str, "docid": str})
    wide = t.pivot(index=["qid", "docid"], columns="sample", values="label")
    wide = wide.reindex(columns=sorted(wide.columns))
    return wide.astype("Int64")


def flip_rate(wide: pd.DataFrame) -> tuple[float, int]:
    """The share of the pairs with all k labels whose labels are not all equal, and how many pairs
    have all k (``wide``: :func:`wide_labels`)."""
    complete = wide.dropna()
    n = len(complete)
    if not n:
        return math.nan, 0
    flips = int((complete.nunique(axis=1) > 1).sum())
    return flips / n, n


def repeat_kappa(wide: pd.DataFrame, labels: Sequence[int] = GRADES) -> float:
    """Cohen's kappa of every two repeats on the pairs both labelled, averaged over the repeat
    pairs whose kappa is defined (NaN: none is, e.g. every repeat gave one single label)."""
    values = []
    for i, j in itertools.combinations(wide.columns, 2):
        both = wide[[i, j]].dropna()
        k = cohen_kappa(both[i].astype(int).tolist(), both[j].astype(int).tolist(), labels)
        if not math.isnan(k):
            values.append(k)
    return float(np.mean(values)) if values else math.nan


def repeat_alpha(wide: pd.DataFrame, labels: Sequence[int] = GRADES) -> float:
    """Krippendorff's ordinal alpha of the k repeats as coders (NaN where undefined)."""
    if wide.shape[1] < 2:
        return math.nan
    raters = [wide[c].astype("Float64").to_numpy(dtype=float, na_value=np.nan) for c in wide.columns]
    return krippendorff_alpha_raters(raters, "ordinal", list(labels))


def majority(wide: pd.DataFrame) -> pd.DataFrame:
    """The majority of each pair's k labels (the committee table of
    :func:`judgelab.analysis.committee.committee_labels`, the repeats as members ``sample 0``, ...)."""
    members = {
        f"sample {c}": wide[c].rename("label").reset_index()[["qid", "docid", "label"]] for c in wide.columns
    }
    return committee_labels(members, "majority")
