"""The shared core's value agreement (Bland-Altman, judgelab.analysis.blandaltman) and gap-weighted
tau (judgelab.analysis.taugap) on hand-computed cases; tau_gap's are auto-judge-evaluate's
(trec-auto-judge, tests/test_tau_gap.py), reproduced, with symmetric and tie cases by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judgelab.analysis.blandaltman import BLAND_ALTMAN_KEYS, bland_altman, measure_family, measure_range
from judgelab.analysis.taugap import tau_gap, tau_gap_at_k

# --- Bland-Altman ------------------------------------------------------------------------------


def test_bland_altman_hand_case():
    # d = .1 .2 .3 0: bias .15; squared deviations .0025 .0025 .0225 .0225 = .05, / 3 -> sd
    # sqrt(1/60) = .129099; limits .15 -+ 1.96 sd. m = .45 .5 .75 .4 (mean .525): Sxy = .055,
    # Sxx = .0725 -> slope .055 / .0725 = .758621, intercept .15 - slope x .525 = -.248276
    got = bland_altman([0.5, 0.6, 0.9, 0.4], [0.4, 0.4, 0.6, 0.4])
    assert list(got) == BLAND_ALTMAN_KEYS
    sd = math.sqrt(0.05 / 3)
    assert got["n"] == 4
    assert got["bias"] == pytest.approx(0.15)
    assert got["sd"] == pytest.approx(sd)
    assert (got["loa_low"], got["loa_high"]) == pytest.approx((0.15 - 1.96 * sd, 0.15 + 1.96 * sd))
    assert got["slope"] == pytest.approx(0.055 / 0.0725)
    assert got["intercept"] == pytest.approx(0.15 - 0.055 / 0.0725 * 0.525)
    assert 0.0 < got["slope_p"] < 1.0


def test_bland_altman_equal_values_missing_pairs_and_too_few():
    same = bland_altman([0.2, 0.5, 0.7], [0.2, 0.5, 0.7])
    assert (same["bias"], same["sd"], same["loa_low"], same["loa_high"], same["slope"]) == (0, 0, 0, 0, 0)
    # a pair with a missing value is left out; a constant shift has no proportional bias
    shifted = bland_altman([0.3, float("nan"), 0.6, 0.9], [0.2, 0.1, 0.5, 0.8])
    assert shifted["n"] == 3 and shifted["bias"] == pytest.approx(0.1)
    assert shifted["sd"] == pytest.approx(0.0, abs=1e-12) and shifted["slope"] == pytest.approx(
        0.0, abs=1e-12
    )
    two = bland_altman([0.3, 0.5], [0.1, 0.4])
    assert two["bias"] == pytest.approx(0.15) and two["sd"] == pytest.approx(math.sqrt(0.005))
    assert math.isnan(two["slope"]) and math.isnan(bland_altman([0.3], [0.1])["sd"])
    with pytest.raises(ValueError, match="one length"):
        bland_altman([0.1, 0.2], [0.1])


def test_measure_ranges_by_family_and_unknown_flagged():
    assert measure_family("P(rel=2)@10") == "P" and measure_family("alpha_nDCG@20") == "alpha_nDCG"
    for m in ("nDCG@10", "P(rel=2)@10", "AP", "MAP", "RBP(rel=2)", "R(rel=2)@100", "RR", "Compat(p=0.8)"):
        assert measure_range(m) == (0.0, 1.0), m
    assert measure_range("NumRet") is None and measure_range("NumRel") is None


# --- tau_gap: auto-judge-evaluate's cases (tau_gap(truth, prediction)) -----------------------------


def test_tau_gap_too_few_and_unequal():
    assert math.isnan(tau_gap([1, 2], [10, 20]))  # theirs raises; ours is n/a below 3 systems
    with pytest.raises(ValueError):
        tau_gap([1, 2, 3, 4], [10, 20, 30, 40, 50])


def test_tau_gap_perfect_agreement_and_reversal():
    assert tau_gap([0.9, 0.5, 0.45, 0.2], [4, 3, 2, 1]) == pytest.approx(1.0)
    assert tau_gap([0.9, 0.5, 0.45, 0.2], [1, 2, 3, 4]) == pytest.approx(-1.0)


def test_tau_gap_hand_computed_three_items():
    # judge order A, C, B. C: above {A}, gap .5 right -> 1. B: above {A (.4, right), C (.1,
    # wrong)} -> .4 / .5 = .8. 2 x (1 + .8) / 2 - 1 = .8
    assert tau_gap([0.9, 0.5, 0.4], [3, 1, 2]) == pytest.approx(0.8)


def test_tau_gap_small_gap_swap_costs_less_than_large_gap_swap():
    truth = [0.90, 0.50, 0.45, 0.20]
    assert tau_gap(truth, [0.8, 0.5, 0.6, 0.1]) == pytest.approx(0.9259259, abs=1e-6)  # B/C, gap .05
    assert tau_gap(truth, [0.6, 0.8, 0.4, 0.1]) == pytest.approx(0.3333333, abs=1e-6)  # A/B, gap .40


def test_tau_gap_scaling_asymmetry_ties():
    pred = [0.8, 0.5, 0.6, 0.1]
    assert tau_gap([0.9, 0.5, 0.45, 0.2], pred) == pytest.approx(tau_gap([90, 50, 45, 20], pred))
    assert tau_gap([0.9, 0.5, 0.45, 0.2], pred) != pytest.approx(tau_gap(pred, [0.9, 0.5, 0.45, 0.2]))
    assert tau_gap([1, 2, 3], [5, 5, 5]) == 0.0  # the judge ties every system
    # the judge ties B and C: neither is above the other; each has A above, a right gap -> 1
    assert tau_gap([0.9, 0.5, 0.4], [3, 1, 1]) == pytest.approx(1.0)


def test_tau_gap_at_k_is_over_the_reference_top_k():
    # their evaluator's case: top 3 by truth are run_01..03, only the small B/C swap remains
    truth, pred = [0.9, 0.5, 0.45, 0.2], [0.8, 0.5, 0.6, 0.1]
    assert tau_gap_at_k(truth, pred, 3) == pytest.approx(tau_gap([0.9, 0.5, 0.45], [0.8, 0.5, 0.6]))
    # by hand: judge order A, C, B; C: above {A}, gap .45 right -> 1; B: {A .4 right, C .05
    # wrong} -> .4 / .45; 2 x (1 + 8/9) / 2 - 1 = 8/9
    assert tau_gap_at_k(truth, pred, 3) == pytest.approx(8 / 9)
    assert tau_gap_at_k(truth, pred, 10) == pytest.approx(tau_gap(truth, pred))
    # systems given in another order: the same top 3 (ordered by the reference, not by position)
    order = [3, 1, 0, 2]
    assert tau_gap_at_k(np.take(truth, order), np.take(pred, order), 3) == pytest.approx(8 / 9)


def test_tau_gap_symmetric_and_tie_cases_by_hand():
    # reference 4 3 2 1; the judge swaps the middle pair: order A C B D.
    # C: {A: gap 2 right} -> 1. B: {A: 1 right, C: 1 wrong} -> 1/2. D: {A 3, C 1, B 2, all right} -> 1
    # 2 x (1 + 1/2 + 1) / 3 - 1 = 2/3
    assert tau_gap([4, 3, 2, 1], [4, 2, 3, 1]) == pytest.approx(2 / 3)
    # the same swap (gap 1) at the top costs more than at the bottom: the top pair swapped,
    # order B A C D: A {B: 1 wrong} -> 0; C, D -> 1: 2 x 2/3 - 1 = 1/3. The bottom pair, order
    # A B D C: B, D -> 1; C {A 2, B 1 right, D 1 wrong} -> 3/4: 2 x (2.75 / 3) - 1 = 5/6
    assert tau_gap([4, 3, 2, 1], [3, 4, 2, 1]) == pytest.approx(1 / 3)
    assert tau_gap([4, 3, 2, 1], [4, 3, 1, 2]) == pytest.approx(5 / 6)
    # any order-preserving judge gives 1, the reversed one -1, whatever the spacing
    assert tau_gap([0.9, 0.2, 0.1], [100, 7, 6]) == pytest.approx(1.0)
    assert tau_gap([0.9, 0.2, 0.1], [-100, -7, -6]) == pytest.approx(-1.0)
    # reference ties B and C (2, 2) and the judge puts C above B: gap 0 weighs nothing.
    # C: {A: 2 right} -> 1; B: {A: 2 right, C: 0} -> 1; D: {A 3, C 1, B 1} -> 1
    assert tau_gap([4, 2, 2, 1], [4, 2, 3, 1]) == pytest.approx(1.0)
    # the reference ties every system: no gap anywhere -> n/a
    assert math.isnan(tau_gap([1, 1, 1], [3, 2, 1]))
    # judge ties A and B at the top: neither counts; C has both above, D all three
    assert tau_gap([3, 2, 1, 0], [5, 5, 1, 0]) == pytest.approx(1.0)
    assert tau_gap([3, 2, 1, 0], [0, 1, 5, 5]) == pytest.approx(-1.0)
