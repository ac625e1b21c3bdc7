"""The statistical tests the studies share, written once: p-value adjustments for a family of
tests (Holm, Benjamini-Hochberg: statsmodels' values), paired tests over units (topics, evaluators) and
the item-level permutation and exact tests of small designs.

* :func:`paired_p` - a paired test of two systems over topics (paired t, Wilcoxon signed-rank,
  the sign test: scipy), as the ranking study decides which system pairs differ;
* evaluator-level rows (:func:`wilcoxon`, :func:`paired_t`, :func:`compare`, :func:`one_sample`,
  :func:`friedman`, :func:`rm_anova`): each a row of :data:`TEST_COLUMNS` with its ``n`` and the
  smallest p the test can give on data of that size (``min_p``);
* item-level tests (:func:`sign_flip_test`, :func:`block_permutation_test`, :func:`mcnemar_test`,
  :func:`binomial_chance`, :func:`guess_test`): stratified permutation and exact tests for
  designs with few units, where every stratum (evaluator) weighs the same;
* :func:`reading` / :func:`add_reading` - what a row can say: a p, or "cannot reject at n = ..."
  where even the smallest attainable p is above alpha.

Degenerate inputs (no pairs, all differences zero, a constant variable) give NaN with a ``note``
instead of a warning. The evaluator simulation's analyses (:mod:`judgelab.studies.simulation.stats`)
are built from these.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats as sps

#: The adjustments a config may name: Holm's step-down and Benjamini-Hochberg's false discovery rate.
ADJUSTMENTS = ("holm", "fdr_bh")


def adjust_pvalues(pvalues: Sequence[float], method: str = "holm") -> np.ndarray:
    """Holm (``"holm"``: step-down, monotone, capped at 1) or Benjamini-Hochberg (``"fdr_bh"``)
    adjusted p-values, statsmodels' ``multipletests`` to the last bit (tests/test_core_science.py);
    NaN p-values stay NaN and are left out of the family."""
    if method not in ADJUSTMENTS:
        raise ValueError(f"unknown p-value adjustment {method!r} ({', '.join(ADJUSTMENTS)})")
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = _holm(p[ok]) if method == "holm" else _fdr_bh(p[ok])
    return out


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment, statsmodels' arithmetic (its ``multipletests`` runs a full
    garbage collection at every Holm call: a tenth of a second in a large process)."""
    order = np.argsort(p)
    adjusted = np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1))
    adjusted[adjusted > 1] = 1
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return out


def _fdr_bh(p: np.ndarray) -> np.ndarray:
    from statsmodels.stats.multitest import multipletests

    return multipletests(p, method="fdr_bh")[1]


# -- paired tests over units ---------------------------------------------------------------------

#: The paired tests :func:`paired_p` runs.
PAIRED_TESTS = ("t", "wilcoxon", "sign")


def paired_test(x: ArrayLike, y: ArrayLike, test: str = "t") -> tuple[float, float]:
    """The statistic and two-sided p-value of a paired test of x against y: ``t`` (paired t-test,
    scipy.stats.ttest_rel), ``wilcoxon`` (signed-rank, scipy.stats.wilcoxon, zero differences
    dropped as its default ``zero_method='wilcox'``), ``sign`` (exact binomial test of the positive
    among the non-zero differences, scipy.stats.binomtest with p = 0.5; the statistic is their
    count). (NaN, NaN) when every difference is zero (no test is run). The one place each paired
    test is run: :func:`paired_p`, :func:`wilcoxon` and :func:`paired_t` call it."""
    if test not in PAIRED_TESTS:
        raise ValueError(f"unknown test {test!r} (known: {', '.join(PAIRED_TESTS)})")
    a, b = np.asarray(x, float), np.asarray(y, float)
    diff = a - b
    if not np.any(diff != 0):
        return float("nan"), float("nan")
    with warnings.catch_warnings():
        # constant non-zero differences: scipy warns of precision loss and returns t = +-inf, p = 0
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "t":
            res = sps.ttest_rel(a, b)
            return float(res.statistic), float(res.pvalue)
        if test == "wilcoxon":
            res = sps.wilcoxon(a, b)
            return float(res.statistic), float(res.pvalue)
    nonzero = diff[diff != 0]
    positive = int((nonzero > 0).sum())
    return float(positive), float(sps.binomtest(positive, nonzero.size, 0.5).pvalue)


def paired_p(x: ArrayLike, y: ArrayLike, test: str = "t") -> float:
    """Two-sided p-value of :func:`paired_test` (a paired test of two systems over topics, as the
    ranking study decides which system pairs differ). NaN when every difference is zero."""
    return paired_test(x, y, test)[1]


# -- evaluator-level and item-level tests ---------------------------------------------------------

#: the fewest points (evaluators, pairs, subjects) a parametric p-value is given for
MIN_POINTS = 4


#: sign patterns are enumerated exactly up to this many non-zero differences (2^16 patterns)
EXACT_MAX = 16


#: random permutations of the item-level tests by default (``simulation.permutations``)
PERMUTATIONS = 10_000


#: the columns every test row has (besides the family's own keys)
TEST_COLUMNS = [
    "unit",
    "test",
    "n",
    "n_discordant",
    "clusters",
    "mean_x",
    "mean_y",
    "delta",
    "d",
    "statistic",
    "df",
    "p",
    "min_p",
    "note",
]


_EPS = 1e-12


def _row(unit: str, test: str, **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys(TEST_COLUMNS, math.nan)
    out.update(unit=unit, test=test, note="")
    out.update(kw)
    return out


def _paired(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError("paired samples differ in length")
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def min_p_wilcoxon(n_nonzero: int) -> float:
    """The smallest two-sided p of scipy's Wilcoxon signed-rank test with ``n_nonzero`` non-zero
    differences (all of one sign, no ties): exactly 2 / 2^n up to 50 differences."""
    if n_nonzero < 1:
        return math.nan
    return float(sps.wilcoxon(np.arange(1, n_nonzero + 1, dtype=float)).pvalue)


def wilcoxon(x: ArrayLike, y: ArrayLike) -> dict:
    """Wilcoxon signed-rank test of x - y (scipy defaults: two-sided, zero differences dropped,
    exact for small n); pairs with a NaN are dropped."""
    x, y = _paired(x, y)
    d = x - y
    nz = int(np.sum(d != 0))
    out = _row(
        "evaluator",
        "Wilcoxon signed-rank",
        n=len(d),
        n_discordant=nz,
        mean_x=float(x.mean()) if len(d) else math.nan,
        mean_y=float(y.mean()) if len(d) else math.nan,
        delta=float(d.mean()) if len(d) else math.nan,
        min_p=min_p_wilcoxon(nz),
    )
    if nz == 0:
        out["note"] = "no pairs" if len(d) == 0 else "all differences zero"
        return out
    statistic, p = paired_test(x, y, "wilcoxon")
    out.update(statistic=statistic, p=p)
    return out


def paired_t(x: ArrayLike, y: ArrayLike) -> dict:
    """Paired t test (scipy ``ttest_rel``); no p with fewer than :data:`MIN_POINTS` pairs or
    constant differences."""
    x, y = _paired(x, y)
    d = x - y
    out = _row(
        "evaluator",
        "paired t",
        n=len(d),
        mean_x=float(x.mean()) if len(d) else math.nan,
        mean_y=float(y.mean()) if len(d) else math.nan,
        delta=float(d.mean()) if len(d) else math.nan,
        df=max(len(d) - 1, 0),
    )
    if len(d) < MIN_POINTS:
        out["note"] = f"fewer than {MIN_POINTS} pairs: no p-value"
    elif np.ptp(d) == 0:
        out["note"] = "constant differences"
    else:
        statistic, p = paired_test(x, y, "t")
        out.update(statistic=statistic, p=p, min_p=0.0)
    return out


def cohens_d_paired(x: ArrayLike, y: ArrayLike) -> float:
    x, y = _paired(x, y)
    d = x - y
    if len(d) < 2:
        return math.nan
    sd = d.std(ddof=1)
    return float(d.mean() / sd) if sd > 0 else math.nan


def compare(x: ArrayLike, y: ArrayLike) -> list[dict]:
    """The evaluator-level rows of one paired contrast: Wilcoxon and paired t, with Cohen's d."""
    d = cohens_d_paired(x, y)
    return [{**wilcoxon(x, y), "d": d}, {**paired_t(x, y), "d": d}]


def one_sample(x: ArrayLike, mu: float) -> list[dict]:
    """Wilcoxon signed-rank and one-sample t of x against ``mu`` (evaluator level)."""
    a = np.asarray(x, dtype=float)
    a = a[np.isfinite(a)]
    w = wilcoxon(a, np.full(len(a), mu))
    t = _row("evaluator", "one-sample t", n=len(a), mean_x=float(a.mean()) if len(a) else math.nan, mean_y=mu)
    t["delta"] = t["mean_x"] - mu
    t["df"] = max(len(a) - 1, 0)
    if len(a) < MIN_POINTS:
        t["note"] = f"fewer than {MIN_POINTS} evaluators: no p-value"
    elif np.ptp(a) == 0:
        t["note"] = "constant values"
    else:
        r = sps.ttest_1samp(a, mu)
        t.update(statistic=float(r.statistic), p=float(r.pvalue), min_p=0.0)
    return [w, t]


def friedman(matrix: np.ndarray | pd.DataFrame) -> dict:
    """Friedman test over the columns (conditions) of a subjects x conditions matrix; subjects
    with a NaN are dropped. ``min_p``: the chi-square p when every subject ranks the conditions
    the same (statistic n (k - 1))."""
    m = np.asarray(matrix, dtype=float)
    m = m[np.all(np.isfinite(m), axis=1)] if m.ndim == 2 else m
    n, k = m.shape if m.ndim == 2 else (0, 0)
    out = _row("evaluator", "Friedman", n=n, df=max(k - 1, 0))
    out["k"] = k
    if k >= 3 and n >= 1:
        out["min_p"] = float(sps.chi2.sf(n * (k - 1), k - 1))
    if k < 3:
        out["note"] = "needs at least 3 conditions"
    elif n < 2:
        out["note"] = "needs at least 2 complete subjects"
    elif np.all(np.ptp(m, axis=1) == 0):
        out["note"] = "every subject is constant across conditions"
    else:
        res = sps.friedmanchisquare(*m.T)
        out.update(statistic=float(res.statistic), p=float(res.pvalue))
    return out


def rm_anova(data: pd.DataFrame, depvar: str, subject: str, within: Sequence[str]) -> pd.DataFrame:
    """Repeated-measures ANOVA (statsmodels ``AnovaRM``) over the factors in ``within`` that have
    at least 2 levels; subjects lacking a cell are dropped (the design must be balanced); no p
    with fewer than :data:`MIN_POINTS` complete subjects."""
    within = [w for w in within if data[w].nunique() > 1]
    cols = ["effect", "F", "num_df", "den_df", "p", "min_p", "n", "note"]

    def empty(effect: str, n: int, note: str) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {
                    "effect": effect,
                    "F": math.nan,
                    "num_df": math.nan,
                    "den_df": math.nan,
                    "p": math.nan,
                    "min_p": math.nan,
                    "n": n,
                    "note": note,
                }
            ],
            columns=cols,
        )

    if not within:
        return empty("", data[subject].nunique(), "no factor with 2 or more levels")
    d = data[[subject, depvar, *within]].dropna()
    cells = d.groupby(within).ngroups
    complete = d.groupby(subject).size()
    d = d[d[subject].isin(complete[complete == cells].index)]
    n = d[subject].nunique()
    if n < MIN_POINTS:
        return empty(":".join(within), n, f"fewer than {MIN_POINTS} complete subjects: no p-value")
    d = d.assign(**{w: d[w].astype(str) for w in within})
    # centred per subject, nothing varies: every F is 0/0 (statsmodels returns rounding noise)
    if np.allclose(d[depvar] - d.groupby(subject)[depvar].transform("mean"), 0):
        return empty(":".join(within), n, "no within-subject variation")
    from statsmodels.stats.anova import AnovaRM

    table = AnovaRM(d, depvar, subject, within=list(within)).fit().anova_table
    rows = []
    for eff, r in table.iterrows():
        f = float(r["F Value"])
        ok = math.isfinite(f) and f >= 0
        rows.append(
            {
                "effect": eff,
                "F": f if ok else math.nan,
                "num_df": float(r["Num DF"]),
                "den_df": float(r["Den DF"]),
                "p": float(r["Pr > F"]) if ok else math.nan,
                "min_p": 0.0 if ok else math.nan,
                "n": n,
                "note": "" if ok else "degenerate (zero error variance)",
            }
        )
    return pd.DataFrame(rows, columns=cols)


def _weights(strata: np.ndarray) -> np.ndarray:
    """1 / (E n_e) per item: every stratum (evaluator) weighs the same, its items equally."""
    _, inv, counts = np.unique(strata, return_inverse=True, return_counts=True)
    return 1.0 / (len(counts) * counts[inv])


def _cluster_index(clusters: ArrayLike | None, n: int) -> np.ndarray:
    """0..C-1 per row: the rows' clusters (each row its own cluster when None)."""
    if clusters is None:
        return np.arange(n)
    _, inv = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    return inv


def sign_flip_test(
    diff: ArrayLike,
    strata: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
    mean_x: float = math.nan,
    mean_y: float = math.nan,
) -> dict:
    """Stratified paired permutation test of the per-judgment differences ``diff`` (x - y) with the
    evaluator (``strata``) as a stratum: statistic T = sum of w_i d_i, w_i = 1 / (E n_e) (the
    mean over evaluators of their mean difference); two-sided. Under the null the two conditions
    are exchangeable on every ``clusters`` unit - the judgments of a cluster (an item judged by
    several evaluators, the items sharing a context) keep or flip their sign together, so the
    test holds however they depend on each other; None: every judgment its own cluster. Rows with
    a NaN are dropped."""
    d = np.asarray(diff, dtype=float)
    s = np.asarray(strata, dtype=object)
    ok = np.isfinite(d)
    cl = _cluster_index(None if clusters is None else np.asarray(clusters, dtype=object)[ok], int(ok.sum()))
    d, s = d[ok], s[ok]
    out = _row("item", "stratified permutation", n=len(d), mean_x=mean_x, mean_y=mean_y)
    out["strata"] = len(set(s))
    if not len(d):
        out["note"] = "no pairs"
        return out
    w = _weights(s)
    t_obs = float(np.sum(w * d))
    out.update(delta=t_obs, statistic=t_obs, n_discordant=int(np.sum(d != 0)))
    contrib = np.bincount(cl, weights=w * d)  # each cluster's share of T
    moving = np.abs(contrib) > _EPS
    m = int(moving.sum())
    out["clusters"] = int(len(contrib))
    unit = "clusters" if clusters is not None else "judgments"
    if m == 0:
        out.update(p=1.0, min_p=1.0, note="all differences zero")
        return out
    a = np.abs(contrib[moving])
    target = abs(t_obs) - _EPS * max(1.0, abs(t_obs))
    if m <= EXACT_MAX:
        signs = 1 - 2 * ((np.arange(2**m)[:, None] >> np.arange(m)) & 1)
        stats = np.abs(signs @ a)
        out.update(
            p=float(np.mean(stats >= target)),
            min_p=2.0 / 2**m,
            note=f"exact: all {2**m} sign patterns of {m} {unit} that differ",
        )
        return out
    rng = np.random.default_rng(seed)
    hits, left = 0, int(permutations)
    chunk = max(1, min(left, 2_000_000 // m))
    while left > 0:
        b = min(chunk, left)
        signs = rng.integers(0, 2, size=(b, m), dtype=np.int8) * 2 - 1
        hits += int(np.sum(np.abs(signs @ a) >= target))
        left -= b
    out.update(
        p=(1 + hits) / (1 + permutations),
        min_p=max(1.0 / (1 + permutations), 2.0 / 2.0**m),
        note=f"{permutations} random sign patterns of {m} {unit} that differ (seed {seed})",
    )
    return out


def mcnemar_test(x: ArrayLike, y: ArrayLike) -> dict:
    """McNemar's exact test of two cells' correctness on the same judgments (1 right, 0 wrong;
    pairs with a NaN dropped), pooled over evaluators (statsmodels ``mcnemar``)."""
    from statsmodels.stats.contingency_tables import mcnemar

    x, y = _paired(x, y)
    b = int(np.sum((x == 1) & (y == 0)))
    c = int(np.sum((x == 0) & (y == 1)))
    out = _row(
        "item",
        "McNemar exact",
        n=len(x),
        n_discordant=b + c,
        mean_x=float(x.mean()) if len(x) else math.nan,
        mean_y=float(y.mean()) if len(x) else math.nan,
        delta=float((x - y).mean()) if len(x) else math.nan,
        statistic=float(min(b, c)),
        note=f"discordant {b} (x right) / {c} (y right); every judgment taken as independent",
    )
    if not len(x):
        out["note"] = "no pairs"
        return out
    if b + c == 0:
        out.update(p=1.0, min_p=1.0, note="no discordant pair")
        return out
    table = [[int(np.sum((x == 1) & (y == 1))), b], [c, int(np.sum((x == 0) & (y == 0)))]]
    out.update(p=float(mcnemar(table, exact=True).pvalue), min_p=min(1.0, 2.0 * 0.5 ** (b + c)))
    return out


def binomial_chance(correct: ArrayLike, p0: float) -> dict:
    """Two-sided binomial test of the number of right judgments (1 right, 0 wrong; NaN dropped)
    against ``p0`` (the null: every judgment a uniform guess among three labels)."""
    c = np.asarray(correct, dtype=float)
    c = c[np.isfinite(c)]
    n, k = len(c), int(np.sum(c == 1))
    out = _row("item", "binomial vs chance", n=n, mean_x=k / n if n else math.nan, mean_y=p0)
    out["delta"] = out["mean_x"] - p0
    if not n:
        out["note"] = "no judgments"
        return out
    out.update(
        statistic=float(k),
        p=float(sps.binomtest(k, n, p0).pvalue),
        min_p=float(min(sps.binomtest(n, n, p0).pvalue, sps.binomtest(0, n, p0).pvalue)),
        note=f"{k} of {n} judgments right",
    )
    return out


def guess_test(
    correct: ArrayLike,
    gold: ArrayLike,
    strata: ArrayLike,
    units: ArrayLike | None = None,
    *,
    draws: int = PERMUTATIONS,
    seed: int = 0,
    p0: float,
) -> dict:
    """Chance at the item level when judgments share a guess (the Base Judge's prompt is the same
    for every evaluator of an item, so under the null its one guess is scored against each of
    their labels): the null is a uniform guess among the three labels per ``units`` entry (None:
    per judgment), simulated ``draws`` times; statistic the evaluator-weighted accuracy (weights
    1 / (E n_e)); two-sided p = 2 min(P(T* <= T), P(T* >= T)). Rows with a NaN are dropped.
    With one guess per judgment and equal weights this is the binomial test (tested)."""
    c = np.asarray(correct, dtype=float)
    ok = np.isfinite(c)
    c = c[ok]
    g = np.asarray(gold, dtype=object)[ok]
    st_ = np.asarray(strata, dtype=object)[ok]
    un = _cluster_index(None if units is None else np.asarray(units, dtype=object)[ok], int(ok.sum()))
    out = _row("item", "uniform guesses vs chance", n=len(c), mean_y=p0)
    if not len(c):
        out["note"] = "no judgments"
        return out
    w = _weights(st_)
    t_obs = float(w @ c)
    codes = {lab: i for i, lab in enumerate(sorted(set(g)))}
    k = max(3, len(codes))
    gi = np.array([codes[x] for x in g])
    n_units = int(un.max()) + 1
    rng = np.random.default_rng(seed)
    lo = hi = 0
    left = int(draws)
    chunk = max(1, min(left, 4_000_000 // max(1, len(c))))
    while left > 0:
        b = min(chunk, left)
        guesses = rng.integers(0, k, size=(b, n_units))
        t = (guesses[:, un] == gi).astype(float) @ w
        lo += int(np.sum(t <= t_obs + _EPS))
        hi += int(np.sum(t >= t_obs - _EPS))
        left -= b
    p = min(1.0, 2 * min((1 + lo) / (1 + draws), (1 + hi) / (1 + draws)))
    out.update(
        mean_x=t_obs,
        delta=t_obs - p0,
        statistic=t_obs,
        clusters=n_units,
        p=p,
        min_p=min(1.0, 2.0 / (1 + draws)),
        note=f"{n_units} guesses scored on {len(c)} judgments; {draws} simulated draws (seed {seed})",
    )
    return out


def block_permutation_test(
    matrix: np.ndarray,
    strata: ArrayLike,
    clusters: ArrayLike | None = None,
    *,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> dict:
    """Omnibus permutation test over the k columns (conditions) of a judgments x conditions
    matrix, each evaluator a stratum: the k values of each ``clusters`` unit (None: of each
    judgment) are permuted among the conditions, the same permutation for every judgment of the
    cluster; statistic S = sum over conditions of (m_j - mean m)^2, m_j the condition's weighted
    mean (weights 1 / (E n_e)). Rows with a NaN are dropped."""
    x = np.asarray(matrix, dtype=float)
    s = np.asarray(strata, dtype=object)
    if x.ndim != 2:
        x = np.zeros((0, 0))
    ok = np.all(np.isfinite(x), axis=1)
    cl = _cluster_index(
        None if clusters is None else np.asarray(clusters, dtype=object)[: len(ok)][ok], int(ok.sum())
    )
    x, s = x[ok], s[: len(ok)][ok]
    n, k = x.shape
    out = _row(
        "item", "within-cluster permutation" if clusters is not None else "within-judgment permutation", n=n
    )
    out["df"] = max(k - 1, 0)
    out["k"] = k
    if k < 2:
        out["note"] = "needs at least 2 conditions"
        return out
    if n == 0:
        out["note"] = "no complete judgments"
        return out
    moving = np.ptp(x, axis=1) > 0
    out["clusters"] = int(len(np.unique(cl)))
    if not moving.any():
        out.update(p=1.0, min_p=1.0, note="every judgment constant across conditions")
        return out
    w = _weights(s)

    def spread(means: np.ndarray) -> np.ndarray:
        return np.sum((means - means.mean(axis=-1, keepdims=True)) ** 2, axis=-1)

    s_obs = float(spread(w @ x))
    xm, wm = x[moving], w[moving]
    _, clm = np.unique(cl[moving], return_inverse=True)
    n_cl = int(clm.max()) + 1
    fixed = w[~moving] @ x[~moving]
    target = s_obs - _EPS * max(1.0, s_obs)
    rng = np.random.default_rng(seed)
    hits, left = 0, int(permutations)
    chunk = max(1, min(left, 4_000_000 // (len(xm) * k)))
    while left > 0:
        b = min(chunk, left)
        order = np.argsort(rng.random((b, n_cl, k)), axis=2)[:, clm, :]
        perm = np.take_along_axis(np.broadcast_to(xm, (b, *xm.shape)), order, axis=2)
        means = np.einsum("i,bij->bj", wm, perm) + fixed
        hits += int(np.sum(spread(means) >= target))
        left -= b
    out.update(
        statistic=s_obs,
        p=(1 + hits) / (1 + permutations),
        min_p=max(1.0 / (1 + permutations), math.factorial(k) ** (1.0 - n_cl)),
        note=f"{permutations} random permutations of {n_cl} {'clusters' if clusters is not None else 'judgments'} (seed {seed})",
    )
    return out


def reading(p: float, min_p: float, n: int | float, alpha: float, clusters: float = math.nan) -> str:
    """What a test says: "cannot reject at n = N" where even its smallest attainable p is above
    alpha (with the number of clusters where the test keeps judgments together), else whether p
    is below alpha; "no test" where there is no p."""
    n_txt = "?" if not np.isfinite(n) else str(int(n))
    if np.isfinite(min_p) and min_p > alpha:
        extra = f" in {int(clusters)} clusters" if np.isfinite(clusters) and clusters < n else ""
        return f"cannot reject at n = {n_txt}{extra} (smallest attainable p {min_p:.3g})"
    if not np.isfinite(p):
        return "no test"
    return f"p < {alpha:g}" if p < alpha else f"p >= {alpha:g}"


def add_reading(df: pd.DataFrame, alpha: float) -> pd.DataFrame:
    if not len(df):
        return df
    df = df.copy()
    df["reading"] = [
        reading(p, mp, n, alpha, c) for p, mp, n, c in zip(df["p"], df["min_p"], df["n"], df["clusters"])
    ]
    return df
