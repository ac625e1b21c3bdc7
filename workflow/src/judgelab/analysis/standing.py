"""Where each judge stands: every judge of a dataset (live, imported, published) against the human
grades on the same pairs, and against each other - the comparison LLMJudge's Table 3 makes
(Cohen's kappa, Krippendorff's alpha beside the rank correlations of the systems).

:func:`agreement_rows` gives one row per judge: the dataset's judged pairs, how many the judge
labelled (a pair it left out is missing, counted in ``coverage``, never a grade), and the
agreement of :func:`judgelab.analysis.agreement.agreement` (kappa, quadratic weighted kappa,
macro F1, ordinal alpha) on the pairs it labelled. A binary judge (labels 0/1) is compared with
the human grades binarised by the TREC rule (grade 2 or more relevant, :data:`RELEVANT_MIN`), on
the labels 0 and 1 - never its 0/1 read as grades. A judge that gives scores (real numbers) has
its coverage only: kappa and alpha are n/a (no threshold or map is chosen here), and it is not in
the kappa figure. :func:`pairwise_kappa` is the judges x judges
Cohen's kappa on the pairs both labelled (the human grades as one more rater; a binary judge's
pairs with the others on the binarised scale), for the figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from judgelab.analysis.agreement import agreement, cohen_kappa
from judgelab.data.labels import GRADES

HUMAN = "human"
#: the TREC rule binarising a grade for a binary judge: relevant from grade 2
RELEVANT_MIN = 2

#: the agreement table's columns after ``judge``
AGREEMENT_COLUMNS = ["n_pairs", "n_labelled", "coverage", "kappa", "qwk", "macro_f1", "alpha"]


def _labelled(pairs: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """The dataset's pairs (qid, docid, grade) with the judge's ``label`` (missing where none)."""
    lab = labels[["qid", "docid", "label"]].dropna(subset=["label"])
    return pairs[["qid", "docid", "grade"]].merge(lab, on=["qid", "docid"], how="left", validate="one_to_one")


def _binary(values: pd.Series) -> pd.Series:
    return (values.astype(float) >= RELEVANT_MIN).astype(int)


def agreement_rows(
    pairs: pd.DataFrame, judges: Mapping[str, pd.DataFrame], scales: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """One row per judge (in ``judges`` order): ``judge``, its ``scale`` and :data:`AGREEMENT_COLUMNS`
    against the grades of ``pairs`` (qid, docid, grade); a judge's labels are (qid, docid, label) of
    the pairs it labelled; ``scales``: a judge's ``binary`` or ``graded`` (the default). Pairs a
    judge labels outside ``pairs`` are not counted here (the reader counts them)."""
    rows = []
    for name, labels in judges.items():
        merged = _labelled(pairs, labels)
        done = merged.dropna(subset=["label"])
        if (scales or {}).get(
            name
        ) == "scores":  # real-valued: no label agreement (the ranking study's gains)
            rows.append(
                {
                    "judge": name,
                    "scale": "scores",
                    "n_pairs": len(merged),
                    "n_labelled": len(done),
                    "coverage": len(done) / len(merged) if len(merged) else math.nan,
                    **dict.fromkeys(("kappa", "qwk", "macro_f1", "alpha"), math.nan),
                }
            )
            continue
        binary = (scales or {}).get(name) == "binary"
        human = _binary(done["grade"]) if binary else done["grade"].astype(int)
        scores = agreement(human.tolist(), done["label"].astype(int).tolist(), [0, 1] if binary else GRADES)
        rows.append(
            {
                "judge": name,
                "scale": "binary (human grade >= 2)" if binary else "graded",
                "n_pairs": len(merged),
                "n_labelled": len(done),
                "coverage": len(done) / len(merged) if len(merged) else math.nan,
                **scores,
            }
        )
    return pd.DataFrame(rows, columns=["judge", "scale", *AGREEMENT_COLUMNS])


def pairwise_kappa(
    pairs: pd.DataFrame, judges: Mapping[str, pd.DataFrame], scales: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Cohen's kappa of every two raters - the human grades first, then ``judges`` - on the pairs
    both labelled (NaN where none or undefined); a square frame indexed by rater. Where one of the
    two is binary (``scales``), the other's grades are binarised (:data:`RELEVANT_MIN`)."""
    columns = {HUMAN: pairs.set_index(["qid", "docid"])["grade"].astype("Float64")}
    for name, labels in judges.items():
        if (scales or {}).get(name) == "scores":
            continue  # scores are not labels: no kappa
        columns[name] = _labelled(pairs, labels).set_index(["qid", "docid"])["label"].astype("Float64")
    binary = {n for n, s in (scales or {}).items() if s == "binary"}
    frame = pd.DataFrame(columns)
    names = list(frame.columns)
    out = np.full((len(names), len(names)), np.nan)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if j < i:
                out[i, j] = out[j, i]
                continue
            first, second = frame[a], frame[b]
            if (a in binary) != (b in binary):  # the graded one binarised, as in agreement_rows
                first = (
                    first if a in binary else first.where(first.isna(), (first >= RELEVANT_MIN).astype(float))
                )
                second = (
                    second
                    if b in binary
                    else second.where(second.isna(), (second >= RELEVANT_MIN).astype(float))
                )
            keep = first.notna() & second.notna()
            if keep.any():
                labels = [0, 1] if a in binary or b in binary else GRADES
                out[i, j] = cohen_kappa(
                    first[keep].astype(int).tolist(), second[keep].astype(int).tolist(), labels
                )
    return pd.DataFrame(out, index=names, columns=names)
