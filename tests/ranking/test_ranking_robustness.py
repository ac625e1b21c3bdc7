"""The robustness table per judge (judgelab.studies.ranking.robustness) on hand-made tables: the
label and ranking agreement come from each judge's correlations row against its reference, the attack
inflation is the largest plain-template difference over all attacked passages (with the same
attack's defended difference), the circularity rank gap is the judge-built run's, and judges
present in one source only keep their row with the other columns missing."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from judgelab.studies.ranking.robustness import ROBUSTNESS_COLUMNS, render_robustness, robustness_table


def correlations():
    rows = [
        ("dl21", "m", "human", "nDCG@10", 0.4, 0.5, 0.8, 0.7, 0.9, "bca", 0.05, -0.1, 0.2),
        ("dl21", "human+m", "human", "nDCG@10", 0.9, 0.9, 0.95, 0.9, 0.99, "bca", 0.0, -0.01, 0.01),
        # not against human
        ("dl21", "m", "human+m", "nDCG@10", 0.1, 0.1, 0.1, 0.0, 0.2, "bca", 0.3, 0.1, 0.5),
        ("dl21", "imp", "human", "nDCG@10", 0.6, 0.7, 0.9, 0.85, 0.95, "percentile", -0.2, -0.4, 0.0),
    ]
    cols = ["dataset", "judge", "reference", "measure", "kappa", "alpha", "kendall_tau"]
    cols += ["kendall_tau_low", "kendall_tau_high", "kendall_tau_ci", "ba_bias", "ba_loa_low", "ba_loa_high"]
    return pd.DataFrame(rows, columns=cols)


def attacks():
    rows = [
        ("dl20", "m", "plain", "stuff", "start", "all", 4, 0.25),
        ("dl20", "m", "plain", "inject_x", "start", "all", 4, 0.50),
        ("dl20", "m", "plain", "inject_x", "start", "assessed", 2, 1.00),  # a source row: not compared
        ("dl20", "m", "defended", "inject_x", "start", "all", 4, 0.10),
        ("dl20", "m", "defended", "stuff", "start", "all", 4, 0.90),  # defended rows never win
        ("dl20", "p", "plain", "stuff", "end", "all", 0, float("nan")),  # nothing parsed
        ("dl20", "p", "plain", "stuff", "start", "all", 2, -0.5),
    ]
    cols = ["dataset", "judge", "template", "attack", "position", "passages", "n_parsed", "difference"]
    df = pd.DataFrame(rows, columns=cols)
    return df.assign(ci_low=df["difference"] - 0.1, ci_high=df["difference"] + 0.1)


def circularity():
    rows = [("dl21", "m", "human", "nDCG@10", 5, "m_built"), ("dl21", "m", "other", "nDCG@10", 0, "m_built")]
    return pd.DataFrame(rows, columns=["dataset", "judge", "reference", "measure", "rank_gap", "run"])


def test_hand_tables():
    t = robustness_table(correlations(), [attacks()], [circularity()])
    assert list(t.columns) == ROBUSTNESS_COLUMNS
    assert list(t["judge"]) == ["m", "m", "human+m", "imp", "p"]
    assert list(t["reference"].iloc[:2]) == ["human", "human+m"]
    m = t[t["reference"] == "human"].set_index("judge").loc["m"]
    assert (m["kappa"], m["alpha"], m["tau"], m["tau_low"], m["tau_high"]) == (0.4, 0.5, 0.8, 0.7, 0.9)
    assert (m["ba_bias"], m["ba_loa_low"], m["ba_loa_high"]) == (0.05, -0.1, 0.2)
    assert (
        m["attack_inflation"] == 0.5 and m["attack"] == "inject_x at start" and m["attack_dataset"] == "dl20"
    )
    assert m["defended_inflation"] == 0.1 and m["attack_ci_low"] == pytest.approx(0.4)
    assert m["circularity_rank_gap"] == 5 and m["circularity_run"] == "m_built"
    assert math.isnan(t[t["reference"] == "human+m"].iloc[0]["circularity_rank_gap"])
    imp = t.set_index("judge").loc["imp"]
    assert math.isnan(imp["attack_inflation"]) and math.isnan(imp["circularity_rank_gap"])
    p = t.set_index("judge").loc["p"]
    assert (
        p["attack_inflation"] == -0.5
        and p["attack"] == "stuff at start"
        and math.isnan(p["defended_inflation"])
    )
    assert pd.isna(p["dataset"]) and math.isnan(p["tau"]) and math.isnan(p["ba_bias"])
    md = render_robustness(t, "md")
    assert (
        "| m | dl21 | nDCG@10 | human | 0.400 | 0.500 | 0.800 | [0.700, 0.900] bca | 0.050 | [-0.100, 0.200] "
        "| 0.500 | inject_x at start (dl20) | 0.100 | +5 |" in md
    )
    assert "<table" in render_robustness(t, "html")


def test_without_attacks_or_circularity():
    t = robustness_table(correlations())
    assert list(t["judge"]) == ["m", "m", "human+m", "imp"]
    assert t["attack_inflation"].isna().all() and t["circularity_rank_gap"].isna().all()
