"""Statistics wrappers (evaluator as the unit) against hand-computed values and direct scipy /
statsmodels calls, and the analyses over a constructed accuracy table."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.anova import AnovaRM

from judgelab.stats import adjust_pvalues
from judgelab.studies.simulation import stats as st


def test_wilcoxon_exact_small_sample_by_hand():
    # five positive differences: the exact two-sided p is 2 / 2^5 = 0.0625, W = 0
    res = st.wilcoxon([2, 3, 4, 5, 6], [1, 1, 1, 1, 1])
    assert res["p_wilcoxon"] == pytest.approx(0.0625) and res["W"] == 0 and res["delta"] == 3.0
    x, y = [0.61, 0.42, 0.55, 0.48, 0.7, 0.39, 0.52], [0.5, 0.45, 0.5, 0.41, 0.58, 0.4, 0.52]
    ref = sps.wilcoxon(x, y)
    res = st.wilcoxon(x, y)
    assert (res["W"], res["p_wilcoxon"], res["n"]) == (ref.statistic, pytest.approx(ref.pvalue), 7)


def test_wilcoxon_degenerate_and_missing_pairs():
    res = st.wilcoxon([0.5, 0.6], [0.5, 0.6])
    assert math.isnan(res["p_wilcoxon"]) and res["note"] == "all differences zero"
    res = st.wilcoxon([0.5, np.nan, 0.7, 0.9], [0.4, 0.3, 0.5, 0.6])
    assert res["n"] == 3 and res["p_wilcoxon"] == pytest.approx(0.25)  # 3 positive: 2/8


def test_paired_t_and_cohens_d_by_hand():
    x, y = [1, 2, 3, 4], [0, 0, 1, 1]
    # differences 1, 2, 2, 3: mean 2, SD sqrt(2/3); t = 2 / (SD / 2) = 4.899, d = 2 / SD = 2.449
    res = st.paired_t(x, y)
    assert res["t"] == pytest.approx(4.898979, rel=1e-6) and res["df"] == 3
    assert res["p_t"] == pytest.approx(sps.ttest_rel(x, y).pvalue)
    assert st.cohens_d_paired(x, y) == pytest.approx(2.449490, rel=1e-6)
    assert math.isnan(st.paired_t([1, 2], [0, 1])["t"])  # constant differences


def test_one_sample_against_chance():
    x = [0.45, 0.52, 0.38, 0.61, 0.49]
    res = st.one_sample(x, 1 / 3)
    ref = sps.ttest_1samp(x, 1 / 3)
    assert res["t"] == pytest.approx(ref.statistic) and res["p_t"] == pytest.approx(ref.pvalue)
    assert res["p_wilcoxon"] == pytest.approx(0.0625)  # all five above 1/3


def test_friedman_by_hand():
    # three subjects ranking three conditions 1 < 2 < 3: chi2 = 12/(3*3*4) * (9+36+81) - 36 = 6,
    # p = exp(-6/2) (chi-square with 2 df)
    m = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.2, 0.3, 0.9]])
    res = st.friedman(m)
    assert res["statistic"] == pytest.approx(6.0) and res["p"] == pytest.approx(math.exp(-3))
    assert res["df"] == 2 and res["n"] == 3
    m2 = np.array([[0.1, 0.3, 0.2], [0.5, 0.4, 0.6], [0.2, 0.2, 0.9], [0.7, 0.1, 0.3]])
    ref = sps.friedmanchisquare(*m2.T)
    assert st.friedman(m2)["p"] == pytest.approx(ref.pvalue)
    assert st.friedman(m[:, :2])["note"] == "needs at least 3 conditions"
    assert st.friedman(np.ones((3, 3)))["note"] == "every subject is constant across conditions"
    with_nan = np.vstack([m, [np.nan, 1, 2]])
    assert st.friedman(with_nan)["n"] == 3


def test_rm_anova_by_hand_and_against_statsmodels():
    # one factor with two levels: F = t^2 of the paired t test; differences 1, 2, 0 -> t = sqrt(3)
    d = pd.DataFrame(
        {
            "evaluator": ["s1", "s1", "s2", "s2", "s3", "s3"],
            "shots": [1, 2] * 3,
            "accuracy": [1, 2, 2, 4, 3, 3],
            "model": ["m"] * 6,
        }
    )
    res = st.rm_anova(d, "accuracy", "evaluator", ["shots", "model"])
    assert list(res["effect"]) == ["shots"]
    assert res.loc[0, "F"] == pytest.approx(3.0) and (res.loc[0, "num_df"], res.loc[0, "den_df"]) == (1, 2)
    assert res.loc[0, "p"] == pytest.approx(sps.ttest_rel([2, 4, 3], [1, 2, 3]).pvalue)
    rng = np.random.default_rng(0)
    rows = [
        (f"s{s}", t, k, 0.4 + 0.05 * (t == "J+RR") + 0.01 * k + rng.normal(0, 0.03))
        for s in range(6)
        for t in ("J", "J+RR")
        for k in (1, 2, 4)
    ]
    df = pd.DataFrame(rows, columns=["evaluator", "demo_type", "shots", "accuracy"])
    ours = st.rm_anova(df, "accuracy", "evaluator", ["demo_type", "shots"]).set_index("effect")
    ref = (
        AnovaRM(df.assign(shots=df.shots.astype(str)), "accuracy", "evaluator", within=["demo_type", "shots"])
        .fit()
        .anova_table
    )
    assert ours.loc["demo_type:shots", "F"] == pytest.approx(ref.loc["demo_type:shots", "F Value"])
    assert ours.loc["demo_type", "p"] == pytest.approx(ref.loc["demo_type", "Pr > F"])
    flat = d.assign(accuracy=[1, 1, 2, 2, 3, 3])
    assert (
        st.rm_anova(flat, "accuracy", "evaluator", ["shots"]).loc[0, "note"] == "no within-subject variation"
    )


# --------------------------------------------------------------------------------------------
# Analyses


def accuracy_table():
    """Four evaluators; Base Judge and PersonaJudge cells J / J+RR x 1 / 2 / 4 shots of model m."""
    base = {"e1": 0.40, "e2": 0.50, "e3": 0.45, "e4": 0.55}
    gain = {
        ("J", 1): 0.00,
        ("J", 2): 0.02,
        ("J", 4): 0.05,
        ("J+RR", 1): 0.03,
        ("J+RR", 2): 0.06,
        ("J+RR", 4): 0.10,
    }
    wobble = {"e1": 0.01, "e2": -0.01, "e3": 0.02, "e4": 0.0}
    rows = [("base_judge", "m", "base", 0, ev, b) for ev, b in base.items()]
    rows += [
        ("personajudge", "m", t, k, ev, base[ev] + g + wobble[ev] * k * (2 if t == "J+RR" else 1))
        for (t, k), g in gain.items()
        for ev in base
    ]
    rows += [("evaluator_majority", "-", "-", 0, ev, 0.5) for ev in base]
    return pd.DataFrame(rows, columns=["method", "model", "demo_type", "shots", "evaluator", "accuracy"])


def test_versus_base_and_all_pairs():
    acc = accuracy_table()
    vb = st.versus_base(acc).set_index(["demo_type", "shots"])
    assert len(vb) == 6
    # J+RR 4-shot: gains 0.10 + 2 * wobble * 4 = 0.18, 0.02, 0.26, 0.10; all positive -> p = 2/16
    assert vb.loc[("J+RR", 4), "delta"] == pytest.approx(0.14)
    assert vb.loc[("J+RR", 4), "p_wilcoxon"] == pytest.approx(0.125)
    ok = vb["p_wilcoxon"].notna()
    assert np.allclose(vb.loc[ok, "p_bh"], adjust_pvalues(vb.loc[ok, "p_wilcoxon"], "fdr_bh"))
    ap = st.all_pairs(acc)
    assert len(ap) == 15 and ap["p_holm"].ge(ap["p_wilcoxon"]).all()


def test_factor_and_pairwise_tests():
    acc = accuracy_table()
    f = st.factor_tests(acc).set_index(["family", "factor"])
    pj = acc[acc.method == "personajudge"]
    wide = pj.pivot_table(index="evaluator", columns=["demo_type", "shots"], values="accuracy")
    assert f.loc[("omnibus", "cells"), "p"] == pytest.approx(sps.friedmanchisquare(*wide.to_numpy().T).pvalue)
    marg = pj.groupby(["evaluator", "shots"])["accuracy"].mean().unstack()
    assert f.loc[("factor", "shots"), "statistic"] == pytest.approx(
        sps.friedmanchisquare(*marg.to_numpy().T).statistic
    )
    assert f.loc[("factor", "demo_type"), "note"] == "needs at least 3 conditions"
    assert ("rm_anova", "demo_type") in f.index and ("rm_anova", "demo_type:shots") in f.index
    pw = st.pairwise_tests(acc)
    shots = pw[pw.factor == "shots"]
    assert list(zip(shots.level_x, shots.level_y)) == [("1", "2"), ("1", "4"), ("2", "4")]
    assert np.allclose(shots["p_holm"], adjust_pvalues(shots["p_wilcoxon"], "holm"))
    dt = pw[pw.factor == "demo_type"].iloc[0]
    x = pj[pj.demo_type == "J"].groupby("evaluator")["accuracy"].mean()
    y = pj[pj.demo_type == "J+RR"].groupby("evaluator")["accuracy"].mean()
    assert dt["delta"] == pytest.approx((x - y).mean()) and dt["p_t"] == pytest.approx(
        sps.ttest_rel(x, y).pvalue
    )


def test_alignment_and_control_tests():
    acc = accuracy_table()
    al = st.alignment_tests(acc, acc).set_index("contrast")
    pj = acc[acc.method == "personajudge"].groupby("evaluator")["accuracy"].mean()
    assert al.loc["PersonaJudge vs chance (1/3)", "p_t"] == pytest.approx(sps.ttest_1samp(pj, 1 / 3).pvalue)
    assert al.loc["PersonaJudge vs evaluator_majority", "delta"] == pytest.approx(pj.mean() - 0.5)
    assert "PersonaJudge vs base_judge (m)" in al.index
    control = pd.DataFrame(
        [
            ("m", "J", k, ev, 0.5 + 0.01 * k + 0.01 * i, 0.5)
            for k in (1, 2)
            for i, ev in enumerate(["e1", "e2", "e3"])
        ],
        columns=["model", "demo_type", "shots", "evaluator", "own_accuracy", "control_accuracy"],
    )
    ct = st.control_tests(control).set_index(["factor", "level"])
    assert ct.loc[("all", "all"), "evaluators_ahead"] == 3
    assert ct.loc[("shots", "2"), "delta"] == pytest.approx(0.03)
