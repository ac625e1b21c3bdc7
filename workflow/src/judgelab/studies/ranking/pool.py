"""The pool and its labels: who judged which pool pair, and the qrels every side is scored with.

* **The pool** of a dataset (:func:`pool_table`): the union of every run's top ``k`` (trec_eval's
  order) over the dataset table's topics, with per pair the number of runs that put it in their
  top ``k``, the human grade (missing where the assessors did not judge the pair) and whether its
  passage text is known: a pair's text is known when its docid is a passage of the dataset table
  (judged for this topic or for another); the query is the topic's. Only those pairs can be shown
  to a live judge (:func:`judge_pairs`).
* **The human qrels** (:func:`human_qrels`): the dataset table's grades as they are.
* **A judge's qrels**: its labels (:func:`judgelab.studies.ranking.scores.qrels_from_labels`); a
  pair it did not label - an unparsable answer, a passage whose text is unknown, a pair an
  imported file does not list - has no row.
* **Unjudged pairs.** By default trec_eval's rule holds for every qrels: a document a run
  retrieved that has no row in the qrels counts as non-relevant (``unjudged: nonrelevant``), and
  ``judged_at_k`` beside every score says how much of the run's top k the qrels cover. With
  ``unjudged: fill`` the holes of the human qrels - pool pairs the assessors did not judge - are
  filled with the judge's labels where it has one (:func:`fill_holes`; its reference qrels is
  then called ``human+<judge>``), as MacAvaney and Soldaini (SIGIR 2023, "One-Shot Labeling for
  Automatic Relevance Estimation", the autoqrels package) fill holes with predicted labels. A
  live judge labels every pool pair whose passage text is known, so it can fill the holes whose
  text is known; an imported judge's file labels only the dataset's judged pairs
  (:func:`judgelab.data.imported.read_judge_file`), so it fills nothing.
* **Label agreement on the pool** (:func:`label_agreement`): the judge against the human grades
  on the pool pairs both labelled. A judge that gives scores, not labels (:func:`score_agreement`):
  Cohen's kappa and the confusion-based metrics are undefined (n/a: its scale is not the
  reference's, and no threshold is chosen for it); Krippendorff's alpha only after the declared
  linear map (``ranking.score_alpha: linear``: its range [low, high] onto the grades 0-3, interval
  alpha), named in ``alpha_map``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np
import pandas as pd

from judgelab.analysis.agreement import agreement, krippendorff_alpha
from judgelab.data.labels import GRADES
from judgelab.studies.ranking.runs import pool
from judgelab.studies.ranking.scores import QRELS_COLUMNS, check_qrels, qrels_from_labels

#: Columns of :func:`pool_table` (then ``query`` and ``passage``, empty where unknown).
POOL_COLUMNS = ["qid", "docid", "n_runs", "human", "text_known"]

#: Keys of :func:`label_agreement`, in order (``alpha_map``: the map a score judge's scores took
#: onto the grades before alpha, e.g. ``scores 0-5 -> grades 0-3, linear``; empty for labels).
AGREEMENT_KEYS = [
    "n_pool",
    "n_pairs",
    "n_labelled",
    "coverage",
    "kappa",
    "qwk",
    "macro_f1",
    "alpha",
    "alpha_map",
]

#: The maps ``ranking.score_alpha`` may declare from a score judge's range onto the grades.
SCORE_ALPHA_MAPS = ("linear",)


def human_qrels(table: pd.DataFrame) -> pd.DataFrame:
    """The qrels table (qid, docid, relevance) of a dataset table's human grades."""
    return check_qrels(table[["qid", "docid"]].assign(relevance=table["grade"]), "dataset table")


def pool_table(runs: Mapping[str, pd.DataFrame], table: pd.DataFrame, k: int) -> pd.DataFrame:
    """The depth-``k`` pool of ``runs`` over the topics of the dataset ``table`` (columns qid,
    query, docid, passage, grade): :data:`POOL_COLUMNS` (``human`` the grade, Int64, missing where
    unjudged; ``text_known``: the table has the passage's text, not empty as in a table without
    texts) and ``query``, ``passage`` (empty strings where the text is unknown), sorted by qid and
    docid."""
    topics = table.drop_duplicates("qid").set_index("qid")["query"]
    pairs = pool(runs, k, topics.index)
    grades = table.set_index(["qid", "docid"])["grade"]
    key = pd.MultiIndex.from_frame(pairs[["qid", "docid"]])
    human = grades.reindex(key)
    passages = table.drop_duplicates("docid").set_index("docid")["passage"]
    text = passages.reindex(pairs["docid"])
    out = pairs.assign(
        human=pd.array(human.to_numpy(), dtype="Int64"),
        text_known=text.fillna("").ne("").to_numpy(),
        query=topics.reindex(pairs["qid"]).to_numpy(),
        passage=text.fillna("").to_numpy(),
    )
    return out.reset_index(drop=True)


def judge_pairs(pool_: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The pool pairs a live judge is shown (those whose passage text is known), as a table with
    the columns the judgment builders read (dataset, qid, query, docid, passage), pool order."""
    known = pool_[pool_["text_known"]]
    return known.assign(dataset=dataset)[["dataset", "qid", "query", "docid", "passage"]].reset_index(
        drop=True
    )


def fill_holes(human: pd.DataFrame, judge_labels: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The human qrels with its holes filled by the judge: every pair the judge labelled that has
    no human row is added with the judge's label (``judge_labels``: qid, docid, label; unlabelled
    rows ignored). Returns the qrels and the number of pairs filled."""
    judge = qrels_from_labels(judge_labels)
    have = pd.MultiIndex.from_frame(human[["qid", "docid"]])
    new = judge[~pd.MultiIndex.from_frame(judge[["qid", "docid"]]).isin(have)]
    filled = pd.concat([human[QRELS_COLUMNS], new], ignore_index=True)
    return check_qrels(filled, "filled qrels"), len(new)


def _aligned(pool_: pd.DataFrame, values: pd.Series, dtype: str, what: str) -> tuple:
    """The pool's human grades and a judge's ``values`` aligned with them (as ``dtype``), the
    pairs both labelled, and the counts: pool pairs with a human grade, and of them the judge's."""
    human = pd.array(pool_["human"], dtype="Int64")
    judge = pd.array(pd.Series(values).to_numpy(), dtype=dtype)
    if len(judge) != len(human):
        raise ValueError(f"{len(judge)} {what} for a pool of {len(human)} pairs")
    graded = ~pd.isna(human)
    both = graded & ~pd.isna(judge)
    return human, judge, both, int(graded.sum()), int(both.sum())


def label_agreement(pool_: pd.DataFrame, labels: pd.Series) -> dict[str, float | int | str]:
    """Agreement of a judge with the human grades on the pool (keys :data:`AGREEMENT_KEYS`).

    ``labels``: the judge's label of each pool pair, aligned with ``pool_`` (missing where the
    judge gave none). ``n_pool``: pool pairs; ``n_pairs``: those with a human grade;
    ``n_labelled``: of those, the pairs the judge labelled; ``coverage`` = n_labelled / n_pairs;
    Cohen's kappa, quadratic weighted kappa and macro F1 (:func:`judgelab.analysis.agreement.agreement`)
    and Krippendorff's ordinal alpha over the grades 0-3
    (:func:`judgelab.analysis.agreement.krippendorff_alpha`) on the n_labelled pairs. NaN where undefined
    (no pair, or a single label)."""
    human, judge, both, n_pairs, n_both = _aligned(pool_, labels, "Int64", "labels")
    h = np.asarray(human[both], dtype=int)
    j = np.asarray(judge[both], dtype=int)
    # int arrays: agreement reads any sequence of ints (its annotation names only Sequence)
    scores = agreement(cast("Sequence[int]", h), cast("Sequence[int]", j), GRADES)
    return {
        "n_pool": len(human),
        "n_pairs": n_pairs,
        "n_labelled": n_both,
        "coverage": n_both / n_pairs if n_pairs else math.nan,
        "kappa": scores["kappa"],
        "qwk": scores["qwk"],
        "macro_f1": scores["macro_f1"],
        "alpha": scores["alpha"],
        "alpha_map": "",
    }


def linear_map_name(score_range: Sequence[float]) -> str:
    """How ``alpha_map`` names the linear map of a score range onto the grades."""
    low, high = (float(x) for x in score_range)
    return f"scores {low:g}-{high:g} -> grades {GRADES[0]}-{GRADES[-1]}, linear"


def score_agreement(
    pool_: pd.DataFrame, scores: pd.Series, score_range: Sequence[float], alpha_map: str | None
) -> dict[str, float | int | str]:
    """Agreement of a judge that gives scores with the human grades on the pool (keys
    :data:`AGREEMENT_KEYS`): ``scores`` aligned with ``pool_`` (missing where the judge gave
    none); ``n_pool``, ``n_pairs``, ``n_labelled`` (the graded pairs it scored) and ``coverage``
    as :func:`label_agreement`. Cohen's kappa, quadratic weighted kappa and macro F1 are NaN
    (n/a): they need the judge's scale to be the reference's, and scores are put on the grades by
    no threshold anyone chose. Krippendorff's alpha only after a declared map (``alpha_map``:
    ``linear`` maps ``score_range`` (low, high) onto the grades 0-3, g = 3 (s - low) / (high -
    low); interval alpha, :func:`judgelab.analysis.agreement.krippendorff_alpha`), NaN without one
    (None); ``alpha_map`` names the map (empty without one)."""
    human, judge, both, n_pairs, n_both = _aligned(pool_, scores, "Float64", "scores")
    alpha, named = math.nan, ""
    if alpha_map is not None:
        if alpha_map not in SCORE_ALPHA_MAPS:
            raise ValueError(f"unknown score map {alpha_map!r} ({', '.join(SCORE_ALPHA_MAPS)})")
        low, high = (float(x) for x in score_range)
        h = np.asarray(human[both], dtype=float).tolist()
        s = np.asarray(judge[both], dtype=float)
        mapped = (GRADES[0] + (s - low) / (high - low) * (GRADES[-1] - GRADES[0])).tolist()
        alpha, named = krippendorff_alpha(h, mapped, "interval"), linear_map_name(score_range)
    return {
        "n_pool": len(human),
        "n_pairs": n_pairs,
        "n_labelled": n_both,
        "coverage": n_both / n_pairs if n_pairs else math.nan,
        "kappa": math.nan,
        "qwk": math.nan,
        "macro_f1": math.nan,
        "alpha": alpha,
        "alpha_map": named,
    }


def labels_on_pool(pool_: pd.DataFrame, labels: pd.DataFrame, column: str = "label") -> pd.Series:
    """A judge's label of every pool pair (Int64, missing where it gave none), in pool order;
    ``labels``: qid, docid, label (a pair listed twice is an error). ``column="score"``: a score
    judge's scores instead (Float64)."""
    lab = labels[["qid", "docid", column]]
    dup = lab.duplicated(["qid", "docid"], keep=False)
    if dup.any():
        row = lab[dup].iloc[0]
        raise ValueError(f"the judge's labels list the pair (qid {row['qid']}, docid {row['docid']}) twice")
    key = pd.MultiIndex.from_frame(pool_[["qid", "docid"]])
    values = lab.set_index(["qid", "docid"])[column].reindex(key)
    dtype = "Int64" if column == "label" else "Float64"
    return pd.Series(pd.array(values.to_numpy(), dtype=dtype), index=pool_.index)
