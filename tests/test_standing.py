"""Where each judge stands (judgelab.analysis.standing, judgelab.project.standing): every judge of
a dataset against the human grades and each other, checked against scikit-learn and
krippendorff, and the leaderboard's join with the ranking study's correlations."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from judgelab.analysis.standing import agreement_rows, pairwise_kappa
from judgelab.data.tables import write_tsv
from judgelab.project.standing import COLUMNS, leaderboard

GRADES = [0, 1, 2, 3, 3, 2, 1, 0, 2, 3]
PAIRS = pd.DataFrame({"qid": ["q"] * 10, "docid": [f"d{i}" for i in range(10)], "grade": GRADES})


def labels(values) -> pd.DataFrame:
    """A judge's labels of the pairs it labelled (None: not labelled)."""
    rows = [("q", f"d{i}", v) for i, v in enumerate(values) if v is not None]
    return pd.DataFrame(rows, columns=["qid", "docid", "label"])


def test_a_graded_judge_against_scikit_learn_and_krippendorff_on_the_pairs_it_labelled():
    judge = [0, 1, 1, 3, 2, 2, None, 0, 3, None]
    row = agreement_rows(PAIRS, {"j": labels(judge)}).iloc[0]
    kept = [i for i, v in enumerate(judge) if v is not None]
    h, j = [GRADES[i] for i in kept], [judge[i] for i in kept]
    assert (row["n_pairs"], row["n_labelled"], row["coverage"]) == (10, 8, 0.8)
    assert row["kappa"] == pytest.approx(cohen_kappa_score(h, j, labels=[0, 1, 2, 3]), abs=1e-12)
    assert row["qwk"] == pytest.approx(cohen_kappa_score(h, j, labels=[0, 1, 2, 3], weights="quadratic"))
    alpha = krippendorff.alpha(
        reliability_data=[h, j], level_of_measurement="ordinal", value_domain=[0, 1, 2, 3]
    )
    assert row["alpha"] == pytest.approx(alpha, abs=1e-12)
    assert row["scale"] == "graded"


def test_a_binary_judge_against_the_grades_binarised_at_2():
    judge = [0, 0, 1, 1, 1, 0, 1, 0, 1, 1]
    row = agreement_rows(PAIRS, {"b": labels(judge)}, {"b": "binary"}).iloc[0]
    human = [int(g >= 2) for g in GRADES]  # by hand: [0, 0, 1, 1, 1, 1, 0, 0, 1, 1]
    assert human == [0, 0, 1, 1, 1, 1, 0, 0, 1, 1]
    assert row["kappa"] == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
    # by hand: 8 of 10 agree (po 0.8); 6 relevant on each side (pe 0.6^2 + 0.4^2 = 0.52): 0.28 / 0.48
    assert row["kappa"] == pytest.approx(7 / 12, abs=1e-12)
    assert row["scale"].startswith("binary")


def test_pairwise_kappa_is_symmetric_with_the_human_grades_first():
    a, b = [0, 1, 2, 3, 3, 2, 1, 0, 2, 2], [1, 1, 2, 3, None, 2, 0, 0, 3, 3]
    m = pairwise_kappa(PAIRS, {"a": labels(a), "b": labels(b)})
    assert list(m.index) == ["human", "a", "b"] and np.allclose(m.to_numpy(), m.to_numpy().T, equal_nan=True)
    both = [i for i in range(10) if b[i] is not None]
    assert m.loc["a", "b"] == pytest.approx(cohen_kappa_score([a[i] for i in both], [b[i] for i in both]))
    assert m.loc["human", "a"] == pytest.approx(cohen_kappa_score(GRADES, a))
    assert m.loc["a", "a"] == pytest.approx(1.0)
    binary = pairwise_kappa(PAIRS, {"x": labels([0, 0, 1, 1, 1, 1, 0, 0, 1, 1])}, {"x": "binary"})
    assert binary.loc["human", "x"] == pytest.approx(1.0)  # the grades binarised at 2 are x's labels


def test_the_leaderboard_joins_the_ranking_correlations_and_sorts_by_kappa(tmp_path):
    rows = pd.DataFrame(
        [
            ["dl21", "low", "published", "src: m", "graded", 10, 10, 1.0, 0.1, 0.1, 0.1, 0.1, 3, 0],
            ["dl21", "high", "live", "live (local)", "graded", 10, 9, 0.9, 0.5, 0.5, 0.5, 0.5, 0, 0],
            [
                "llmjudge",
                "x",
                "published",
                "llmjudge-2024",
                "graded",
                5,
                5,
                1.0,
                np.nan,
                0.2,
                0.2,
                np.nan,
                0,
                2,
            ],
        ],
        columns=COLUMNS,
    )
    write_tsv(rows, tmp_path / "agreement.tsv")
    corr = pd.DataFrame(
        {
            "dataset": ["dl21"] * 3,
            "judge": ["low", "high", "low"],
            "reference": ["human", "human", "human"],
            "measure": ["nDCG@10", "nDCG@10", "P_rel_2_@5"],
            "kendall_tau": [0.3, 0.8, 0.9],
            "spearman": [0.4, 0.9, 0.95],
            "n_systems": [63, 63, 63],
        }
    )
    write_tsv(corr, tmp_path / "correlations.tsv")
    ppi = pd.DataFrame(
        [
            # dataset, judge, reference, measure, n, target, method, coverage, width
            ["dl21", "low", "human", "nDCG@10", 10, "systems", "ppi", 0.93, 0.20],
            ["dl21", "low", "human", "nDCG@10", 5, "systems", "ppi", 0.82, 0.24],
            ["dl21", "low", "human", "nDCG@10", 5, "systems", "human_only", 0.86, 0.31],
            ["dl21", "low", "human", "nDCG@10", 5, "systems", "judge_only", np.nan, np.nan],
            ["dl21", "low", "human", "nDCG@10", 5, "pairs", "ppi", 0.84, 0.21],
            ["dl21", "low", "human", "P_rel_2_@5", 5, "systems", "ppi", 0.5, 0.9],
            ["dl21", "low", "other", "nDCG@10", 5, "systems", "ppi", 0.1, 0.9],
        ],
        columns=["dataset", "judge", "reference", "measure", "n", "target", "method", "coverage", "width"],
    )
    write_tsv(ppi, tmp_path / "ppi.tsv")
    board = leaderboard(
        [str(tmp_path / "agreement.tsv")],
        [str(tmp_path / "correlations.tsv")],
        ["nDCG@10", "P_rel_2_@5"],
        [str(tmp_path / "ppi.tsv")],
    )
    assert list(board["judge"]) == ["high", "low", "x"]
    assert list(board["tau"].iloc[:2]) == [0.8, 0.3] and pd.isna(board["tau"].iloc[2])
    # every further measure in its own columns; the first measure named in `measure`
    low = board.set_index("judge").loc["low"]
    assert (low["tau:P_rel_2_@5"], low["rho:P_rel_2_@5"], low["measure"]) == (0.9, 0.95, "nDCG@10")
    assert pd.isna(board.set_index("judge").loc["high", "tau:P_rel_2_@5"])
    # PPI at the smallest n, systems, against the human qrels, on the first measure
    assert (low["ppi_n"], low["ppi_coverage"], low["ppi_width"], low["human_only_width"]) == (
        5,
        0.82,
        0.24,
        0.31,
    )
    assert board.set_index("judge")[["ppi_n", "ppi_width"]].loc[["high", "x"]].isna().all().all()
    assert int(board.loc[board["judge"] == "x", "out_of_scale"].iloc[0]) == 2
