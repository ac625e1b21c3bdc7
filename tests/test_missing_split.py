"""The missing answers split in two wherever a study counts them (issue 25, item 2): cut by the
answer bound (``n_truncated``) or written but not readable (``n_unparsable``); hand cases."""

from __future__ import annotations

import pandas as pd

from judgelab.data.tables import missing_split, truthy
from judgelab.llm.pairwise import pair_outcomes
from judgelab.studies.overrating.pairwise import pairwise_metrics
from judgelab.studies.overrating.pointwise import pointwise_metrics
from judgelab.studies.perturbations.outcomes import shift_table


def test_truthy_reads_table_strings_and_bools():
    got = truthy(pd.Series(["True", "false", "", "1", "0", None, True, False]))
    assert got.tolist() == [True, False, False, True, False, False, True, False]


def test_missing_split_counts_only_missing_labels():
    labels = pd.Series([1, None, None, 2, None], dtype="Int64")
    # the last row is truncated AND parsed in the first row: a parsed label is never counted
    truncated = pd.Series([True, True, False, False, "True"])
    table = pd.DataFrame({"label": labels, "truncated": truncated})
    assert missing_split(table) == {"n_truncated": 2, "n_unparsable": 1}
    assert missing_split(table[["label"]]) == {"n_truncated": 0, "n_unparsable": 3}


def test_pointwise_metrics_split():
    pairs = pd.DataFrame(
        {
            "grade": [0, 1, 2, 3],
            "label": pd.array([0, None, None, 3], dtype="Int64"),
            "confidence": [0.9, None, None, 0.8],
            "truncated": ["False", "True", "False", "False"],
        }
    )
    m = pointwise_metrics(pairs, "graded")
    assert (m["n_pairs"], m["n_parsed"], m["n_truncated"], m["n_unparsable"]) == (4, 2, 1, 1)
    assert m["coverage"] == 0.5


def _judged(pref_hi: list, pref_lo: list, cut_hi: list, cut_lo: list) -> pd.DataFrame:
    rows = []
    for i, (ph, pl, ch, cl) in enumerate(zip(pref_hi, pref_lo, cut_hi, cut_lo)):
        key = {"qid": "q", "setting": "s", "hi_docid": f"h{i}", "lo_docid": f"l{i}"}
        rows.append({**key, "order": "hi_first", "preferred": ph, "confidence": None, "truncated": ch})
        rows.append({**key, "order": "lo_first", "preferred": pl, "confidence": None, "truncated": cl})
    return pd.DataFrame(rows)


def test_pairwise_split_per_pair():
    # pair 0 correct; pair 1 missing, one order cut; pair 2 missing, not cut; pair 3: the order
    # that parsed was cut (a label read despite the bound), the other not: unparsable
    judged = _judged(
        ["hi", None, None, "hi"], ["hi", "hi", "lo", None], [False, True, False, True], [False] * 4
    )
    out = pair_outcomes(judged)
    assert out["outcome"].tolist() == ["correct", "missing", "missing", "missing"]
    assert out["truncated"].tolist() == [False, True, False, False]
    overall = pairwise_metrics(out).iloc[-1]
    assert (overall["n_missing"], overall["n_truncated"], overall["n_unparsable"]) == (3, 1, 2)


def test_shift_table_split():
    rejudged = pd.DataFrame(
        {
            "judge": ["j"] * 4,
            "variant": ["LEX"] * 4,
            "original_label": [1, 1, 2, 2],
            "label": pd.array([2, None, None, 2], dtype="Int64"),
            "truncated": [False, True, False, False],
        }
    )
    row = shift_table(rejudged).iloc[0]
    assert (row["n"], row["n_parsed"], row["n_truncated"], row["n_unparsable"]) == (4, 2, 1, 1)
    assert row["mean_shift"] == 0.5
