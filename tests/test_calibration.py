"""Calibration (issue 28, item 1): ECE with equal-width and equal-mass bins, the Brier score and
the reliability bins on hand-computed cases, against scikit-learn's calibration_curve where they
overlap, a judge's label distribution and confidence with missing pairs counted, and a bin count
below 1 refused naming its config key."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import calibration_curve

from judgelab.analysis.calibration import (
    CALIBRATION_COLUMNS,
    RELIABILITY_COLUMNS,
    CalibrationSettings,
    brier,
    calibration_tables,
    ece,
    expected_grade,
    judge_calibration,
    relevance_probability,
    reliability,
    reliability_figure,
)
from judgelab.errors import InputError
from judgelab.project.config import load_config, validate
from judgelab.wiring.facade import Project

ROOT = Path(__file__).resolve().parents[1]
GRADED = ("0", "1", "2", "3")

# p .1 .2 .3 .9, outcome 0 0 1 1
P = [0.1, 0.2, 0.3, 0.9]
Y = [0, 0, 1, 1]


def test_equal_width_ece_by_hand():
    # 2 bins [0, .5], (.5, 1]: {.1 .2 .3} mean .2, observed 1/3 -> gap 2/15 x 3/4; {.9} observed 1
    # -> gap .1 x 1/4: ECE = .1 + .025
    assert ece(P, Y, 2, "equal_width") == pytest.approx(0.125)
    # 1 bin: |mean p - mean y| = |.375 - .5|
    assert ece(P, Y, 1, "equal_width") == pytest.approx(0.125)
    # 10 bins: every pair alone in its bin, ECE = mean |p - y| = (.1 + .2 + .7 + .1) / 4
    assert ece(P, Y, 10, "equal_width") == pytest.approx(0.275)


def test_equal_mass_ece_by_hand():
    # 2 bins with the median .25 as the inner edge: {.1 .2} mean .15 observed 0, {.3 .9} mean .6
    # observed 1: ECE = .5 x .15 + .5 x .4
    assert ece(P, Y, 2, "equal_mass") == pytest.approx(0.275)
    bins = reliability(P, Y, 2, "equal_mass")
    assert list(bins["n"]) == [2, 2]
    assert list(bins["lower"]) == pytest.approx([0.1, 0.25]) and list(bins["upper"]) == pytest.approx(
        [0.25, 0.9]
    )
    assert list(bins["mean_probability"]) == pytest.approx([0.15, 0.6])
    assert list(bins["observed"]) == [0.0, 1.0]


def test_empty_bins_are_rows_with_no_pair_and_do_not_weigh():
    bins = reliability([0.05, 0.95], [0, 1], 10, "equal_width")
    assert list(bins.columns) == ["bin", "lower", "upper", "n", "mean_probability", "observed"]
    assert list(bins["n"]) == [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert bins.loc[1:8, ["mean_probability", "observed"]].isna().all().all()
    assert ece([0.05, 0.95], [0, 1], 10) == pytest.approx(0.05)
    # a right edge belongs to its bin: .5 is in [0, .5], 1 in (.5, 1]
    assert list(reliability([0.5, 1.0], [1, 1], 2, "equal_width")["n"]) == [1, 1]


def test_all_same_probabilities_share_one_bin():
    p, y = [0.7] * 4, [1, 1, 0, 1]
    for binning in ("equal_width", "equal_mass"):
        assert ece(p, y, 5, binning) == pytest.approx(0.05)  # |.75 - .7|
    mass = reliability(p, y, 5, "equal_mass")
    assert list(mass["n"]) == [4, 0, 0, 0, 0]  # ties are never split across bins
    assert mass.loc[0, "observed"] == 0.75


def test_no_pair_gives_nan():
    assert math.isnan(ece([], [], 10)) and math.isnan(ece([], [], 3, "equal_mass"))
    assert math.isnan(brier([], []))
    assert (reliability([], [], 3, "equal_mass")["n"] == 0).all()


def test_brier_by_hand():
    assert brier(P, Y) == pytest.approx((0.01 + 0.04 + 0.49 + 0.01) / 4)
    assert brier([0.8, 0.6], [1, 1]) == pytest.approx((0.04 + 0.16) / 2)  # one class only
    assert brier([0.0, 1.0], [0, 1]) == 0.0


def test_bad_values_and_bin_counts_are_refused():
    with pytest.raises(ValueError, match="at least 1 bin"):
        ece(P, Y, 0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ece([0.5, 1.2], [0, 1], 2)
    with pytest.raises(ValueError, match="0 or 1"):
        brier([0.5], [2])
    with pytest.raises(ValueError, match="unknown binning"):
        ece(P, Y, 2, "quantile")


@pytest.mark.parametrize("bins", [1, 3, 10])
@pytest.mark.parametrize(("binning", "strategy"), [("equal_width", "uniform"), ("equal_mass", "quantile")])
def test_the_bins_are_those_of_calibration_curve(bins, binning, strategy):
    rng = np.random.default_rng(7)
    p = np.round(rng.uniform(size=200), 2)  # ties and values on the edges
    y = (rng.uniform(size=200) < p).astype(int)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=bins, strategy=strategy)
    full = reliability(p, y, bins, binning).query("n > 0")
    assert list(full["observed"]) == pytest.approx(list(prob_true))
    assert list(full["mean_probability"]) == pytest.approx(list(prob_pred))
    weights = full["n"].to_numpy() / len(p)
    assert ece(p, y, bins, binning) == pytest.approx(float(np.sum(weights * np.abs(prob_true - prob_pred))))


def hand_judge() -> pd.DataFrame:
    """Five pairs: one unparsed (no label, no distribution), one without a confidence."""
    return pd.DataFrame(
        {
            "grade": pd.array([0, 1, 2, 3, 2], dtype="Int64"),
            "label": pd.array([0, 1, None, 3, 2], dtype="Int64"),
            "p0": pd.array([0.7, 0.2, None, 0.0, 0.1], dtype="Float64"),
            "p1": pd.array([0.1, 0.5, None, 0.0, 0.2], dtype="Float64"),
            "p2": pd.array([0.1, 0.2, None, 0.5, 0.3], dtype="Float64"),
            "p3": pd.array([0.1, 0.1, None, 0.5, 0.4], dtype="Float64"),
            "confidence": pd.array([0.9, 0.5, None, None, 0.8], dtype="Float64"),
        }
    )


def test_a_judge_by_hand():
    t = hand_judge()
    p_rel = relevance_probability(t, GRADED)
    assert list(p_rel.dropna()) == pytest.approx([0.2, 0.3, 1.0, 0.7]) and pd.isna(p_rel[2])
    assert list(expected_grade(t, GRADED).dropna()) == pytest.approx([0.6, 1.2, 2.5, 2.0])
    rows, bins = judge_calibration(t, GRADED, 3, "verbal_confidence")
    dist, conf = rows
    assert dist["signal"] == "label_distribution" and conf["signal"] == "verbal_confidence"
    # P(relevant) .2 .3 1 .7 against relevant 0 0 1 1 (the unparsed pair left out)
    assert (dist["n_pairs"], dist["n"], dist["n_missing"], dist["bins"]) == (5, 4, 1, 3)
    assert dist["mean_probability"] == pytest.approx(0.55) and dist["observed"] == 0.5
    assert dist["brier"] == pytest.approx((0.04 + 0.09 + 0.0 + 0.09) / 4)
    # 3 equal-width bins: {.2 .3} mean .25 observed 0, {1 .7} mean .85 observed 1
    assert dist["ece_equal_width"] == pytest.approx(0.5 * 0.25 + 0.5 * 0.15)
    # equal mass (edges at the terciles .3, .7): {.2 .3}, {.7}, {1}
    assert dist["ece_equal_mass"] == pytest.approx(0.5 * 0.25 + 0.25 * 0.3 + 0.0)
    # expected grades .6 1.2 2.5 2 against 0 1 3 2
    assert dist["expected_grade_mae"] == pytest.approx((0.6 + 0.2 + 0.5 + 0.0) / 4)
    # confidence .9 .5 .8 (labels all correct); the unparsed pair and the one not asked are missing
    assert (conf["n"], conf["n_missing"]) == (3, 2)
    assert conf["observed"] == 1.0 and conf["brier"] == pytest.approx((0.01 + 0.25 + 0.04) / 3)
    assert math.isnan(conf["expected_grade_mae"])
    assert set(bins["binning"]) == {"equal_width", "equal_mass"} and len(bins) == 2 * 2 * 3
    assert bins.groupby(["signal", "binning"])["n"].sum().to_dict() == {
        ("label_distribution", "equal_mass"): 4,
        ("label_distribution", "equal_width"): 4,
        ("verbal_confidence", "equal_mass"): 3,
        ("verbal_confidence", "equal_width"): 3,
    }


def test_a_binary_judge_and_one_without_a_distribution():
    t = pd.DataFrame(
        {
            "grade": pd.array([3, 1, 2, 0], dtype="Int64"),
            "label": pd.array([1, 1, 0, 0], dtype="Int64"),
            # renormalised over the binary labels: P(relevant) = p1 / (p0 + p1)
            "p0": [0.2, 0.3, 0.8, 0.6],
            "p1": [0.6, 0.7, 0.2, 0.2],
            "confidence": [0.75, 0.7, 0.8, 0.75],
        }
    )
    (dist, conf), _ = judge_calibration(t, ("0", "1"), 2, "token_confidence_full")
    assert dist["mean_probability"] == pytest.approx((0.75 + 0.7 + 0.2 + 0.25) / 4)
    assert dist["brier"] == pytest.approx((0.0625 + 0.49 + 0.64 + 0.0625) / 4)
    assert math.isnan(dist["expected_grade_mae"])  # no grades on the binary scale
    # correct against the binarised grades 1 0 1 0: labels 1 1 0 0 -> right, wrong, wrong, right
    assert conf["observed"] == 0.5 and conf["n"] == 4
    imported = t.assign(p0=np.nan, p1=np.nan, confidence=np.nan)
    (dist, conf), bins = judge_calibration(imported, ("0", "1"), 2, "token_confidence_full")
    assert (dist["n"], dist["n_missing"], conf["n"], conf["n_missing"]) == (0, 4, 0, 4)
    assert math.isnan(dist["ece_equal_width"]) and math.isnan(dist["brier"])
    assert (bins["n"] == 0).all()


def test_the_tables_and_the_figure(tmp_path):
    judges = [
        ({"dataset": "fx", "model": "m", "persona": p}, hand_judge(), GRADED, "verbal_confidence")
        for p in ("default", "LA")
    ]
    table, bins = calibration_tables(judges, 4)
    assert list(table.columns) == ["dataset", "model", "persona", *CALIBRATION_COLUMNS]
    assert list(bins.columns) == ["dataset", "model", "persona", *RELIABILITY_COLUMNS]
    assert len(table) == 4 and len(bins) == 2 * 2 * 2 * 4
    reliability_figure(bins, ["dataset", "model"], "persona", "t", tmp_path / "r.png", tmp_path / "r.pdf")
    assert (tmp_path / "r.png").stat().st_size > 1000 and (tmp_path / "r.pdf").stat().st_size > 1000
    # no judge at all: empty tables with their columns, and a figure that says n/a
    table, bins = calibration_tables([], 4)
    assert list(table.columns) == CALIBRATION_COLUMNS and table.empty and bins.empty
    reliability_figure(bins, ["dataset"], "judge", "t", tmp_path / "e.png")
    assert (tmp_path / "e.png").stat().st_size > 1000


def test_a_bin_count_below_1_names_the_config_key():
    config = load_config(directory=ROOT)
    assert config["calibration"] == {"bins": 10}  # the schema's default
    assert Project.load(directory=ROOT).calibration() == CalibrationSettings(bins=10)
    config["calibration"] = {"bins": 0}
    with pytest.raises(InputError, match=r"config key 'calibration.bins': 0 is less than the minimum of 1"):
        validate(config)
