"""The ranking study's qrels beyond a judge's labels: a TREC qrels file read as a qrels table, the
expected-gain and score qrels of a judge, and :func:`score_labels`.

Scoring runs under a qrels table (:func:`score_runs`, trec_eval's conventions, Clarke's
compatibility) and reading a label table as qrels (:func:`qrels_from_labels`) are the shared
core's, :mod:`judgelab.analysis.scores` (the prompt-sensitivity study scores each prompt's labels
with it too); their names are re-exported here for the study's modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from judgelab.analysis.scores import ALL as ALL
from judgelab.analysis.scores import DEFAULT_DEPTH as DEFAULT_DEPTH
from judgelab.analysis.scores import QRELS_COLUMNS as QRELS_COLUMNS
from judgelab.analysis.scores import SCORE_COLUMNS as SCORE_COLUMNS
from judgelab.analysis.scores import check_qrels as check_qrels
from judgelab.analysis.scores import compatibility as compatibility
from judgelab.analysis.scores import judged_share as judged_share
from judgelab.analysis.scores import measure_depth as measure_depth
from judgelab.analysis.scores import parse_measures as parse_measures
from judgelab.analysis.scores import qrels_from_labels as qrels_from_labels
from judgelab.analysis.scores import score_runs as score_runs
from judgelab.errors import InputError


def read_qrels_table(path: str | Path, encoding: str | None = None) -> pd.DataFrame:
    """The qrels table of a TREC qrels file (``qid Q0 docid grade``, grades 0-3, read by
    :func:`judgelab.data.readers.read_qrels`): one row per pair (:func:`judgelab.data.readers.unique_pairs`:
    a pair listed twice with different grades is an error naming both lines; an exact repeat is
    kept once)."""
    from judgelab.data.readers import read_qrels, unique_pairs

    kept, _ = unique_pairs(read_qrels(path, encoding), path)
    rows = [(q.qid, q.docid, q.grade) for q in kept]
    return pd.DataFrame(rows, columns=QRELS_COLUMNS).astype({"qid": str, "docid": str, "relevance": "int64"})


#: The suffix of a judge's expected-gain qrels (``ranking.expected_gain``): ``<judge>@expected``.
EXPECTED = "@expected"


def expected_name(judge: str) -> str:
    """The name of a judge's expected-gain qrels and comparison."""
    return f"{judge}{EXPECTED}"


#: The gain scale of expected-grade qrels and of a score judge's qrels: ir-measures (trec_eval)
#: takes integer relevance, so the expected grade sum_g p(g) g, or a judge's score, is written as
#: round(EXPECTED_SCALE x value): nDCG is unchanged by scaling every gain (its ideal DCG scales
#: alike); the rounding moves a gain by at most 0.0005.
EXPECTED_SCALE = 1000


def gain_measure(measure) -> bool:
    """Whether an ir-measures measure takes real-valued gains, with no relevance threshold: nDCG
    (gains, scaled alike in the ideal DCG) and Clarke's compatibility ``Compat`` (an order: its
    ideal ranking sorts the pairs with a gain above 0 by the gain, so it reads the values' order
    and which are 0) - the measures expected-gain and score qrels serve. A thresholded measure
    (P(rel=2), R, AP, RBP(rel=2), ...) would count every gain >= 1 (a value of 0.001) as relevant."""
    return (measure.NAME == "nDCG" and "rel" not in measure.params) or measure.NAME == "Compat"


def gain_qrels(labels: pd.DataFrame, column: str, what: str, scale: int = EXPECTED_SCALE) -> pd.DataFrame:
    """The qrels of real values as gains: relevance round(scale x ``labels[column]``), a pair
    without a value left out (unlabelled, as :func:`qrels_from_labels` leaves a missing label).
    ``what`` names the table in errors."""
    if column not in labels.columns:
        raise InputError(f"the {what} has no column {column}")
    kept = labels[pd.to_numeric(labels[column], errors="coerce").notna()]
    gain = (pd.to_numeric(kept[column]) * int(scale)).round().astype("int64")
    return check_qrels(kept[["qid", "docid"]].assign(relevance=gain.to_numpy()), what)


def expected_qrels(labels: pd.DataFrame, scale: int = EXPECTED_SCALE) -> pd.DataFrame:
    """The expected-gain qrels of a judge's label table (``expected_grade``: sum over grades of
    p(grade) x grade from its label distribution): relevance round(scale x expected), a pair
    without a distribution left out (unlabelled, as :func:`qrels_from_labels` leaves a missing
    label). For gain-based measures only (:func:`gain_measure`)."""
    if "expected_grade" not in labels.columns:
        raise InputError("the label table has no column expected_grade (no label distribution)")
    return gain_qrels(labels, "expected_grade", "label table (expected grades)", scale)


def score_qrels(labels: pd.DataFrame, scale: int = EXPECTED_SCALE) -> pd.DataFrame:
    """The qrels of a judge that gives scores (its label table's ``score``: e.g. EXAM's 0-5
    self-ratings, AutoNuggetizer's nugget scores): relevance round(scale x score), as
    :func:`expected_qrels` writes expected grades; a pair without a score left out. For
    gain-based measures only (:func:`gain_measure`)."""
    return gain_qrels(labels, "score", "label table (scores)", scale)


def score_labels(
    runs: Mapping[str, pd.DataFrame],
    labels: pd.DataFrame,
    measures: Iterable[str],
    label: str = "label",
    key: str | None = None,
) -> pd.DataFrame:
    """:func:`score_runs` under a judge's label table (qid, docid, ``label``) in which some pool
    pairs may be unlabelled: those are left out of the qrels (:func:`qrels_from_labels`), i.e.
    count as non-relevant, trec_eval's rule for unjudged documents."""
    return score_runs(runs, qrels_from_labels(labels, label), measures, key)
