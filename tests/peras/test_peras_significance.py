"""Persona vs default significance: the vectorised metrics equal judgelab.studies.peras.metrics, the paired
bootstrap finds a constructed difference (and not a non-existent one), Holm equals statsmodels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.analysis.agreement import agreement
from judgelab.studies.peras import significance as sg
from judgelab.studies.peras.metrics import job_metrics, sakai


def _pairs(n_queries=20, per_query=12, seed=0):
    rng = np.random.default_rng(seed)
    rows = [
        (f"q{q}", f"d{q}_{i}", int(rng.integers(0, 4))) for q in range(n_queries) for i in range(per_query)
    ]
    return pd.DataFrame(rows, columns=["qid", "docid", "grade"])


def _judge(pairs, p_right, seed, missing=0.0, conf_right=85.0, conf_wrong=60.0):
    rng = np.random.default_rng(seed)
    n = len(pairs)
    g = pairs["grade"].to_numpy()
    lab = np.where(rng.random(n) < p_right, g, rng.integers(0, 4, n))
    conf = np.where(lab == g, conf_right, conf_wrong) + rng.normal(0, 8, n)
    out = pairs[["qid", "docid"]].copy()
    out["label"] = pd.array(lab, dtype="Int64")
    out["confidence"] = pd.array(np.clip(conf, 0, 100), dtype="Float64")
    miss = rng.random(n) < missing
    out.loc[miss, "label"] = pd.NA
    out.loc[miss | (rng.random(n) < missing), "confidence"] = pd.NA
    return out


# judgelab.analysis.agreement.agreement lets scikit-learn's UndefinedMetricWarning through for the undefined
# kappa case below (it only silences RuntimeWarning); the NaN is what is tested
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")
def test_vectorised_metrics_equal_sklearn_and_sakai():
    pairs = _pairs(seed=1)
    for seed in range(5):
        j = _judge(pairs, 0.5, seed, missing=0.15)
        merged = pairs.merge(j, on=["qid", "docid"])
        stats = sg.query_stats(merged, sorted(pairs["qid"].unique())).sum(axis=0)
        got = sg.metrics_from_stats(stats)
        want = job_metrics(merged)
        parsed = merged[merged["label"].notna()]
        ref = agreement(parsed["grade"], parsed["label"])
        for m in ("kappa", "qwk", "macro_f1"):
            assert got[m] == pytest.approx(ref[m], abs=1e-12)
            assert got[m] == pytest.approx(want[m], abs=1e-12)
        wc = parsed[parsed["confidence"].notna()]
        s = sakai((wc["label"] == wc["grade"]).to_numpy(), wc["confidence"].to_numpy(dtype=float) / 100)
        assert got["HMR"] == pytest.approx(s["HMR"], abs=1e-12)
    # a label never used by either rater, and undefined kappa
    cm = np.zeros((4, 4))
    cm[0, 0] = cm[1, 1] = 3
    cm[1, 0] = 1
    y = [0, 0, 0, 1, 1, 1, 1]
    yhat = [0, 0, 0, 1, 1, 1, 0]
    assert sg.macro_f1_from_confusion(cm) == pytest.approx(agreement(y, yhat)["macro_f1"])
    one = np.zeros((4, 4))
    one[2, 2] = 5
    assert np.isnan(sg.kappa_from_confusion(one)) and np.isnan(agreement([2] * 5, [2] * 5)["kappa"])


def test_bootstrap_finds_a_known_difference():
    pairs = _pairs(n_queries=30, seed=2)
    # LA: right 90% of the time and calibrated; default (and HA): right 30%, overconfident
    good = _judge(pairs, 0.9, 10, conf_right=90, conf_wrong=20)
    bad = _judge(pairs, 0.3, 11, conf_right=60, conf_wrong=80)
    res = sg.persona_vs_reference(
        pairs,
        {"default": bad, "LA": good, "HA": _judge(pairs, 0.3, 12, conf_right=60, conf_wrong=80)},
        n_boot=2000,
        seed=3,
        alpha=0.05,
    )
    la = res[res["persona"] == "LA"].set_index("metric")
    for m in ("kappa", "qwk", "macro_f1", "HMR"):
        row = la.loc[m]
        assert row["delta"] > 0 and row["ci_low"] > 0, (m, row.to_dict())
        assert row["p"] == pytest.approx(1 / 2001) and row["p_holm"] < 0.01 and row["significant"]
    # the observed delta is exactly the difference of the metrics-table values
    mg, mb = (job_metrics(pairs.merge(j, on=["qid", "docid"])) for j in (good, bad))
    assert la.loc["kappa", "delta"] == pytest.approx(mg["kappa"] - mb["kappa"], abs=1e-12)
    assert la.loc["HMR", "delta"] == pytest.approx(mg["HMR"] - mb["HMR"], abs=1e-12)
    # right with probability p, else a uniform guess: kappa is about p, so the true gain is 0.6
    k = la.loc["kappa"]
    assert abs(k["delta"] - 0.6) < 0.1 and k["ci_low"] < k["delta"] < k["ci_high"]
    assert 0.05 < k["ci_high"] - k["ci_low"] < 0.3
    # two draws of the same judge: no difference
    ha = res[res["persona"] == "HA"].set_index("metric")
    assert (ha["ci_low"] < 0).all() and (ha["ci_high"] > 0).all()
    assert not ha["significant"].any()
    assert set(res.columns) >= {"ci_low", "ci_high", "p_holm", "n_queries", "n_valid"}
    assert (res["n_queries"] == 30).all()


def test_bootstrap_resamples_queries_not_pairs():
    from judgelab.analysis.bootstrap import resample_counts, resample_indices

    counts = resample_counts(n_units=7, n_boot=50, seed=0)
    assert counts.shape == (50, 7) and (counts.sum(axis=1) == 7).all()
    assert (counts == resample_counts(7, 50, 0)).all()
    # the same resamples as the ranking study's topic bootstrap draws with the same seed
    draws = resample_indices(7, 50, 0)
    assert all((np.bincount(row, minlength=7) == c).all() for row, c in zip(draws, counts))


def test_join_metrics_marks_significant_rows():
    metrics = pd.DataFrame(
        {"dataset": "d", "model": "m", "template": "t", "persona": ["default", "LA"], "kappa": [0.1, 0.5]}
    )
    sig = pd.DataFrame(
        {
            "dataset": "d",
            "model": "m",
            "template": "t",
            "persona": "LA",
            "metric": ["kappa", "qwk"],
            "delta": [0.4, 0.1],
            "ci_low": [0.2, -0.1],
            "ci_high": [0.6, 0.3],
            "p_holm": [0.001, 0.4],
            "significant": [True, False],
        }
    )
    out = sg.join_metrics(metrics, sig).set_index("persona")
    assert out.loc["LA", "kappa_sig"] == "*" and out.loc["LA", "qwk_sig"] == ""
    assert out.loc["LA", "kappa_delta"] == pytest.approx(0.4)
    assert pd.isna(out.loc["default", "kappa_delta"])


def test_significance_on_the_common_support_scores_every_judge_on_the_same_pairs():
    """The persona whose answers parse unevenly: on the common support both judges of a
    comparison are scored on the pairs every persona answered, the values equal the metrics
    table's ``common_*`` figures, and Holm runs within each support."""
    from judgelab.studies.peras.metrics import common_support

    pairs = _pairs(n_queries=16, seed=4)
    judged = {
        "default": _judge(pairs, 0.5, 20, missing=0.05),
        "LA": _judge(pairs, 0.8, 21, missing=0.4),
        "HA": _judge(pairs, 0.5, 22, missing=0.1),
    }
    res = sg.by_support(pairs, judged, n_boot=300, seed=5, alpha=0.05)
    assert set(res["support"]) == set(sg.SUPPORTS) and len(res) == 2 * 2 * len(sg.METRICS)
    parsed = res[res["support"] == "parsed"].drop(columns="support").reset_index(drop=True)
    alone = sg.persona_vs_reference(pairs, judged, n_boot=300, seed=5, alpha=0.05)
    pd.testing.assert_frame_equal(parsed, alone, check_dtype=False)
    common = common_support(list(judged.values()))
    assert 0 < len(common) < len(pairs)
    on_common = res[res["support"] == "common"].set_index(["persona", "metric"])
    for p in ("LA", "HA"):
        want = job_metrics(pairs.merge(judged[p].merge(common, on=["qid", "docid"]), on=["qid", "docid"]))
        ref = job_metrics(
            pairs.merge(judged["default"].merge(common, on=["qid", "docid"]), on=["qid", "docid"])
        )
        assert on_common.loc[(p, "kappa"), "value"] == pytest.approx(want["kappa"], abs=1e-12)
        assert on_common.loc[(p, "kappa"), "reference_value"] == pytest.approx(ref["kappa"], abs=1e-12)
        assert on_common.loc[(p, "HMR"), "value"] == pytest.approx(want["HMR"], abs=1e-12)
    # the parsed reading scores LA on its own (fewer) pairs: another value
    by_parsed = parsed.set_index(["persona", "metric"])
    assert by_parsed.loc[("LA", "kappa"), "value"] != pytest.approx(on_common.loc[("LA", "kappa"), "value"])
    # the joined table carries both: the published columns and common_* beside them
    metrics = pd.DataFrame(
        {"dataset": "d", "model": "m", "template": "t", "persona": ["default", "LA", "HA"]}
    )
    ids = res.assign(dataset="d", model="m", template="t")
    joined = sg.join_metrics(metrics, ids).set_index("persona")
    assert joined.loc["LA", "kappa_delta"] == pytest.approx(by_parsed.loc[("LA", "kappa"), "delta"])
    assert joined.loc["LA", "common_kappa_delta"] == pytest.approx(on_common.loc[("LA", "kappa"), "delta"])
    assert pd.isna(joined.loc["default", "common_kappa_delta"])
