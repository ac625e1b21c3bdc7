"""Statistics wrappers (evaluator as the unit) against hand-computed values and direct scipy /
statsmodels calls, and the analyses over a constructed accuracy table."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.anova import AnovaRM

from judgelab.analysis import stats as core
from judgelab.analysis.stats import adjust_pvalues
from judgelab.studies.simulation import stats as st


def test_wilcoxon_exact_small_sample_by_hand():
    # five positive differences: the exact two-sided p is 2 / 2^5 = 0.0625, W = 0
    res = core.wilcoxon([2, 3, 4, 5, 6], [1, 1, 1, 1, 1])
    assert res["p"] == pytest.approx(0.0625) and res["statistic"] == 0 and res["delta"] == 3.0
    assert res["min_p"] == pytest.approx(0.0625)  # the data are as extreme as five can be
    x, y = [0.61, 0.42, 0.55, 0.48, 0.7, 0.39, 0.52], [0.5, 0.45, 0.5, 0.41, 0.58, 0.4, 0.52]
    ref = sps.wilcoxon(x, y)
    res = core.wilcoxon(x, y)
    assert (res["statistic"], res["p"], res["n"]) == (ref.statistic, pytest.approx(ref.pvalue), 7)
    # one zero difference is dropped: the smallest p of 6 non-zero differences is 2 / 2^6
    assert res["n_discordant"] == 6 and res["min_p"] == pytest.approx(2 / 2**6)
    assert [core.min_p_wilcoxon(n) for n in (1, 3, 4, 5)] == pytest.approx([1.0, 0.25, 0.125, 0.0625])


def test_wilcoxon_degenerate_and_missing_pairs():
    res = core.wilcoxon([0.5, 0.6], [0.5, 0.6])
    assert math.isnan(res["p"]) and res["note"] == "all differences zero"
    res = core.wilcoxon([0.5, np.nan, 0.7, 0.9], [0.4, 0.3, 0.5, 0.6])
    assert res["n"] == 3 and res["p"] == pytest.approx(0.25)  # 3 positive: 2/8
    assert core.reading(res["p"], res["min_p"], res["n"], 0.05) == (
        "cannot reject at n = 3 (smallest attainable p 0.25)"
    )


def test_paired_t_and_cohens_d_by_hand():
    x, y = [1, 2, 3, 4], [0, 0, 1, 1]
    # differences 1, 2, 2, 3: mean 2, SD sqrt(2/3); t = 2 / (SD / 2) = 4.899, d = 2 / SD = 2.449
    res = core.paired_t(x, y)
    assert res["statistic"] == pytest.approx(4.898979, rel=1e-6) and res["df"] == 3
    assert res["p"] == pytest.approx(sps.ttest_rel(x, y).pvalue)
    assert core.cohens_d_paired(x, y) == pytest.approx(2.449490, rel=1e-6)
    assert math.isnan(core.paired_t([1, 2, 3, 4], [0, 1, 2, 3])["statistic"])  # constant differences
    # three pairs (PandaLM's three annotators): t at df = 2 is not given
    three = core.paired_t([0.5, 0.6, 0.7], [0.4, 0.41, 0.45])
    assert math.isnan(three["p"]) and three["note"] == "fewer than 4 pairs: no p-value"


def test_one_sample_against_chance():
    x = [0.45, 0.52, 0.38, 0.61, 0.49]
    w, t = core.one_sample(x, 1 / 3)
    ref = sps.ttest_1samp(x, 1 / 3)
    assert t["statistic"] == pytest.approx(ref.statistic) and t["p"] == pytest.approx(ref.pvalue)
    assert w["p"] == pytest.approx(0.0625) and w["test"] == "Wilcoxon signed-rank"  # all five above 1/3


def test_friedman_by_hand():
    # three subjects ranking three conditions 1 < 2 < 3: chi2 = 12/(3*3*4) * (9+36+81) - 36 = 6,
    # p = exp(-6/2) (chi-square with 2 df)
    m = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.2, 0.3, 0.9]])
    res = core.friedman(m)
    assert res["statistic"] == pytest.approx(6.0) and res["p"] == pytest.approx(math.exp(-3))
    assert res["df"] == 2 and res["n"] == 3
    m2 = np.array([[0.1, 0.3, 0.2], [0.5, 0.4, 0.6], [0.2, 0.2, 0.9], [0.7, 0.1, 0.3]])
    ref = sps.friedmanchisquare(*m2.T)
    assert core.friedman(m2)["p"] == pytest.approx(ref.pvalue)
    assert core.friedman(m[:, :2])["note"] == "needs at least 3 conditions"
    assert core.friedman(np.ones((3, 3)))["note"] == "every subject is constant across conditions"
    with_nan = np.vstack([m, [np.nan, 1, 2]])
    assert core.friedman(with_nan)["n"] == 3


def test_rm_anova_by_hand_and_against_statsmodels():
    # one factor with two levels: F = t^2 of the paired t test
    d = pd.DataFrame(
        {
            "evaluator": ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4"],
            "shots": [1, 2] * 4,
            "accuracy": [1, 2, 2, 4, 3, 3, 2, 3],
            "model": ["m"] * 8,
        }
    )
    res = core.rm_anova(d, "accuracy", "evaluator", ["shots", "model"])
    assert list(res["effect"]) == ["shots"]
    t = sps.ttest_rel([2, 4, 3, 3], [1, 2, 3, 2])
    assert res.loc[0, "F"] == pytest.approx(t.statistic**2) and (
        res.loc[0, "num_df"],
        res.loc[0, "den_df"],
    ) == (1, 3)
    assert res.loc[0, "p"] == pytest.approx(t.pvalue)
    # three subjects: no p (a parametric test needs 4)
    three = core.rm_anova(d[d.evaluator != "s4"], "accuracy", "evaluator", ["shots"])
    assert math.isnan(three.loc[0, "p"]) and three.loc[0, "note"].startswith("fewer than 4 complete subjects")
    rng = np.random.default_rng(0)
    rows = [
        (f"s{s}", t, k, 0.4 + 0.05 * (t == "J+RR") + 0.01 * k + rng.normal(0, 0.03))
        for s in range(6)
        for t in ("J", "J+RR")
        for k in (1, 2, 4)
    ]
    df = pd.DataFrame(rows, columns=["evaluator", "demo_type", "shots", "accuracy"])
    ours = core.rm_anova(df, "accuracy", "evaluator", ["demo_type", "shots"]).set_index("effect")
    ref = (
        AnovaRM(df.assign(shots=df.shots.astype(str)), "accuracy", "evaluator", within=["demo_type", "shots"])
        .fit()
        .anova_table
    )
    assert ours.loc["demo_type:shots", "F"] == pytest.approx(ref.loc["demo_type:shots", "F Value"])
    assert ours.loc["demo_type", "p"] == pytest.approx(ref.loc["demo_type", "Pr > F"])
    flat = d.assign(accuracy=[1, 1, 2, 2, 3, 3, 4, 4])
    assert (
        core.rm_anova(flat, "accuracy", "evaluator", ["shots"]).loc[0, "note"]
        == "no within-subject variation"
    )


# --------------------------------------------------------------------------------------------
# Item level


def test_sign_flip_test_against_scipy_permutation_test_and_by_hand():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2, 14).astype(float)
    y = rng.integers(0, 2, 14).astype(float)
    x[:3], y[:3] = 1, 0  # some discordance for sure
    # one stratum: the statistic is the mean difference; scipy's exact paired permutation test
    ours = core.sign_flip_test(x - y, ["e"] * 14)
    ref = sps.permutation_test(
        (x, y), lambda a, b: np.mean(a - b), permutation_type="samples", n_resamples=np.inf
    )
    assert ours["p"] == pytest.approx(ref.pvalue) and ours["note"].startswith("exact")
    m = int(np.sum(x != y))
    assert ours["n_discordant"] == m and ours["min_p"] == pytest.approx(2 / 2**m)
    # two strata of 1 and 2 items, differences +1 | +1, -1: weights 1/2 | 1/4, 1/4, T = 0.5;
    # the 8 sign patterns give |T| = 0.5, 0, 1, 0.5 (x2 by symmetry): |T| >= 0.5 in 6 of 8
    res = core.sign_flip_test([1, 1, -1], ["a", "b", "b"])
    assert res["statistic"] == pytest.approx(0.5) and res["p"] == pytest.approx(6 / 8)
    # above EXACT_MAX discordant items the p is drawn, close to the exact one
    d = np.r_[np.ones(13), -np.ones(5)]
    exact = sps.binomtest(13, 18).pvalue  # one stratum, +-1 differences: the sign test
    drawn = core.sign_flip_test(d, ["e"] * 18, permutations=20_000, seed=1)
    assert drawn["p"] == pytest.approx(exact, abs=0.01) and drawn["min_p"] == pytest.approx(1 / 20_001)
    assert core.sign_flip_test([0, 0], ["e", "e"])["p"] == 1.0


def test_mcnemar_and_binomial_by_hand():
    x = [1] * 8 + [0] * 1 + [1] * 5 + [0] * 6
    y = [0] * 8 + [1] * 1 + [1] * 5 + [0] * 6
    res = core.mcnemar_test(x, y)
    # discordant 8 vs 1: exact two-sided p = 2 P(X <= 1), X ~ Bin(9, 1/2) = 2 * 10 / 512
    assert res["n"] == 20 and res["n_discordant"] == 9 and res["p"] == pytest.approx(20 / 512)
    assert res["min_p"] == pytest.approx(2 / 2**9)
    assert core.mcnemar_test([1, 0], [1, 0])["p"] == 1.0
    b = core.binomial_chance([1] * 30 + [0] * 30, st.CHANCE)
    assert b["p"] == pytest.approx(sps.binomtest(30, 60, 1 / 3).pvalue) and b["mean_x"] == 0.5
    assert b["min_p"] == pytest.approx((1 / 3) ** 60)


def test_block_permutation_with_two_conditions_is_the_sign_flip_test():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 2, (40, 2)).astype(float)
    x[:8, 0], x[:8, 1] = 1, 0
    strata = np.repeat(["a", "b", "c", "d"], 10)
    omni = core.block_permutation_test(x, strata, permutations=20_000, seed=2)
    flip = core.sign_flip_test(x[:, 0] - x[:, 1], strata, permutations=20_000, seed=3)
    assert omni["p"] == pytest.approx(flip["p"], abs=0.01)
    const = core.block_permutation_test(np.ones((5, 3)), ["a"] * 5)
    assert const["p"] == 1.0 and const["note"] == "every judgment constant across conditions"


def test_clusters_flip_together_and_bound_what_a_test_can_reject():
    # two clusters of three judgments each, all differences +1: only 2 clusters move, so the
    # smallest p is 2 / 2^2 = 0.5 however many judgments they hold (patterns ++ and -- of 4)
    res = core.sign_flip_test([1, 1, 1, 1, 1, 1], ["a", "b", "c"] * 2, ["g1"] * 3 + ["g2"] * 3)
    assert (res["clusters"], res["p"], res["min_p"]) == (2, pytest.approx(0.5), pytest.approx(0.5))
    assert core.reading(res["p"], res["min_p"], res["n"], 0.05, res["clusters"]) == (
        "cannot reject at n = 6 in 2 clusters (smallest attainable p 0.5)"
    )
    alone = core.sign_flip_test([1, 1, 1, 1, 1, 1], ["a", "b", "c"] * 2)
    assert alone["p"] == pytest.approx(2 / 2**6)
    # clusters of unequal weight: strata a (1 judgment) and b (2): weights 1/2, 1/4, 1/4; clusters
    # {a1, b1} (+1, +1 -> 3/4) and {b2} (-1 -> -1/4): T = 1/2; sign patterns: +-(3/4 - 1/4),
    # +-(3/4 + 1/4): |T| >= 1/2 in all 4
    res = core.sign_flip_test([1, 1, -1], ["a", "b", "b"], ["c1", "c1", "c2"])
    assert res["statistic"] == pytest.approx(0.5) and res["p"] == pytest.approx(1.0)


def test_guess_test_is_the_binomial_with_one_guess_a_judgment_and_wider_with_shared_guesses():
    rng = np.random.default_rng(8)
    gold = np.tile(rng.choice(list("ANB"), 30), 3)  # three evaluators who agree on every item
    correct = (rng.random(90) < 0.5).astype(float)  # 45-ish right of 90: above 1/3
    strata = np.repeat(["e1", "e2", "e3"], 30)
    one = core.guess_test(correct, gold, strata, draws=40_000, seed=1, p0=st.CHANCE)
    ref = sps.binomtest(int(correct.sum()), 90, 1 / 3).pvalue
    assert one["p"] == pytest.approx(ref, abs=0.004 + 0.15 * ref)
    # the same judgments where the three evaluators' judgments of an item share one guess (the
    # Base Judge): 30 guesses scored thrice, not 90 - a wider null, a larger p
    shared = core.guess_test(
        correct, gold, strata, np.tile(np.arange(30), 3), draws=40_000, seed=1, p0=st.CHANCE
    )
    assert shared["clusters"] == 30 and shared["p"] > one["p"]


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


def one(df, **kw):
    sel = df
    for k, v in kw.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, (kw, len(sel))
    return sel.iloc[0]


def test_versus_base_and_all_pairs():
    acc = accuracy_table()
    vb = st.versus_base(acc, metric="accuracy", alpha=0.05, seed=0)
    w = vb[vb.test == "Wilcoxon signed-rank"].set_index(["demo_type", "shots"])
    assert len(w) == 6 and set(vb["test"]) == {"Wilcoxon signed-rank", "paired t"}  # no items given
    # J+RR 4-shot: gains 0.10 + 2 * wobble * 4 = 0.18, 0.02, 0.26, 0.10; all positive -> p = 2/16
    assert w.loc[("J+RR", 4), "delta"] == pytest.approx(0.14)
    assert w.loc[("J+RR", 4), "p"] == pytest.approx(0.125) and w.loc[("J+RR", 4), "min_p"] == 0.125
    ok = w["p"].notna()
    assert np.allclose(w.loc[ok, "p_bh"], adjust_pvalues(w.loc[ok, "p"], "fdr_bh"))
    assert (w["min_p_holm"] == np.minimum(1, 6 * w["min_p"])).all()
    ap = st.all_pairs(acc, metric="accuracy", alpha=0.05)
    assert len(ap) == 15 and ap["p_holm"].ge(ap["p"]).all()


def test_factor_and_pairwise_tests():
    acc = accuracy_table()
    f = st.factor_tests(acc, metric="accuracy", seed=0)
    pj = acc[acc.method == "personajudge"]
    wide = pj.pivot_table(index="evaluator", columns=["demo_type", "shots"], values="accuracy")
    omni = one(f, family="omnibus", factor="cells", unit="evaluator")
    assert omni["p"] == pytest.approx(sps.friedmanchisquare(*wide.to_numpy().T).pvalue)
    assert omni["min_p"] == pytest.approx(sps.chi2.sf(4 * 5, 5))  # 4 subjects ranking 6 cells alike
    marg = pj.groupby(["evaluator", "shots"])["accuracy"].mean().unstack()
    assert one(f, family="factor", factor="shots")["statistic"] == pytest.approx(
        sps.friedmanchisquare(*marg.to_numpy().T).statistic
    )
    assert one(f, family="factor", factor="demo_type")["note"] == "needs at least 3 conditions"
    assert {"demo_type", "demo_type:shots"} <= set(f.loc[f.family == "rm_anova", "factor"])
    pw = st.pairwise_tests(acc, metric="accuracy", alpha=0.05, seed=0)
    shots = pw[(pw.factor == "shots") & (pw.test == "Wilcoxon signed-rank")]
    assert list(zip(shots.level_x, shots.level_y)) == [("1", "2"), ("1", "4"), ("2", "4")]
    assert np.allclose(shots["p_holm"], adjust_pvalues(shots["p"], "holm"))
    dt = one(pw, factor="demo_type", test="paired t")
    x = pj[pj.demo_type == "J"].groupby("evaluator")["accuracy"].mean()
    y = pj[pj.demo_type == "J+RR"].groupby("evaluator")["accuracy"].mean()
    assert dt["delta"] == pytest.approx((x - y).mean()) and dt["p"] == pytest.approx(
        sps.ttest_rel(x, y).pvalue
    )


def test_chance_alignment_and_control_tests():
    acc = accuracy_table()
    ch = st.chance_tests(acc, metric="accuracy", alpha=0.05, seed=0)
    pj = acc[acc.method == "personajudge"]
    per = pj.groupby("evaluator")["accuracy"].mean()
    assert one(ch, method="personajudge", factor="all", test="one-sample t")["p"] == pytest.approx(
        sps.ttest_1samp(per, 1 / 3).pvalue
    )
    # at every level of every factor, and each Base Judge
    levels = set(zip(ch["factor"], ch["level"]))
    assert levels >= {
        ("demo_type", "J"),
        ("demo_type", "J+RR"),
        ("shots", "1"),
        ("shots", "4"),
        ("model", "m"),
    }
    j_rr = pj[pj.demo_type == "J+RR"].groupby("evaluator")["accuracy"].mean()
    assert one(ch, method="personajudge", factor="demo_type", level="J+RR", test="one-sample t")[
        "p"
    ] == pytest.approx(sps.ttest_1samp(j_rr, 1 / 3).pvalue)
    assert len(ch[ch.method == "base_judge"]) == 2
    al = st.alignment_tests(acc, acc, metric="accuracy", seed=0)
    assert one(al, contrast="PersonaJudge vs evaluator_majority", test="paired t")["delta"] == pytest.approx(
        per.mean() - 0.5
    )
    assert "PersonaJudge vs base_judge (m)" in set(al["contrast"])
    control = pd.DataFrame(
        [
            ("m", "J", k, ev, 0.5 + 0.01 * k + 0.01 * i, 0.5)
            for k in (1, 2)
            for i, ev in enumerate(["e1", "e2", "e3"])
        ],
        columns=["model", "demo_type", "shots", "evaluator", "own_accuracy", "control_accuracy"],
    )
    ct = st.control_tests(control, seed=0)
    assert one(ct, factor="all", test="Wilcoxon signed-rank")["evaluators_ahead"] == 3
    assert one(ct, factor="shots", level="2", test="Wilcoxon signed-rank")["delta"] == pytest.approx(0.03)


# --------------------------------------------------------------------------------------------
# What a test can say at n = 3 (the must-show of issue 19)


def three_evaluators(seed=7, n_items=60, p_cell=0.75, p_base=0.40):
    """Three evaluators (PandaLM's size) x 60 shared validation items: a PersonaJudge cell right on
    about 75% of the judgments, the Base Judge on about 40%."""
    rng = np.random.default_rng(seed)
    rows = []
    for ev in ("annotator1", "annotator2", "annotator3"):
        for i in range(n_items):
            rows.append(("personajudge", "m", "J", 4, ev, f"i{i}", float(rng.random() < p_cell)))
            rows.append(("base_judge", "m", "base", 0, ev, f"i{i}", float(rng.random() < p_base)))
    items = pd.DataFrame(
        rows, columns=["method", "model", "demo_type", "shots", "evaluator", "item", "correct"]
    )
    # every item its own context: the study's default clusters (leakage groups) are the items,
    # each with the three evaluators' judgments of it
    items["cluster"] = items["item"]
    acc = (
        items.groupby(["method", "model", "demo_type", "shots", "evaluator"])["correct"]
        .mean()
        .rename("accuracy")
        .reset_index()
    )
    return acc, items


def test_at_three_evaluators_the_evaluator_level_test_cannot_reject_and_the_item_level_test_does():
    from judgelab.studies.simulation.report import stats_report

    acc, items = three_evaluators()
    gains = acc.pivot_table(index="evaluator", columns="method", values="accuracy")
    assert (gains["personajudge"] > gains["base_judge"]).all()  # every evaluator gains
    vb = core.add_reading(
        st.versus_base(acc, items, metric="accuracy", alpha=0.05, permutations=10_000, seed=0), 0.05
    )
    w = one(vb, test="Wilcoxon signed-rank")
    # all three differences positive: the exact two-sided Wilcoxon p is 2 / 2^3 = 0.25, as small
    # as three evaluators allow - no data on three evaluators can reject at alpha 0.05
    assert (w["n"], w["p"], w["min_p"]) == (3, pytest.approx(0.25), pytest.approx(0.25))
    assert w["reading"] == "cannot reject at n = 3 (smallest attainable p 0.25)"
    t = one(vb, test="paired t")
    assert math.isnan(t["p"]) and t["note"] == "fewer than 4 pairs: no p-value"
    # the same predictions judgment by judgment: 180 paired judgments, the evaluator a stratum
    perm = one(vb, test="stratified permutation")
    mcn = one(vb, test="McNemar exact")
    assert perm["n"] == mcn["n"] == 180 and perm["strata"] == 3 and perm["clusters"] == 60
    assert perm["delta"] == pytest.approx(w["delta"])  # the same statistic: the evaluator mean
    assert perm["p"] < 0.001 and mcn["p"] < 0.001 and perm["reading"] == mcn["reading"] == "p < 0.05"
    ref = sps.binomtest(int(mcn["statistic"]), int(mcn["n_discordant"])).pvalue  # McNemar = sign test
    assert mcn["p"] == pytest.approx(ref)
    # the table's wording
    table = stats_report(vb, 0.05).set_index("test")
    assert table.loc["Wilcoxon signed-rank", "p"] == "cannot reject at n = 3"
    assert table.loc["Wilcoxon signed-rank", "p_holm"] == "cannot reject at n = 3"
    assert table.loc["Wilcoxon signed-rank", "p_bh"] == "cannot reject at n = 3"
    assert table.loc["paired t", "p"] == "n/a"
    assert (
        table.loc["stratified permutation", "p"] == "< 0.001" and table.loc["McNemar exact", "p"] == "< 0.001"
    )
