"""judgelab.analysis.agreement.krippendorff_alpha against Krippendorff's coincidence-matrix formula computed
here by hand, and its degenerate cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from judgelab.analysis.agreement import krippendorff_alpha
from judgelab.errors import InputError


def nominal(c, k, n, domain):
    return float(c != k)


def ordinal(c, k, n, domain):
    """(sum of n_g for g from c to k in the domain's order - (n_c + n_k) / 2)^2."""
    i, j = sorted((domain.index(c), domain.index(k)))
    return (sum(n[g] for g in domain[i : j + 1]) - (n[c] + n[k]) / 2) ** 2


def interval(c, k, n, domain):
    return float(c - k) ** 2


def alpha_by_hand(a, b, delta, domain=None) -> float:
    """Krippendorff's alpha of two raters from the coincidence matrix: every item labelled by both
    (m_u = 2) adds its two ordered pairs (x, y), (y, x), each with weight 1 / (m_u - 1) = 1;
    n_c = sum_k o_ck; alpha = 1 - (n - 1) sum o_ck delta_ck / sum n_c n_k delta_ck."""
    units = [(x, y) for x, y in zip(a, b) if not (pd.isna(x) or pd.isna(y))]
    domain = list(domain) if domain is not None else sorted({v for u in units for v in u})
    o = {(c, k): 0.0 for c in domain for k in domain}
    for x, y in units:
        o[(x, y)] += 1.0
        o[(y, x)] += 1.0
    n = {c: sum(o[(c, k)] for k in domain) for c in domain}
    total = sum(n.values())
    observed = sum(o[(c, k)] * delta(c, k, n, domain) for c in domain for k in domain) / total
    expected = sum(n[c] * n[k] * delta(c, k, n, domain) for c in domain for k in domain)
    return 1.0 - observed / (expected / (total * (total - 1)))


# items (1, 1), (1, 2), (2, 3), (3, 3): o_11 = 2, o_12 = o_21 = 1, o_23 = o_32 = 1, o_33 = 2;
# n_1 = 3, n_2 = 2, n_3 = 3, n = 8
A4 = [1, 1, 2, 3]
B4 = [1, 2, 3, 3]

A8 = [0, 1, 2, 3, 3, 2, 1, 0]
B8 = [0, 1, 3, 3, 2, 2, 0, 1]


def test_nominal_by_hand():
    # items (0, 0), (1, 1), (0, 1), (1, 1): o_00 = 2, o_11 = 4, o_01 = o_10 = 1; n_0 = 3, n_1 = 5, n = 8
    # alpha = 1 - (n - 1) (o_01 + o_10) / (2 n_0 n_1) = 1 - 7 * 2 / 30 = 8/15
    assert krippendorff_alpha([0, 1, 0, 1], [0, 1, 1, 1], level="nominal") == pytest.approx(8 / 15, abs=1e-12)
    assert alpha_by_hand([0, 1, 0, 1], [0, 1, 1, 1], nominal) == pytest.approx(8 / 15, abs=1e-12)
    got = krippendorff_alpha(A8, B8, level="nominal", values=[0, 1, 2, 3])
    assert got == pytest.approx(alpha_by_hand(A8, B8, nominal), abs=1e-9)


def test_ordinal_by_hand():
    # delta_12 = ((3 + 2) / 2)^2 = 6.25 = delta_23; delta_13 = (8 - (3 + 3) / 2)^2 = 25
    # D_o = 2 * (6.25 + 6.25) / 8; D_e = 2 * (6 * 6.25 + 6 * 6.25 + 9 * 25) / (8 * 7); alpha = 17/24
    assert krippendorff_alpha(A4, B4) == pytest.approx(17 / 24, abs=1e-12)
    assert alpha_by_hand(A4, B4, ordinal) == pytest.approx(17 / 24, abs=1e-12)
    got = krippendorff_alpha(A8, B8, level="ordinal", values=[0, 1, 2, 3])
    assert got == pytest.approx(alpha_by_hand(A8, B8, ordinal, [0, 1, 2, 3]), abs=1e-9)
    assert got != pytest.approx(krippendorff_alpha(A8, B8, level="nominal"), abs=1e-3)


def test_interval_by_hand():
    got = krippendorff_alpha(A8, B8, level="interval")
    assert got == pytest.approx(alpha_by_hand(A8, B8, interval), abs=1e-9)


def test_unused_grade_in_values():
    """An unused grade has n_g = 0 and so no weight in the ordinal difference: the same alpha with or
    without it in ``values`` (at either end of the scale or inside it)."""
    plain = krippendorff_alpha(A4, B4)
    assert krippendorff_alpha(A4, B4, values=[0, 1, 2, 3]) == pytest.approx(plain, abs=1e-12)
    assert krippendorff_alpha(A4, B4, values=[0, 1, 2, 3, 4]) == pytest.approx(plain, abs=1e-12)
    a, b = [1, 1, 3, 3, 1], [1, 3, 3, 3, 1]
    with_gap = krippendorff_alpha(a, b, values=[1, 2, 3])
    assert with_gap == pytest.approx(alpha_by_hand(a, b, ordinal, [1, 2, 3]), abs=1e-12)
    assert with_gap == pytest.approx(krippendorff_alpha(a, b), abs=1e-12)


def test_values_order_is_the_ordinal_order():
    """Ordinal alpha depends only on the order of the domain: reversing it changes nothing, moving a
    grade to the other end does."""
    a, b = [0, 0, 1, 2, 3, 0, 1], [0, 1, 1, 3, 3, 2, 0]
    assert krippendorff_alpha(a, b, values=[3, 2, 1, 0]) == pytest.approx(
        krippendorff_alpha(a, b, values=[0, 1, 2, 3]), abs=1e-12
    )
    shuffled = krippendorff_alpha(a, b, values=[1, 0, 2, 3])
    assert shuffled == pytest.approx(alpha_by_hand(a, b, ordinal, [1, 0, 2, 3]), abs=1e-9)
    assert shuffled != pytest.approx(krippendorff_alpha(a, b), abs=1e-3)


def test_missing_labels_leave_the_item_out():
    """Missing labels are missing data for krippendorff; with two raters an item with one label is
    not pairable, so the result equals the alpha of the items both labelled."""
    a = [1, 1, 2, None, 3, np.nan, pd.NA, 3]
    b = [1, 2, 3, 2, pd.NA, 1, None, 3]
    assert krippendorff_alpha(a, b) == pytest.approx(krippendorff_alpha(A4, B4), abs=1e-12)
    series = krippendorff_alpha(pd.Series(a, dtype="Int64"), pd.Series(b, dtype="Int64"))
    assert series == pytest.approx(17 / 24, abs=1e-12)


def test_degenerate_cases():
    assert krippendorff_alpha([0, 1, 2, 3], [0, 1, 2, 3]) == 1.0
    assert krippendorff_alpha([0, 1, 1], [0, 1, 1], level="nominal") == 1.0
    # one label used by everyone: expected disagreement D_e = 0, alpha undefined -> NaN
    assert math.isnan(krippendorff_alpha([2, 2, 2], [2, 2, 2]))
    assert math.isnan(krippendorff_alpha([2, 2, 2], [2, 2, 2], values=[0, 1, 2, 3]))
    assert math.isnan(krippendorff_alpha([2, 2, 1], [2, 2, None]))  # the 1 is not pairable
    # no item labelled by both
    assert math.isnan(krippendorff_alpha([1, None], [None, 2]))
    assert math.isnan(krippendorff_alpha([], []))


def test_bad_input():
    with pytest.raises(InputError, match="different numbers of items"):
        krippendorff_alpha([1, 2], [1])
    with pytest.raises(InputError, match=r"label\(s\) \[4.0\] are not in values \[0, 1, 2, 3\]"):
        krippendorff_alpha([1, 4], [1, 2], values=[0, 1, 2, 3])
    with pytest.raises(InputError, match="second rater's label of item 1 is 'high'"):
        krippendorff_alpha([1, 2], [1, "high"])
    with pytest.raises(InputError, match="must be distinct numbers"):
        krippendorff_alpha([1, 2], [1, 2], values=[1, 1, 2])
    with pytest.raises(ValueError, match="unknown level"):
        krippendorff_alpha([1, 2], [1, 2], level="circular")


def test_alpha_of_more_raters_against_the_coincidence_matrix_by_hand():
    from judgelab.analysis.agreement import krippendorff_alpha_raters

    # three raters, four items, rater 3 missing item 4 (nominal). Coincidences o_ck (sum over
    # items of ordered pairs / (m_u - 1)): item 1 (0,0,0): o_00 += 6/2; item 2 (1,1,0): o_11 += 2/2,
    # o_10 = o_01 += 2/2 each; item 3 (1,1,1): o_11 += 6/2; item 4 (0,1): o_01 = o_10 += 1.
    # o = [[3, 2], [2, 4]], n_0 = 5, n_1 = 6, n = 11; D_o = 4/11, D_e = 2*5*6/(11*10) = 6/11;
    # alpha = 1 - D_o/D_e = 1 - 4/6 = 1/3
    raters = [[0, 1, 1, 0], [0, 1, 1, 1], [0, 0, 1, None]]
    assert krippendorff_alpha_raters(raters, level="nominal") == pytest.approx(1 / 3, abs=1e-12)
    # two raters: the same as krippendorff_alpha
    assert krippendorff_alpha_raters([A8, B8], level="nominal") == krippendorff_alpha(A8, B8, level="nominal")
    assert math.isnan(krippendorff_alpha_raters([[1, 1, None], [1, 1, 2], [None, 1, None]], level="nominal"))
    with pytest.raises(InputError, match="at least two raters"):
        krippendorff_alpha_raters([[0, 1]])
    with pytest.raises(InputError, match="different numbers of items"):
        krippendorff_alpha_raters([[0, 1], [0, 1], [1]])
