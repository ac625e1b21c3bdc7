"""judgelab.studies.ranking.correlation against hand-computed cases (and the ``rbo`` package where
it is installed)."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgelab import schema
from judgelab.analysis.stats import paired_p
from judgelab.errors import InputError
from judgelab.studies.ranking.correlation import (
    CORRELATION_KEYS,
    align,
    bootstrap_tau,
    bootstrap_taus,
    correlations,
    kendall_tau,
    pair_decisions,
    ranking_order,
    rbo,
    significance_agreement,
    spearman,
    tau_ap,
    tau_interval,
    topic_matrix,
    topk_tau,
)
from judgelab.studies.ranking.settings import CorrelationSettings

ROOT = Path(__file__).resolve().parents[2]


def shared_folder() -> Path:
    """The shared real data: ``ROOT.parent/shared/data``, else ``$JUDGELAB_SHARED``; skip if neither."""
    for folder in (ROOT.parent / "shared" / "data", os.environ.get("JUDGELAB_SHARED")):
        if folder and Path(folder).is_dir():
            return Path(folder)
    pytest.skip(f"no shared data: {ROOT.parent / 'shared' / 'data'} is absent and JUDGELAB_SHARED is unset")


def wide(columns: dict[str, list[float]]) -> pd.DataFrame:
    """A topic x run matrix, topics t1, t2, ..."""
    n = len(next(iter(columns.values())))
    return pd.DataFrame(columns, index=[f"t{i + 1}" for i in range(n)])


# --- Kendall, Spearman --------------------------------------------------------------------------


def test_kendall_and_spearman_by_hand():
    # one discordant pair (2, 3) of 6: tau = (5 - 1) / 6; sum d^2 = 2: rho = 1 - 6 * 2 / (4 * 15)
    assert kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    # tau-b with a tie in x only: C = 5, D = 0, one pair tied in x: 5 / sqrt(6 * 5)
    assert kendall_tau([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(5 / math.sqrt(30))
    assert kendall_tau([4, 3, 2, 1], [1, 2, 3, 4]) == pytest.approx(-1.0)
    assert math.isnan(kendall_tau([1, 1, 1], [1, 2, 3])) and math.isnan(kendall_tau([1], [1]))


# --- tau_ap ---------------------------------------------------------------------------------------


def test_tau_ap_must_show_cases():
    """Reference (first argument, the human ranking) 1..10; the judge's ranking swaps two items."""
    reference = list(range(1, 11))
    top_swapped = [2, 1] + list(range(3, 11))
    bottom_swapped = list(range(1, 9)) + [10, 9]
    assert tau_ap(reference, top_swapped) == pytest.approx(7 / 9, abs=1e-12)
    assert round(tau_ap(reference, top_swapped), 4) == 0.7778
    assert tau_ap(reference, bottom_swapped) == pytest.approx(79 / 81, abs=1e-12)
    assert round(tau_ap(reference, bottom_swapped), 4) == 0.9753
    # Kendall's tau does not see where the swap is: 1 - 2 * 1 / 45 for both
    assert kendall_tau(reference, [reference.index(x) + 1 for x in top_swapped]) == pytest.approx(43 / 45)


def test_tau_ap_extremes_and_asymmetry():
    assert tau_ap("abcde", "abcde") == 1.0
    assert tau_ap("abcde", "edcba") == -1.0
    # reference a, b, c; ranking b, c, a: C(2) = 1 (b above c in both), C(3) = 0 -> 2/2 * 1 - 1 = 0
    assert tau_ap("abc", "bca") == pytest.approx(0.0)
    # swapped roles: ranking a, b, c against reference b, c, a: C(2) = 0, C(3) = 1 of 2 -> -0.5
    assert tau_ap("bca", "abc") == pytest.approx(-0.5)
    assert math.isnan(tau_ap("a", "a"))
    with pytest.raises(ValueError):
        tau_ap("abc", "abd")
    with pytest.raises(ValueError):
        tau_ap("aab", "aba")


# --- RBO ------------------------------------------------------------------------------------------


def test_rbo_by_hand():
    # X = (0, 2, 3): (1-p)/p * (0 + 2/2 p^2 + 3/3 p^3) + 3/3 p^3 = 0.1 * 1.71 + 0.729 = 0.9
    assert rbo("abc", "bac", 0.9) == pytest.approx(0.9, abs=1e-12)
    # X = (0, 1, 3): (1/9) * (0.5 * 0.81 + 0.729) + 0.729 = 0.855
    assert rbo("abc", "cba", 0.9) == pytest.approx(0.855, abs=1e-12)
    # uneven: S = a, b; L = a, c, b; p = 0.5: X = (1, 1, 2), X_s = 1
    # 1 * (1 * .5 + 1/2 * .25 + 2/3 * .125 + 1 * (3 - 2) / (2 * 3) * .125) + ((2 - 1)/3 + 1/2) * .125
    assert rbo("ab", "acb", 0.5) == pytest.approx(5 / 6, abs=1e-12)
    assert rbo("acb", "ab", 0.5) == pytest.approx(5 / 6, abs=1e-12)  # symmetric
    assert rbo(list(range(63)), list(range(63)), 0.9) == pytest.approx(1.0, abs=1e-12)
    assert rbo("abc", "xyz", 0.9) == 0.0
    with pytest.raises(ValueError):
        rbo("abc", "abc", 1.0)


def test_rbo_matches_the_rbo_package():
    package = pytest.importorskip("rbo", reason="the rbo package (PyPI `rbo`, pins numpy<2) is not installed")
    rng = np.random.default_rng(3)
    cases = [("abc", "bac"), ("ab", "acb"), ("abcdefg", "bdafxyz"), ("abcdefghij", "hgfa")]
    cases += [(list(rng.permutation(63)), list(rng.permutation(63))) for _ in range(20)]
    cases += [
        (list(rng.permutation(30)[: int(rng.integers(1, 30))]), list(rng.permutation(30))) for _ in range(20)
    ]
    for a, b in cases:
        for p in (0.5, 0.8, 0.9, 0.98):
            theirs = package.RankingSimilarity(list(a), list(b), verbose=False).rbo_ext(p)
            assert rbo(list(a), list(b), p) == pytest.approx(theirs, abs=1e-9), (a, b, p)


# --- top-k tau, orders ---------------------------------------------------------------------------


def test_ranking_order_breaks_ties_by_name():
    scores = pd.Series({"b": 0.5, "a": 0.5, "c": 0.9, "d": 0.1})
    assert ranking_order(scores) == ["c", "a", "b", "d"]


def test_topk_tau_by_hand():
    human = pd.Series({"s1": 5.0, "s2": 4.0, "s3": 3.0, "s4": 2.0, "s5": 1.0})
    judge = pd.Series({"s1": 5.0, "s2": 3.0, "s3": 4.0, "s4": 1.0, "s5": 2.0})
    # top 3 of the human order: s1, s2, s3; judge 5, 3, 4: C = 2, D = 1 -> 1/3
    assert topk_tau(human, judge, 3) == pytest.approx(1 / 3)
    # top 2: s1 and s2 concordant
    assert topk_tau(human, judge, 2) == pytest.approx(1.0)
    # k beyond the systems: all 5 (C = 8, D = 2) -> 0.6
    assert topk_tau(human, judge, 10) == pytest.approx(0.6) == pytest.approx(kendall_tau(human, judge))
    # a tie at the cut goes to the smaller run name: s2 and s3 tie in the human scores
    tied = pd.Series({"s1": 5.0, "s3": 4.0, "s2": 4.0, "s4": 1.0})
    judge2 = pd.Series({"s1": 1.0, "s2": 2.0, "s3": 9.0, "s4": 0.0})
    assert topk_tau(tied, judge2, 2) == pytest.approx(-1.0)  # s1, s2: judge reverses them


# --- inputs ---------------------------------------------------------------------------------------


def test_topic_matrix_tidy_and_wide():
    tidy = pd.DataFrame(
        {
            "run": ["a", "a", "a", "b", "b", "b"],
            "measure": "nDCG@10",
            "topic": ["1", "2", "all", "1", "2", "all"],
            "value": [0.1, 0.2, 0.15, 0.3, 0.4, 0.35],
            "judged_at_k": 1.0,
        }
    )
    m = topic_matrix(tidy)
    assert m.index.tolist() == ["1", "2"] and m.columns.tolist() == ["a", "b"]
    assert m.loc["2", "b"] == 0.4
    pd.testing.assert_frame_equal(topic_matrix(m), m)
    with pytest.raises(InputError, match="several measures"):
        topic_matrix(tidy.assign(measure=["x", "y", "x", "y", "x", "y"]))
    with pytest.raises(InputError, match="lists run a on topic 1 twice"):
        topic_matrix(pd.concat([tidy, tidy.iloc[:1]]))


def test_align_common_topics_and_errors():
    human = wide({"a": [1, 2, 3], "b": [3, 2, 1]})
    judge = wide({"b": [1, 1], "a": [2, 2]})
    h, j = align(human, judge)
    assert h.index.tolist() == j.index.tolist() == ["t1", "t2"]
    assert h.columns.tolist() == j.columns.tolist() == ["a", "b"]
    with pytest.raises(InputError, match=r"different runs \(only human: \['b'\]; only judge: \['c'\]\)"):
        align(human, wide({"a": [1, 2, 3], "c": [1, 2, 3]}))
    with pytest.raises(InputError, match="no topic in common"):
        align(human, pd.DataFrame({"a": [1.0], "b": [2.0]}, index=["x"]))
    with pytest.raises(InputError, match="judge table has no value for run b on topic t2"):
        align(human, wide({"a": [1, 2, 3], "b": [1, None, 3]}))


# --- bootstrap ------------------------------------------------------------------------------------


def test_bootstrap_degenerate_cases():
    human = wide({"a": [0.9, 0.5, 0.7, 0.2], "b": [0.4, 0.6, 0.1, 0.3], "c": [0.1, 0.2, 0.3, 0.4]})
    assert bootstrap_tau(human, human + 0.05, n_boot=200, seed=1, alpha=0.05) == pytest.approx((1.0, 1.0))
    # the judge reverses every topic: every resample's order is reversed
    assert bootstrap_tau(human, -human, n_boot=200, seed=1, alpha=0.05) == pytest.approx((-1.0, -1.0))


def test_bootstrap_two_topics_by_hand():
    """Human t1 = t2 = (3, 2, 1): the human order is always a > b > c. Judge t1 = (3, 2, 1) (tau 1),
    t2 = (1, 2, 4) (tau -1); a resample of t1 and t2 gives judge means (2, 2, 2.5): C = 0, D = 2, one
    pair tied in the judge -> tau-b = -2 / sqrt(3 * 2). Resamples: {t1, t1} 1/4, {t2, t2} 1/4, mixed 1/2."""
    human = wide({"a": [3, 3], "b": [2, 2], "c": [1, 1]})
    judge = wide({"a": [3, 1], "b": [2, 2], "c": [1, 4]})
    mixed = -2 / math.sqrt(6)
    taus = bootstrap_taus(human, judge, n_boot=1500, seed=11)
    assert set(np.round(taus, 12)) == {1.0, -1.0, round(mixed, 12)}
    # shares within 4 standard errors (sqrt(.25 * .75 / 1500) = .0112)
    assert np.mean(np.isclose(taus, 1.0)) == pytest.approx(0.25, abs=0.045)
    assert np.mean(np.isclose(taus, -1.0)) == pytest.approx(0.25, abs=0.045)
    assert np.mean(np.isclose(taus, mixed)) == pytest.approx(0.5, abs=0.045)
    # 90% interval: 25% of the mass sits at each end, so the 5% and 95% quantiles are -1 and 1
    assert bootstrap_tau(human, judge, n_boot=1500, seed=11, alpha=0.1) == pytest.approx((-1.0, 1.0))
    # 40% interval: the 30% and 70% quantiles fall in the mixed mass
    low, high = bootstrap_tau(human, judge, n_boot=1500, seed=11, alpha=0.6)
    assert low == pytest.approx(mixed) and high == pytest.approx(mixed)


def test_bootstrap_is_seeded():
    human = wide(
        {"a": [0.9, 0.5, 0.7, 0.2, 0.3], "b": [0.4, 0.6, 0.1, 0.3, 0.8], "c": [0.1, 0.2, 0.3, 0.4, 0.5]}
    )
    judge = wide(
        {"a": [0.8, 0.4, 0.9, 0.1, 0.2], "b": [0.5, 0.6, 0.2, 0.1, 0.9], "c": [0.3, 0.1, 0.4, 0.2, 0.6]}
    )
    first = bootstrap_taus(human, judge, n_boot=300, seed=5)
    assert np.array_equal(first, bootstrap_taus(human, judge, n_boot=300, seed=5), equal_nan=True)
    assert not np.array_equal(first, bootstrap_taus(human, judge, n_boot=300, seed=6), equal_nan=True)


# --- significance decisions ------------------------------------------------------------------------

BASE = np.array([0.5, 0.6, 0.4, 0.7, 0.5])
GAP = np.array([0.30, 0.32, 0.28, 0.31, 0.29])
WOBBLE = np.array([0.1, -0.1, 0.05, -0.05, 0.0])


def hand_case() -> tuple[pd.DataFrame, pd.DataFrame]:
    """3 systems x 5 topics. Paired t, 4 df, two-sided 5% critical value 2.776.

    human: a - b = GAP (t about 38: significant, a > b); a - c = GAP - WOBBLE = (.20, .42, .23, .36,
    .29): mean .30, sd .0908, t = 7.39 (significant, a > c); b - c = -WOBBLE: mean 0, t = 0 (not).
    judge: a - b = GAP (significant, a > b); a - c = -WOBBLE: t = 0 (not); b - c = -(GAP + WOBBLE) =
    -(.40, .22, .33, .26, .29): mean -.30, sd .0689, t = -9.73 (significant, b < c)."""
    human = wide({"a": BASE + GAP, "b": BASE, "c": BASE + WOBBLE})
    judge = wide({"a": BASE + GAP, "b": BASE, "c": BASE + GAP + WOBBLE})
    return human, judge


def test_pair_decisions_by_hand():
    human, judge = hand_case()
    d = pair_decisions(human, judge, alpha=0.05, test="t").set_index(["run_a", "run_b"])
    assert d.index.tolist() == [("a", "b"), ("a", "c"), ("b", "c")]
    assert d["human_sig"].tolist() == [True, True, False]
    assert d["human_sign"].tolist() == [1, 1, 0]
    assert d["judge_sig"].tolist() == [True, False, True]
    assert d["judge_sign"].tolist() == [1, 0, -1]
    assert d["agree"].tolist() == [True, False, False]
    assert d.loc[("b", "c"), "human_p"] == pytest.approx(1.0)
    assert d.loc[("a", "c"), "human_p"] < 0.05 < d.loc[("a", "c"), "judge_p"]


def test_significance_agreement_by_hand():
    human, judge = hand_case()
    got = significance_agreement(human, judge, alpha=0.05, test="t")
    assert got == {
        "sig_agreement": pytest.approx(1 / 3),
        "sig_fpr": 1.0,
        "sig_fnr": 0.5,
        "n_pairs": 3,
        "n_agree": 1,
        "n_human_sig": 2,
        "n_human_not_sig": 1,
        "n_judge_sig": 2,
        "n_false_pos": 1,
        "n_false_neg": 1,
        "n_sign_flips": 0,
    }


def test_significance_sign_flip_counts_as_false_negative():
    human = wide({"a": BASE + GAP, "b": BASE})
    judge = wide({"a": BASE, "b": BASE + GAP})
    got = significance_agreement(human, judge, alpha=0.05, test="t")
    assert got["n_sign_flips"] == 1 and got["n_false_neg"] == 1
    assert got["sig_agreement"] == 0.0 and got["sig_fnr"] == 1.0 and math.isnan(got["sig_fpr"])


def test_vectorised_t_test_equals_one_pair_at_a_time():
    rng = np.random.default_rng(2)
    human = wide({f"r{i}": rng.random(8) for i in range(6)})
    judge = human + rng.normal(0, 0.2, human.shape)
    judge["r5"] = judge["r4"] + 0.1  # constant difference (up to rounding): p about 0
    judge["r3"] = judge["r2"]  # no difference at all: not tested
    d = pair_decisions(human, judge, alpha=0.05, test="t").set_index(["run_a", "run_b"])
    for (a, b), row in d.iterrows():
        for what, m in (("human", human), ("judge", judge)):
            expected = paired_p(m[a].to_numpy(), m[b].to_numpy(), "t")
            assert row[f"{what}_p"] == pytest.approx(expected, abs=1e-12, nan_ok=True), (a, b, what)
    assert d.loc[("r4", "r5"), "judge_p"] < 1e-50 and bool(d.loc[("r4", "r5"), "judge_sig"])
    assert math.isnan(d.loc[("r2", "r3"), "judge_p"]) and not d.loc[("r2", "r3"), "judge_sig"]
    assert d.loc[("r2", "r3"), "judge_sign"] == 0


def test_other_tests_by_name():
    """With 5 topics the exact signed-rank and sign tests cannot go below p = 2 / 2^5 = 0.0625."""
    human, judge = hand_case()
    for test in ("wilcoxon", "sign"):
        assert paired_p(BASE + GAP, BASE, test) == pytest.approx(0.0625)
        at_5 = significance_agreement(human, judge, alpha=0.05, test=test)
        assert at_5["n_human_sig"] == 0 and at_5["n_judge_sig"] == 0 and at_5["sig_agreement"] == 1.0
        assert math.isnan(at_5["sig_fnr"]) and at_5["sig_fpr"] == 0.0
        at_10 = pair_decisions(human, judge, alpha=0.1, test=test).set_index(["run_a", "run_b"])
        assert bool(at_10.loc[("a", "b"), "human_sig"]) and bool(at_10.loc[("a", "b"), "judge_sig"])
    # identical systems: no test is run, not significant
    assert math.isnan(paired_p(BASE, BASE, "t"))
    with pytest.raises(ValueError, match="unknown test 'z'"):
        paired_p(BASE, BASE + 1, "z")


# --- correlations -------------------------------------------------------------------------------


def test_correlations_identical_tables():
    human, _ = hand_case()
    got = correlations(human, human, CorrelationSettings(n_boot=100))
    assert list(got) == CORRELATION_KEYS
    assert (got["n_systems"], got["n_topics"]) == (3, 5)
    for key in (
        "kendall_tau",
        "kendall_tau_low",
        "kendall_tau_high",
        "tau_ap",
        "spearman",
        "rbo",
        "topk_tau",
        "sig_agreement",
    ):
        assert got[key] == pytest.approx(1.0), key
    assert got["sig_fpr"] == 0.0 and got["sig_fnr"] == 0.0


def test_correlations_hand_case():
    human, judge = hand_case()
    got = correlations(human, judge, CorrelationSettings(k=2, p=0.5, n_boot=200, seed=0))
    # means: human a .84, b .54, c .54 (tie: b before c by name); judge a .84, b .54, c .84
    # judge order (ties by name): a, c, b. tau_ap: C(2) = 1 (a above c in the human order),
    # C(3) = 1 of 2 (a above b, c not) -> 2/2 * (1 + 1/2) - 1 = 0.5
    assert got["kendall_tau"] == pytest.approx(kendall_tau([0.84, 0.54, 0.54], [0.84, 0.54, 0.84]))
    assert got["tau_ap"] == pytest.approx(0.5)
    assert got["rbo"] == pytest.approx(rbo("abc", "acb", 0.5))
    assert got["topk_tau"] == pytest.approx(1.0)  # human top 2: a, b; judge a > b
    assert got["sig_agreement"] == pytest.approx(1 / 3)
    assert got["kendall_tau_low"] <= got["kendall_tau_high"]


def test_correlations_tau_gap_and_its_cutoff_by_hand():
    """auto-judge-evaluate's evaluator case through correlations: reference a .9, b .5, c .45,
    d .2, judge a .8, b .5, c .6, d .1 (each run's value on every topic). Judge order a, c, b, d:
    c {a: .45 right} -> 1; b {a .4 right, c .05 wrong} -> .4 / .45; d {all right} -> 1:
    tau_gap = 2 x (2 + 8/9) / 3 - 1 = 25/27. Over the reference's top 3 (a, b, c): 8/9."""
    human = wide({"a": [0.9] * 3, "b": [0.5] * 3, "c": [0.45] * 3, "d": [0.2] * 3})
    judge = wide({"a": [0.8] * 3, "b": [0.5] * 3, "c": [0.6] * 3, "d": [0.1] * 3})
    got = correlations(human, judge, CorrelationSettings(n_boot=20, tau_gap_cutoff=3))
    assert got["tau_gap"] == pytest.approx(25 / 27) and got["tau_gap_at_k"] == pytest.approx(8 / 9)
    whole = correlations(human, judge, CorrelationSettings(n_boot=20))  # cutoff 10: every system
    assert whole["tau_gap_at_k"] == pytest.approx(25 / 27)


@pytest.fixture(scope="module")
def dl21():
    """The 63 DL21 runs, the human qrels and the runs' scores under them (read and scored once for
    the tests on DL21)."""
    from judgelab.studies.ranking.runs import dl21_run_names, read_runs
    from judgelab.studies.ranking.scores import read_qrels_table, score_runs

    shared = shared_folder()
    runs = read_runs([shared / "trec-dl-runs" / "dl21" / f"input.{n}.txt" for n in dl21_run_names()])
    qrels = read_qrels_table(shared / "trec-dl" / "qrels.dl21-passage.txt")
    return runs, qrels, score_runs(runs, qrels, ["nDCG@10"])


def test_correlations_on_dl21_with_a_coarser_judge(dl21):
    """The whole chain on the 63 DL21 runs: a 'judge' that merges grade 1 into 0 (binary at 2)."""
    from judgelab.studies.ranking.scores import score_runs

    runs, qrels, human = dl21
    coarse = qrels.assign(relevance=qrels["relevance"].where(qrels["relevance"] >= 2, 0))
    judge = score_runs(runs, coarse, ["nDCG@10"])
    got = correlations(human, judge, CorrelationSettings(n_boot=200))
    assert (got["n_systems"], got["n_topics"]) == (63, 53)
    assert 0.5 < got["kendall_tau_low"] <= got["kendall_tau"] <= got["kendall_tau_high"] <= 1.0
    assert 0.0 < got["tau_ap"] < 1.0 and 0.0 < got["rbo"] < 1.0 and got["spearman"] > 0.5
    assert 0.0 <= got["sig_fpr"] <= 1.0 and 0.0 <= got["sig_fnr"] <= 1.0
    self_row = correlations(human, human, CorrelationSettings(n_boot=50))
    assert self_row["kendall_tau"] == pytest.approx(1.0) and self_row["sig_agreement"] == 1.0


@pytest.mark.slow
def test_bland_altman_on_dl21_with_a_published_judge_equals_numpy_and_statsmodels(dl21):
    """The 63 DL21 runs under the human qrels and under Arabzadeh and Clarke's GPT-4 UMBRELA labels
    (the published judge's file): the study's value agreement at the system level (63 run means)
    and the response level (63 x 53 run x topic scores) equals numpy (bias, SD with n - 1, the
    limits) and statsmodels' OLS of the difference on the mean (slope, intercept, its p)."""
    import statsmodels.api as sm

    from judgelab.studies.ranking.scores import read_qrels_table, score_runs
    from judgelab.studies.ranking.values import value_agreement

    runs, _, human = dl21
    source = shared_folder() / "published-judges" / "narabzad-2024" / "Methods" / "Umbrela_zeroshot" / "gpt4"
    judge = score_runs(runs, read_qrels_table(source / "umbrella_gpt-4_zeroshot_dl21.txt"), ["nDCG@10"])
    scores = pd.concat([human.assign(qrels="human"), judge.assign(qrels="umbrela")], ignore_index=True)
    rows = {r["level"]: r for r in value_agreement(scores, "human", "umbrela", "nDCG@10")}

    def matrix(table):  # topic x run, a run without documents for a topic scores 0 (trec_eval -c)
        per = table[table["topic"] != "all"].pivot(index="topic", columns="run", values="value")
        return per.reindex(columns=sorted(table["run"].unique())).fillna(0.0)

    h, j = matrix(human), matrix(judge)
    topics = sorted(set(h.index) & set(j.index))
    h, j = h.loc[topics], j.loc[topics]
    assert h.shape == (53, 63)
    for level, (x, y) in {
        "system": (h.mean(axis=0).to_numpy(), j.mean(axis=0).to_numpy()),
        "response": (h.to_numpy().ravel(), j.to_numpy().ravel()),
    }.items():
        d, m = y - x, (x + y) / 2
        fit = sm.OLS(d, sm.add_constant(m)).fit()
        got = rows[level]
        assert got["n"] == {"system": 63, "response": 63 * 53}[level]
        assert got["bias"] == pytest.approx(np.mean(d), abs=1e-12)
        assert got["sd"] == pytest.approx(np.std(d, ddof=1), abs=1e-12)
        assert (got["loa_low"], got["loa_high"]) == pytest.approx(
            (np.mean(d) - 1.96 * np.std(d, ddof=1), np.mean(d) + 1.96 * np.std(d, ddof=1)), abs=1e-12
        )
        assert (got["intercept"], got["slope"]) == pytest.approx(tuple(fit.params), abs=1e-9)
        assert got["slope_p"] == pytest.approx(fit.pvalues[1], rel=1e-6, abs=1e-12)
        assert (got["range_low"], got["range_high"], got["range_known"]) == (0.0, 1.0, True)
    # the published judge scores the systems higher than the assessors do (UMBRELA's leniency)
    assert rows["system"]["bias"] > 0


# --- tau's interval: BCa -----------------------------------------------------------------------


def test_bca_interval_is_scipys_on_the_same_resamples():
    """tau_interval's BCa is scipy.stats.bootstrap's, which draws exactly the resamples of
    bootstrap_taus with the same seed; percentile is the percentile interval of those."""
    from scipy import stats

    rng = np.random.default_rng(3)
    h = rng.random((12, 8))
    j = h + rng.normal(0, 0.15, h.shape)
    topics, systems = [f"t{i:02d}" for i in range(12)], [f"s{k}" for k in range(8)]
    human, judge = pd.DataFrame(h, topics, systems), pd.DataFrame(j, topics, systems)

    def tau_of(rows):
        return kendall_tau(h[rows].mean(axis=0), j[rows].mean(axis=0))

    res = stats.bootstrap(
        (np.arange(12),),
        tau_of,
        n_resamples=400,
        vectorized=False,
        method="BCa",
        rng=np.random.default_rng(9),
    )
    taus = bootstrap_taus(human, judge, n_boot=400, seed=9)
    assert np.array_equal(res.bootstrap_distribution, taus)
    low, high, method, below = tau_interval(h, j, 400, 9, 0.05, "bca")
    assert method == "BCa"
    assert (low, high) == pytest.approx((res.confidence_interval.low, res.confidence_interval.high))
    assert below == pytest.approx(np.mean(taus < tau_of(np.arange(12))))
    assert tau_interval(h, j, 400, 9, 0.05, "percentile")[:3] == (
        *bootstrap_tau(human, judge, n_boot=400, seed=9, alpha=0.05),
        "percentile",
    )


def test_bca_falls_back_to_percentile_where_undefined_and_names_the_key():
    # a > b > c on every topic: every resample gives tau 1, nothing to correct
    human = wide({"a": [0.9, 0.8, 0.7, 0.95], "b": [0.5, 0.6, 0.4, 0.55], "c": [0.1, 0.2, 0.3, 0.15]})
    got = tau_interval(human.to_numpy(), human.to_numpy() + 0.05, 200, 1, 0.05, "bca")
    assert got[:3] == (pytest.approx(1.0), pytest.approx(1.0), "percentile (BCa undefined)")
    assert got[3] == 0.0
    # two topics: no jackknife
    two = wide({"a": [3, 3], "b": [2, 2], "c": [1, 1]})
    judge = wide({"a": [3, 1], "b": [2, 2], "c": [1, 4]})
    assert (
        tau_interval(two.to_numpy(), judge.to_numpy(), 300, 11, 0.1, "bca")[2] == "percentile (BCa undefined)"
    )
    # bca or percentile: the schema's enum (the config is checked against it when it loads)
    with pytest.raises(
        InputError, match=r"ranking.correlation.ci_method': 'normal' is not one of \['bca', 'percentile'\]"
    ):
        schema.validate_entry("normal", "ranking.correlation.ci_method", "ranking.correlation.ci_method")


def _dl21_changed(dl21, share: float):
    """The 63 DL21 runs scored under the human qrels and under an imported-style judge made of
    them with a known share of the grades (seeded) moved to another grade."""
    from judgelab.studies.ranking.scores import score_runs

    runs, qrels, human = dl21
    rng = np.random.default_rng(7)
    rel = qrels["relevance"].to_numpy().copy()
    change = rng.random(len(rel)) < share
    rel[change] = (rel[change] + rng.integers(1, 4, int(change.sum()))) % 4
    return human, score_runs(runs, qrels.assign(relevance=rel), ["nDCG@10"])


def test_bca_centres_the_interval_the_percentile_one_leaves_below_tau_on_dl21(dl21):
    """The issue's case, reproduced without the published labels: 20% of the DL21 grades changed
    gives tau about 0.91 with 92% of the resampled taus below it (resampled topic sets make every
    system's mean noisier), so the percentile interval ends just above tau (tau in its top tenth);
    BCa, on the same resamples, contains tau well inside."""
    human, judge = _dl21_changed(dl21, 0.2)
    bca = correlations(human, judge, CorrelationSettings(n_boot=1000, seed=0))
    pct = correlations(human, judge, CorrelationSettings(n_boot=1000, seed=0, ci_method="percentile"))
    tau = bca["kendall_tau"]
    assert (bca["n_systems"], bca["n_topics"]) == (63, 53) and 0.88 < tau < 0.94
    assert bca["kendall_tau_boot_below"] == pct["kendall_tau_boot_below"] > 0.9
    assert pct["kendall_tau_ci"] == "percentile" and bca["kendall_tau_ci"] == "BCa"

    def position(row):  # where tau lies in the interval: 0 at its low end, 1 at its high end
        return (tau - row["kendall_tau_low"]) / (row["kendall_tau_high"] - row["kendall_tau_low"])

    assert 0.85 < position(pct) < 1.0 and 0.1 < position(bca) < 0.6


def test_where_nearly_every_resample_is_below_tau_neither_interval_contains_it_on_dl21(dl21):
    """Measured, not hidden: with 10% of the grades changed 99% of the resampled taus fall below
    the observed one; the percentile interval lies below tau and BCa's corrected quantiles land
    in the few resamples above it, so its interval lies above tau. The share of resamples below
    (kendall_tau_boot_below) is in the table to show it."""
    human, judge = _dl21_changed(dl21, 0.1)
    bca = correlations(human, judge, CorrelationSettings(n_boot=1000, seed=0))
    pct = correlations(human, judge, CorrelationSettings(n_boot=1000, seed=0, ci_method="percentile"))
    tau = bca["kendall_tau"]
    assert bca["kendall_tau_boot_below"] > 0.98
    assert pct["kendall_tau_high"] < tau < bca["kendall_tau_low"]
