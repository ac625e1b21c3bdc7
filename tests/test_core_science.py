"""The shared core's science, each against a reference no one here wrote: agreement metrics
against scikit-learn to the last bit, adjusted p-values by hand, the table rendering rules; and
the layering rules are tests/test_layout.py."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix, f1_score

from judgelab.analysis import render
from judgelab.analysis.agreement import (
    agreement,
    cohen_kappa,
    confusion,
    kappa_from_confusion,
    macro_f1,
    transitions,
)
from judgelab.analysis.stats import adjust_pvalues

PACKAGE = Path(__file__).resolve().parents[1] / "workflow" / "src" / "judgelab"


def _pairs(rng, n):
    y = rng.integers(0, 4, n)
    return y, np.where(rng.random(n) < 0.5, y, rng.integers(0, 4, n))


def test_kappa_and_macro_f1_equal_scikit_learn_bit_for_bit():
    """The one implementation (confusion-matrix based, vectorised) gives scikit-learn's floats
    exactly, for unweighted, linear and quadratic kappa and macro F1, single and stacked: 500
    random cases: every length 1-59, 7 of them NaN (chance agreement 1)."""
    rng = np.random.default_rng(0)
    stacked, singles = [], []
    for _ in range(500):
        y, yhat = _pairs(rng, int(rng.integers(1, 60)))
        for weights in (None, "linear", "quadratic"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = cohen_kappa_score(y, yhat, labels=[0, 1, 2, 3], weights=weights)
            got = cohen_kappa(y, yhat, weights=weights)
            assert got == want or (math.isnan(got) and math.isnan(want))
        assert macro_f1(y, yhat) == f1_score(y, yhat, labels=[0, 1, 2, 3], average="macro", zero_division=0)
        cm = confusion(y, yhat)
        stacked.append(cm)
        singles.append(float(kappa_from_confusion(cm, "quadratic")))
    vector = kappa_from_confusion(np.array(stacked), "quadratic")
    assert all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(vector, singles))


def test_transitions_equal_scikit_learn_and_count_the_missing():
    """The one label-pair counter (every study's confusion and transition matrix) gives
    scikit-learn's confusion matrix over the pairs both labelled, for integer, nullable and
    string labels and a second label set of its own; a missing second label is counted per row,
    a first label outside the set is not counted at all."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(0, 40))
        first = rng.integers(0, 4, n)
        second = [None if rng.random() < 0.25 else int(v) for v in rng.integers(0, 2, n)]
        counts, missing = transitions(first, pd.array(second, dtype="Int64"), [0, 1, 2, 3], [0, 1])
        both = [k for k, v in enumerate(second) if v is not None]
        if not both:  # scikit-learn refuses an empty input
            assert counts.sum() == 0
            continue
        want = confusion_matrix(first[both], [second[k] for k in both], labels=[0, 1, 2, 3])[:, :2]
        assert counts.tolist() == want.tolist()
        assert missing.tolist() == [
            sum(1 for f, s in zip(first, second) if f == g and s is None) for g in range(4)
        ]
    counts, missing = transitions(
        ["A", "N", "B", "B", "x", None], ["B", None, "B", "A", "A", "A"], ["A", "N", "B"]
    )
    assert counts.tolist() == [[0, 0, 1], [0, 0, 0], [1, 0, 1]]
    assert missing.tolist() == [0, 1, 0]
    with pytest.raises(ValueError, match="differ in length"):
        transitions([0, 1], [0])


def test_kappa_by_hand():
    # 10 pairs, binary: agree on 4 x (0,0) and 3 x (1,1), 2 x (0,1), 1 x (1,0)
    # p_o = 0.7; p_e = 0.6 * 0.5 + 0.4 * 0.5 = 0.5; kappa = (0.7 - 0.5) / 0.5 = 0.4
    first = [0] * 4 + [1] * 3 + [0, 0] + [1]
    second = [0] * 4 + [1] * 3 + [1, 1] + [0]
    assert cohen_kappa(first, second, [0, 1]) == pytest.approx(0.4)
    # one single label on both sides: 0 / 0 -> NaN; no pair -> NaN
    assert math.isnan(cohen_kappa([2, 2], [2, 2]))
    assert math.isnan(cohen_kappa([], []))
    assert all(math.isnan(v) for v in agreement([], []).values())


def test_adjusted_pvalues_by_hand():
    p = [0.01, 0.04, 0.03, np.nan]
    # Holm: sorted 0.01, 0.03, 0.04 times 3, 2, 1 = 0.03, 0.06, 0.04 -> monotone 0.03, 0.06, 0.06
    assert np.allclose(adjust_pvalues(p, "holm"), [0.03, 0.06, 0.06, np.nan], equal_nan=True)
    # BH: 0.01*3/1, 0.03*3/2, 0.04*3/3 = 0.03, 0.045, 0.04 -> step-up 0.03, 0.04, 0.04
    assert np.allclose(adjust_pvalues(p, "fdr_bh"), [0.03, 0.04, 0.04, np.nan], equal_nan=True)
    assert np.isnan(adjust_pvalues([np.nan], "holm")).all()
    # 5 tests: 4 x 0.01, 3 x 0.03 (carried up to the next), 5 x 0.005, capped at 1
    got = adjust_pvalues([0.01, 0.04, 0.03, 0.005, 0.5], "holm")
    assert np.allclose(got, [0.04, 0.09, 0.09, 0.025, 0.5])
    with pytest.raises(ValueError, match="unknown p-value adjustment"):
        adjust_pvalues([0.1], "bonferroni-ish")


def test_adjusted_pvalues_equal_statsmodels_bit_for_bit(monkeypatch):
    """Holm (computed here: statsmodels' runs a full garbage collection per call) and BH give
    statsmodels' ``multipletests`` floats exactly: families of 1-40 p-values, with ties and
    products above 1 (capped)."""
    import gc

    from statsmodels.stats.multitest import multipletests

    # the reference's collections (a third of a second each in a test process) change no value
    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)
    rng = np.random.default_rng(3)
    for _ in range(200):
        p = rng.random(int(rng.integers(1, 41))) ** 2
        p[rng.random(len(p)) < 0.2] = p[0]  # ties
        for method in ("holm", "fdr_bh"):
            assert adjust_pvalues(p, method).tolist() == multipletests(p, method=method)[1].tolist()


def test_missing_values_are_one_rule_everywhere():
    for v in (None, pd.NA, float("nan"), np.float64("nan"), float("inf"), -np.inf):
        assert render.fmt(v) == render.MISSING == "n/a"
    assert render.fmt(0.5) == "0.500" and render.fmt(np.float32(2), 1) == "2.0" and render.fmt(3, 0) == "3"
    df = pd.DataFrame({"judge": ["a|b"], "kappa": [float("nan")], "n": [3]})
    assert render.markdown_frame(df) == "| judge | kappa | n |\n|---|---|---|\n| a\\|b | n/a | 3 |\n"


def test_table_formats():
    assert render.tex_escape("w_cot 50% & #1 κ → >") == r"w\_cot 50\% \& \#1 $\kappa$ $\to$ $>$"
    md = render.markdown_table(["id", "value"], [["x", "1.0"]], ["l", "r"])
    assert md.splitlines()[1] == "|---|---:|"
    tex = render.latex_table("lr", ["id & " + render.multicolumn(1, "v")], [["x", "1.0"]])
    assert tex.splitlines() == [
        r"\begin{tabular}{lr}",
        r"\toprule",
        r"id & \multicolumn{1}{c}{v} \\",
        r"\midrule",
        r"x & 1.0 \\",
        r"\bottomrule",
        r"\end{tabular}",
    ]
    page = render.html_table(pd.DataFrame({"a": [np.nan]}), "Holm's <test>")
    assert page.startswith("<p>Holm's &lt;test&gt;</p>\n<table") and "<td></td>" in page
    rows = pd.DataFrame({"d": ["x", "x", "y"], "m": ["a", "b", "b"]})
    assert [s for s, _ in render.id_cells(rows, ["d", "m"])] == [["x", "a"], ["", "b"], ["y", "b"]]
    assert [s for s, _ in render.id_cells(rows, ["d", "m"], nested=False)] == [
        ["x", "a"],
        ["x", "b"],
        ["y", "b"],
    ]


def test_every_agreement_row_has_krippendorffs_alpha():
    """The one agreement row (PERAS metrics, imported judges, ranking's pool, the classifiers'
    trials) carries Krippendorff's ordinal alpha beside kappa: the krippendorff package's value."""
    import krippendorff

    rng = np.random.default_rng(3)
    for _ in range(20):
        y, yhat = _pairs(rng, 30)
        want = krippendorff.alpha(
            reliability_data=np.vstack([y, yhat]).astype(float),
            value_domain=[0.0, 1.0, 2.0, 3.0],
            level_of_measurement="ordinal",
        )
        assert agreement(y, yhat)["alpha"] == pytest.approx(want, abs=1e-12)
    assert math.isnan(agreement([1, 1, 1], [1, 1, 1])["alpha"])  # one label: alpha undefined
