"""Baselines, the cross-evaluator control and the simulation metrics on constructed cases whose
values are worked out by hand in the comments."""

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm_api
from scipy import stats as sps
from sklearn.metrics import precision_recall_fscore_support

from judgelab.studies.simulation import baselines as bl
from judgelab.studies.simulation import metrics as sm
from judgelab.studies.simulation.data import Record

# Six items judged by five evaluators: three regular ones, an always-neutral one (en) and a
# contrarian (ex: the opposite of e1 on A/B items, A where e1 says N).
LABELS = {"e1": "AABBNA", "e2": "AABBNB", "e3": "ABBANA", "en": "NNNNNN", "ex": "BBAAAB"}
# Consensus (strict majority of 5): i0 A (3 of 5), i2 B (3), i4 N (4); i1, i3, i5 have none.


def records():
    return [
        Record(ev, f"i{k}", f"ctx {k}", "a", "b", lab)
        for ev, labs in LABELS.items()
        for k, lab in enumerate(labs)
    ]


def all_validation():
    return pd.DataFrame(
        [(ev, f"i{k}", "validation", k) for ev in LABELS for k in range(6)],
        columns=["evaluator", "item", "role", "order"],
    )


def accuracy(preds, method):
    p = preds[preds["method"] == method]
    return (p["pred"] == p["gold"]).groupby(p["evaluator"]).mean().to_dict()


def test_consensus_strict_majority():
    assert bl.consensus(records()) == {"i0": "A", "i2": "B", "i4": "N"}
    # without ex, i3 is B,B,A,N: 2 of 4 is not a majority; i1 is A,A,B,N: neither
    assert bl.consensus(records(), exclude="ex") == {"i0": "A", "i2": "B", "i4": "N"}
    assert bl.consensus(records()[:12]) == {}  # two annotators: below the minimum of three


def test_reference_predictors_on_synthetic_evaluators():
    preds = bl.reference_predictions(records(), all_validation(), seed=0, majority_source="all")
    assert set(preds["method"]) == set(bl.REFERENCE_METHODS)
    # global label counts A 11, B 10, N 9 -> A for everyone
    assert (preds.loc[preds.method == "global_majority", "pred"] == "A").all()
    # own majorities: e1 A (3A 2B 1N), e2 B, e3 A, en N, ex tie A/B 3-3 -> A (order A, N, B)
    own = preds[preds.method == "evaluator_majority"].groupby("evaluator")["pred"].first().to_dict()
    assert own == {"e1": "A", "e2": "B", "e3": "A", "en": "N", "ex": "A"}
    acc = accuracy(preds, "evaluator_majority")
    assert acc["en"] == 1.0  # the always-neutral evaluator is its own majority
    assert acc["ex"] == 0.5  # the contrarian says A on 3 of 6 items
    # oracle consensus on the eligible items i0, i2, i4 (A, B, N); none elsewhere
    orc = preds[preds.method == "oracle_consensus"]
    assert orc["pred"].notna().sum() == 15 and not orc.loc[orc["item"] == "i1", "answered"].any()
    orc = orc[orc["pred"].notna()]
    ok = (orc["pred"] == orc["gold"]).groupby(orc["evaluator"]).mean().to_dict()
    assert ok == {"e1": 1.0, "e2": 1.0, "e3": 1.0, "en": pytest.approx(1 / 3), "ex": 0.0}


def test_evaluator_majority_from_pool_only():
    splits = all_validation()
    # e1's pool: i2, i3 (B, B); its validation i0, i1, i4, i5
    splits.loc[(splits.evaluator == "e1") & splits["item"].isin(["i2", "i3"]), "role"] = "pool"
    preds = bl.reference_predictions(records(), splits, seed=0, majority_source="pool")
    e1 = preds[(preds.method == "evaluator_majority") & (preds.evaluator == "e1")]
    assert list(e1["item"]) == ["i0", "i1", "i4", "i5"] and (e1["pred"] == "B").all()


def test_random_baseline_is_seeded_and_uniform():
    recs = [Record("e", f"i{k}", f"c{k}", "a", "b", "ANB"[k % 3]) for k in range(600)]
    splits = pd.DataFrame(
        [("e", f"i{k}", "validation", k) for k in range(600)], columns=["evaluator", "item", "role", "order"]
    )
    a = bl.reference_predictions(recs, splits, seed=1, majority_source="all")
    assert a.equals(bl.reference_predictions(recs, splits, seed=1, majority_source="all"))
    rnd = a[a.method == "random"]
    shares = rnd["pred"].value_counts(normalize=True)
    assert set(shares.index) == {"A", "N", "B"} and shares.between(0.27, 0.40).all()
    assert 0.27 < (rnd["pred"] == rnd["gold"]).mean() < 0.40


def test_cross_evaluator_control_by_hand():
    preds = pd.DataFrame(
        [
            ("e1", "x1", "A", "A"),
            ("e2", "x1", "A", "B"),
            ("e3", "x1", "B", "B"),
            ("e1", "x2", "N", "N"),
            ("e2", "x2", "N", None),
            ("e3", "x2", "A", "N"),
        ],
        columns=["evaluator", "item", "gold", "pred"],
    )
    cols = ["evaluator", "item", "own_correct", "control_accuracy", "n_others"]
    # every judgment (the paper's scoring), a missing prediction wrong: e1/x1: others say B, B vs
    # gold A -> 0; e2/x1: A, B vs A -> 1/2; e3/x1: A, B vs B -> 1/2; e1/x2: e2 missing, e3 N vs
    # N -> 1/2; e2/x2: own missing (wrong), others N, N vs N -> 1; e3/x2: N, missing vs A -> 0
    c = bl.cross_evaluator_control(preds)
    assert [tuple(r) for r in c[cols].itertuples(index=False)] == [
        ("e1", "x1", 1.0, 0.0, 2),
        ("e2", "x1", 0.0, 0.5, 2),
        ("e3", "x1", 1.0, 0.5, 2),
        ("e1", "x2", 1.0, 0.5, 2),
        ("e2", "x2", 0.0, 1.0, 2),
        ("e3", "x2", 0.0, 0.0, 2),
    ]
    # answered only: e1/x2: only e3 answered (N) vs N -> 1; e2/x2 has no own prediction;
    # e3/x2: e1 says N vs A -> 0
    c = bl.cross_evaluator_control(preds, answered_only=True)
    rows = [tuple(r) for r in c[cols].itertuples(index=False)]
    assert rows == [
        ("e1", "x1", 1.0, 0.0, 2),
        ("e2", "x1", 0.0, 0.5, 2),
        ("e3", "x1", 1.0, 0.5, 2),
        ("e1", "x2", 1.0, 1.0, 1),
        ("e3", "x2", 0.0, 0.0, 1),
    ]


# --------------------------------------------------------------------------------------------
# Accuracy, deviation metrics, confusion


def constructed():
    rows = [
        ("A", "A", "A"),  # conform, model conforms, right
        ("A", "A", "B"),  # conform, model deviates
        ("N", "A", "N"),  # deviation, model deviates to the annotator's label
        ("B", "A", "N"),  # deviation, model deviates the other way
        ("B", "N", "N"),  # deviation, model conforms
        ("N", "N", None),  # conform, unanswered
        ("A", None, "A"),
    ]  # no consensus: not eligible
    df = pd.DataFrame(rows, columns=["gold", "consensus", "pred"])
    df["deviation"] = pd.array(
        [g != c if c else pd.NA for g, c in zip(df.gold, df.consensus)], dtype="boolean"
    )
    return df


def test_deviation_metrics_by_hand():
    m = sm.deviation_metrics(constructed())
    assert m["n_eligible"] == 6 and m["n_deviation"] == 3 and m["human_deviation_rate"] == 0.5
    assert (m["n_deviation_answered"], m["n_conform_answered"]) == (3, 2)
    assert m["deviation_accuracy"] == pytest.approx(1 / 3)  # only row 3 of rows 3-5
    assert m["deviation_accuracy_answered"] == pytest.approx(1 / 3)  # all three answered
    # an unanswered deviation pair is wrong for deviation accuracy, left out of the rest
    df = constructed()
    df.loc[4, "pred"] = None
    m2 = sm.deviation_metrics(df)
    assert m2["deviation_accuracy"] == pytest.approx(1 / 3) and m2["deviation_accuracy_answered"] == 0.5
    assert m2["n_deviation_answered"] == 2 and m2["p_model_deviates_given_deviation"] == 1.0
    assert m["p_model_deviates_given_deviation"] == pytest.approx(2 / 3)  # rows 3, 4
    assert m["p_model_deviates_given_conform"] == pytest.approx(1 / 2)  # row 2 of rows 1-2
    assert m["alignment_lift"] == pytest.approx(1 / 6)
    assert m["n_model_deviates_on_deviation"] == 2 and m["captured_direction"] == pytest.approx(1 / 2)


def test_deviation_metrics_undefined_without_deviations():
    df = constructed().iloc[[0, 1]]
    m = sm.deviation_metrics(df)
    assert m["n_deviation"] == 0 and math.isnan(m["deviation_accuracy"]) and math.isnan(m["alignment_lift"])


def test_accuracy_confusion_prf_by_hand():
    df = constructed()
    acc = sm.accuracy_row(df)
    # answered rows 1-5 and 7, right: rows 1, 3, 7; over every judgment (the default) 3 of 7
    assert acc == {"n": 7, "n_answered": 6, "coverage": 6 / 7, "accuracy": 3 / 7, "accuracy_answered": 0.5}
    cm = sm.confusion(df)
    assert cm.tolist() == [[2, 0, 1], [0, 1, 0], [0, 2, 0]]
    norm = sm.row_normalise(cm)
    assert norm[0].tolist() == pytest.approx([2 / 3, 0, 1 / 3]) and norm[2].tolist() == [0, 1, 0]
    prf = sm.per_class_prf(cm).set_index("label")
    # A: P 2/2, R 2/3, F1 0.8; N: P 1/3, R 1, F1 0.5; B: never predicted right -> 0
    assert prf.loc["A", ["precision", "recall", "f1"]].tolist() == pytest.approx([1.0, 2 / 3, 0.8])
    assert prf.loc["N", ["precision", "recall", "f1"]].tolist() == pytest.approx([1 / 3, 1.0, 0.5])
    assert prf.loc["B", ["precision", "recall", "f1"]].tolist() == [0.0, 0.0, 0.0]
    assert prf["support"].tolist() == [3, 1, 2]
    ans = df[df.pred.notna()]
    ref = precision_recall_fscore_support(ans.gold, ans.pred, labels=["A", "N", "B"], zero_division=0)
    assert np.allclose(prf[["precision", "recall", "f1"]].to_numpy().T, np.array(ref[:3]))


def test_row_normalise_empty_row_is_nan():
    norm = sm.row_normalise(np.array([[1, 1, 0], [0, 0, 0], [0, 0, 2]]))
    assert np.isnan(norm[1]).all() and norm[0].tolist() == [0.5, 0.5, 0.0]


def test_with_consensus_and_tables():
    recs = records()
    preds = pd.DataFrame(
        [("personajudge", "m", "J", 1, r.evaluator, r.item, r.label, "N") for r in recs],
        columns=sm.CELL + ["evaluator", "item", "gold", "pred"],
    )
    df = sm.with_consensus(preds, recs)
    assert df.loc[df["item"] == "i0", "consensus"].eq("A").all()
    assert df.loc[df["item"] == "i1", "consensus"].isna().all()
    # ex on i0 (B vs A) deviates; e1 on i0 conforms
    dev = df.set_index(["evaluator", "item"])["deviation"]
    assert dev[("ex", "i0")] and not dev[("e1", "i0")] and pd.isna(dev[("e1", "i1")])
    acc = sm.accuracy_table(df).set_index("evaluator")["accuracy"]
    assert acc["en"] == 1.0 and acc["ex"] == 0.0 and acc["e1"] == pytest.approx(1 / 6)
    dist = sm.label_distribution(df, ["method"]).set_index("source")
    assert dist.loc["prediction", "N"] == 1.0 and dist.loc["human", "A"] == pytest.approx(11 / 30)


def test_evaluator_traits_by_hand():
    t = sm.evaluator_traits(records()).set_index("evaluator")
    assert t.loc["en", "neutral_rate"] == 1.0 and t.loc["e1", "neutral_rate"] == pytest.approx(1 / 6)
    # ex vs the others' strict majority: i0 A, i2 B, i4 N (i1, i3, i5 have none): all three differ
    assert t.loc["ex", "n_with_others_majority"] == 3 and t.loc["ex", "deviation_rate"] == 1.0
    # en: i0 A, i2 B, i4 N -> differs on two of three
    assert t.loc["en", "deviation_rate"] == pytest.approx(2 / 3)
    # e1: only i4 has a majority among the others (N, N, N, A), e1 says N
    assert t.loc["e1", "n_with_others_majority"] == 1 and t.loc["e1", "deviation_rate"] == 0.0


def test_correlations_against_scipy_and_statsmodels():
    acc = [0.62, 0.55, 0.48, 0.51, 0.40, 0.45, 0.58]
    neutral = [0.10, 0.20, 0.35, 0.25, 0.50, 0.30, 0.15]
    deviation = [0.12, 0.18, 0.30, 0.15, 0.33, 0.35, 0.20]
    r, p, n = sm.pearson(acc, neutral)
    ref = sps.pearsonr(acc, neutral)
    assert (r, p, n) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue), 7)
    pr, pp, pn = sm.partial_correlation(acc, deviation, neutral)
    # reference: the correlation of the residuals of acc and deviation on neutral, and the
    # t test of deviation's coefficient in acc ~ deviation + neutral (df n - 3)
    X = sm_api.add_constant(np.array(neutral))
    res_a = sm_api.OLS(acc, X).fit().resid
    res_d = sm_api.OLS(deviation, X).fit().resid
    assert pr == pytest.approx(np.corrcoef(res_a, res_d)[0, 1])
    fit = sm_api.OLS(acc, sm_api.add_constant(np.column_stack([deviation, neutral]))).fit()
    assert pp == pytest.approx(fit.pvalues[1]) and pn == 7
    table = sm.correlation_table(
        pd.Series(acc, index=list("abcdefg")),
        pd.DataFrame({"evaluator": list("abcdefg"), "neutral_rate": neutral, "deviation_rate": deviation}),
    )
    assert table["r"].tolist() == pytest.approx([r, sm.pearson(acc, deviation)[0], pr])


def test_correlations_undefined_cases():
    assert math.isnan(sm.pearson([1, 2], [3, 4])[0])
    assert math.isnan(sm.pearson([1, 1, 1], [1, 2, 3])[0])
    assert math.isnan(sm.partial_correlation([1, 2, 3], [1, 3, 2], [0, 1, 1])[0])  # n = 3
    # three points (PandaLM's three annotators): r is given, its p is not
    r, p, n = sm.pearson([0.41, 0.55, 0.62], [0.30, 0.16, 0.08])
    assert r == pytest.approx(sps.pearsonr([0.41, 0.55, 0.62], [0.30, 0.16, 0.08]).statistic) and n == 3
    assert math.isnan(p)
    table = sm.correlation_table(
        pd.Series([0.41, 0.55, 0.62], index=["a", "b", "c"]),
        pd.DataFrame(
            {
                "evaluator": ["a", "b", "c"],
                "neutral_rate": [0.3, 0.16, 0.08],
                "deviation_rate": [0.1, 0, 0.05],
            }
        ),
    )
    assert table["p"].isna().all() and table.loc[0, "note"] == "3 points: no p-value (fewer than 4)"
    r4, p4, _ = sm.pearson([0.41, 0.55, 0.62, 0.5], [0.30, 0.16, 0.08, 0.2])
    assert p4 == pytest.approx(sps.pearsonr([0.41, 0.55, 0.62, 0.5], [0.30, 0.16, 0.08, 0.2]).pvalue)


# --------------------------------------------------------------------------------------------
# Random Selection: the expectation and the distribution over draws


def test_random_draws_are_seeded_and_centre_on_one_third():
    pairs = pd.DataFrame(
        [
            (ev, f"i{k}", "ANB"[k % 3] if ev != "e3" else "N", "A" if k % 4 else None)
            for ev in ("e1", "e2", "e3")
            for k in range(30)
        ],
        columns=["evaluator", "item", "gold", "consensus"],
    )
    d = bl.random_draws(pairs, draws=400, seed=5)
    assert d.equals(bl.random_draws(pairs, draws=400, seed=5)) and not d.equals(
        bl.random_draws(pairs, draws=400, seed=6)
    )
    val = d[d["items"] == "validation"]
    assert len(val) == 400 * 3 and (val["n"] == 30).all()
    per_draw = val.groupby("draw")["accuracy"].mean()
    # the mean of a draw is a mean of 90 Bernoulli(1/3): SD sqrt(2/9/90) = 0.0497; 400 draws
    assert per_draw.mean() == pytest.approx(1 / 3, abs=3 * 0.0497 / 20)
    assert per_draw.std() == pytest.approx(math.sqrt(2 / 9 / 90), rel=0.15)
    elig = d[d["items"] == "consensus-eligible"]
    assert (elig["n"] == 22).all()  # items with a consensus: k % 4 != 0, 22 of 30


def test_random_selection_expected_per_class_structure():
    # gold shares A 1/2, N 1/3, B 1/6: recall 1/3 each; precision = the share (a guess of A is
    # right when the gold is A); F1 = 2 p / (3 p + 1)
    prf = bl.random_expected_prf(list("AAAAAANNNNBB")).set_index("label")
    assert prf["recall"].tolist() == pytest.approx([1 / 3] * 3)
    assert prf["precision"].tolist() == pytest.approx([1 / 2, 1 / 3, 1 / 6])
    assert prf.loc["A", "f1"] == pytest.approx(2 * 0.5 / 2.5)
    assert prf["support"].tolist() == [6, 4, 2]
    # accuracy = sum over classes of share x 1/3 = 1/3 whatever the shares
    assert (prf["precision"] * prf["recall"]).sum() == pytest.approx(1 / 3)


# --------------------------------------------------------------------------------------------
# The annotators table


def test_annotator_table_by_hand_and_against_sklearn_and_statsmodels():
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    from judgelab.analysis.agreement import krippendorff_alpha_raters
    from judgelab.studies.simulation.annotators import annotator_table

    t = annotator_table(records(), all_validation())
    pair = t[(t.scope == "pair") & (t.evaluator_x == "e1") & (t.evaluator_y == "e2")].set_index("measure")
    # e1 AABBNA, e2 AABBNB: 5 of 6 agree
    assert pair.loc["raw agreement", "value"] == pytest.approx(5 / 6) and pair.loc["raw agreement", "n"] == 6
    assert pair.loc["Cohen's kappa", "value"] == pytest.approx(
        cohen_kappa_score(list(LABELS["e1"]), list(LABELS["e2"]))
    )
    s = t[t.scope == "set"].set_index("measure")
    table, _ = aggregate_raters(np.array([[("ANB").index(LABELS[e][k]) for e in LABELS] for k in range(6)]))
    assert s.loc["Fleiss' kappa", "value"] == pytest.approx(fleiss_kappa(table))
    codes = {"A": 1, "N": 2, "B": 3}
    alpha = krippendorff_alpha_raters([[codes[c] for c in LABELS[e]] for e in LABELS], level="nominal")
    assert s.loc["Krippendorff's alpha (nominal)", "value"] == pytest.approx(alpha)
    # consensus on i0 (A), i2 (B), i4 (N), 5 judgments each; deviating: en on i0 and i2, ex on
    # i0, i2 and i4 - 5 of 15
    assert (
        s.loc["human deviation rate", "value"] == pytest.approx(5 / 15)
        and s.loc["human deviation rate", "n"] == 15
    )
    ev = t[t.scope == "evaluator"].set_index(["evaluator_x", "measure"])["value"]
    assert ev[("en", "neutral rate")] == 1.0 and ev[("e1", "neutral rate")] == pytest.approx(1 / 6)
    assert ev[("e1", "deviation rate")] == 0.0  # as evaluator_traits: the others' majority on i4 is N
    # validation: consensus on i0 (A), i2 (B), i4 (N); e1 AABBNA deviates on none, ex BBAAAB on all three
    val = t[t.scope == "validation"].set_index(["evaluator_x", "measure"])["value"]
    assert val[("e1", "deviating validation pairs")] == 0 and val[("ex", "deviating validation pairs")] == 3
    assert val[("en", "deviating validation pairs")] == 2  # N on i0 and i2
    assert val[("all", "consensus-eligible validation pairs")] == 15
    assert val[("all", "deviating validation pairs")] == sum(
        LABELS[e][k] != {0: "A", 2: "B", 4: "N"}[k] for e in LABELS for k in (0, 2, 4)
    )


def test_annotators_of_the_full_pandalm_file(shared_data):
    from judgelab.studies.simulation.annotators import annotator_table
    from judgelab.studies.simulation.data import load_records
    from judgelab.studies.simulation.splits import make_splits

    recs = load_records(shared_data / "pandalm" / "testset-v1.json", "pandalm")
    t = annotator_table(
        recs, make_splits(recs, pool=40, validation=60, seed=0, group_by="context", balance_neutral=True)
    )
    kappa = t.loc[t.measure == "Cohen's kappa", "value"]
    # PandaLM removed divergent items: its annotators agree far more than the paper's
    assert len(kappa) == 3 and kappa.between(0.85, 0.88).all()
    s = t[t.scope == "set"].set_index("measure")["value"]
    assert s["Fleiss' kappa"] == pytest.approx(0.864, abs=5e-4)
    assert 0.03 < s["human deviation rate"] < 0.05  # the paper's: 0.202 / 0.233
    dev = t.loc[(t.scope == "evaluator") & (t.measure == "deviation rate"), "value"]
    assert dev.between(0.03, 0.06).all()  # the paper's annotators: 0.20-0.23
    v = t[(t.scope == "validation") & (t.evaluator_x == "all")].set_index("measure")["value"]
    assert v["validation pairs"] == 180 and v["deviating validation pairs"] <= 10
