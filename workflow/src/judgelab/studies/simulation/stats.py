"""Significance tests of the evaluator simulation (seed 001 section 14), at two units of analysis.

**Evaluator level** (the seed's): every evaluator contributes one accuracy per condition and
every comparison is paired across evaluators. Non-parametric tests are primary (Wilcoxon
signed-rank for paired contrasts, Friedman for omnibus), corroborated by paired / one-sample t
tests and a repeated-measures ANOVA (statsmodels ``AnovaRM``). Effect size: Cohen's d for paired
data (mean difference / SD of the differences).

**Item level** (beside it, for data with few evaluators: PandaLM has 3, the seed 21): the unit
is one validation judgment (evaluator, item), each evaluator a stratum, and the statistic the
same evaluator-level mean the seed compares (each evaluator weighs 1/E, each of its n_e items
1/(E n_e)):

* paired contrast - a **stratified paired permutation test**: under the null the two conditions
  are exchangeable on every cluster (below), so each cluster's differences keep or flip their
  sign together; exact (all 2^m sign patterns of the m clusters whose difference is not 0) for
  m <= :data:`EXACT_MAX`, else ``permutations`` seeded random sign patterns, p = (1 + hits) /
  (1 + draws);
* two cells - also **McNemar's exact test** on the discordant judgments pooled over evaluators
  (statsmodels; for matched pairs the Mantel-Haenszel test stratified by evaluator is this same
  test);
* omnibus over k conditions - a **within-cluster permutation test**: each cluster's k values are
  permuted among the conditions; statistic the spread of the weighted condition means;
* against chance - a **simulation of uniform guesses** (the null: every guess uniform among the
  three labels, one guess per Base Judge item since its prompt is the same for every evaluator,
  one per judgment elsewhere); with one guess per judgment it is the binomial test.

The tests keep together what may depend on each other (``simulation.cluster_by``, default
``group``): every evaluator's judgment of an item and the items sharing a context (the split's
leakage group) flip or permute as one cluster, so their number - not the number of judgments -
bounds what a test can reject (the bundled sample's 10 validation items come from 5 contexts:
2 / 2^5 = 0.0625 > 0.05). McNemar takes every judgment as independent (its note says so).

The multiple-comparison corrections are the seed's, for each test separately: Holm within each
pairwise family, Holm and Benjamini-Hochberg over the configuration family
(:func:`judgelab.analysis.stats.adjust_pvalues`).

**What a test can say.** Every row carries its ``n`` and ``min_p``, the smallest p the test could
give on data of this size (exact Wilcoxon with n non-zero differences: 2 / 2^n, so 0.25 at
n = 3; the permutation test 2 / 2^m or 1 / (1 + draws); McNemar 2 / 2^m; Friedman chi-square at
perfect agreement; Holm's adjustment multiplies it by the family size). Where ``min_p`` is above
alpha, :func:`reading` - and every report table - says "cannot reject at n = ..." instead of a
p. A parametric p (t, RM-ANOVA; the correlations of :mod:`.metrics`) needs at least
:data:`MIN_POINTS` points: with fewer it rests on a normality nobody can check, and is not given.

Degenerate inputs (no pairs, all differences zero, a constant variable) give NaN with a
``note`` instead of a warning.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.anova import AnovaRM

from judgelab.analysis.stats import adjust_pvalues
from judgelab.errors import InputError
from judgelab.studies.simulation.metrics import BASE_JUDGE, PJ

FACTORS = ("demo_type", "shots", "model")
CHANCE = 1.0 / 3.0
#: the fewest points (evaluators, pairs, subjects) a parametric p-value is given for
MIN_POINTS = 4
#: sign patterns are enumerated exactly up to this many non-zero differences (2^16 patterns)
EXACT_MAX = 16
#: random permutations of the item-level tests by default (``simulation.permutations``)
PERMUTATIONS = 10_000
CELL_KEYS = ["model", "demo_type", "shots"]
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


def _row(unit: str, test: str, **kw) -> dict:
    out = dict.fromkeys(TEST_COLUMNS, math.nan)
    out.update(unit=unit, test=test, note="")
    out.update(kw)
    return out


def _paired(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError("paired samples differ in length")
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


# --------------------------------------------------------------------------------------------
# Evaluator level


def min_p_wilcoxon(n_nonzero: int) -> float:
    """The smallest two-sided p of scipy's Wilcoxon signed-rank test with ``n_nonzero`` non-zero
    differences (all of one sign, no ties): exactly 2 / 2^n up to 50 differences."""
    if n_nonzero < 1:
        return math.nan
    return float(sps.wilcoxon(np.arange(1, n_nonzero + 1, dtype=float)).pvalue)


def wilcoxon(x: Sequence[float], y: Sequence[float]) -> dict:
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
    res = sps.wilcoxon(x, y)
    out.update(statistic=float(res.statistic), p=float(res.pvalue))
    return out


def paired_t(x: Sequence[float], y: Sequence[float]) -> dict:
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
        res = sps.ttest_rel(x, y)
        out.update(statistic=float(res.statistic), p=float(res.pvalue), min_p=0.0)
    return out


def cohens_d_paired(x: Sequence[float], y: Sequence[float]) -> float:
    x, y = _paired(x, y)
    d = x - y
    if len(d) < 2:
        return math.nan
    sd = d.std(ddof=1)
    return float(d.mean() / sd) if sd > 0 else math.nan


def compare(x: Sequence[float], y: Sequence[float]) -> list[dict]:
    """The evaluator-level rows of one paired contrast: Wilcoxon and paired t, with Cohen's d."""
    d = cohens_d_paired(x, y)
    return [{**wilcoxon(x, y), "d": d}, {**paired_t(x, y), "d": d}]


def one_sample(x: Sequence[float], mu: float) -> list[dict]:
    """Wilcoxon signed-rank and one-sample t of x against ``mu`` (evaluator level)."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    w = wilcoxon(x, np.full(len(x), mu))
    t = _row("evaluator", "one-sample t", n=len(x), mean_x=float(x.mean()) if len(x) else math.nan, mean_y=mu)
    t["delta"] = t["mean_x"] - mu
    t["df"] = max(len(x) - 1, 0)
    if len(x) < MIN_POINTS:
        t["note"] = f"fewer than {MIN_POINTS} evaluators: no p-value"
    elif np.ptp(x) == 0:
        t["note"] = "constant values"
    else:
        r = sps.ttest_1samp(x, mu)
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


# --------------------------------------------------------------------------------------------
# Item level


def _weights(strata: np.ndarray) -> np.ndarray:
    """1 / (E n_e) per item: every stratum (evaluator) weighs the same, its items equally."""
    _, inv, counts = np.unique(strata, return_inverse=True, return_counts=True)
    return 1.0 / (len(counts) * counts[inv])


def _cluster_index(clusters: Sequence | None, n: int) -> np.ndarray:
    """0..C-1 per row: the rows' clusters (each row its own cluster when None)."""
    if clusters is None:
        return np.arange(n)
    _, inv = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    return inv


def sign_flip_test(
    diff: Sequence[float],
    strata: Sequence[str],
    clusters: Sequence | None = None,
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


def mcnemar_test(x: Sequence[float], y: Sequence[float]) -> dict:
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


def binomial_chance(correct: Sequence[float], p0: float = CHANCE) -> dict:
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
    correct: Sequence[float],
    gold: Sequence[str],
    strata: Sequence[str],
    units: Sequence | None = None,
    *,
    draws: int = PERMUTATIONS,
    seed: int = 0,
    p0: float = CHANCE,
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
    strata: Sequence[str],
    clusters: Sequence | None = None,
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


# --------------------------------------------------------------------------------------------
# Item scores


#: what the item-level permutation tests flip or permute together (``simulation.cluster_by``)
CLUSTERINGS = ("group", "item", "judgment")


def item_scores(long: pd.DataFrame, metric: str = "accuracy", cluster_by: str = "group") -> pd.DataFrame:
    """Per prediction row (method, model, demo_type, shots, evaluator, item) whether it is right:
    1 or 0; a missing prediction is 0 under ``accuracy`` (every judgment) and NaN (not scored)
    under ``accuracy_answered``. ``cluster``: the unit the item-level tests keep together -
    ``group`` the item's leakage group (the split's ``group``: the items sharing a context, and
    every evaluator's judgment of them), ``item`` the item (every evaluator's judgment of it),
    ``judgment`` each (evaluator, item) alone. ``guess``: under the chance null, one guess per
    Base Judge cell and item (its prompt does not depend on the evaluator), one per judgment
    elsewhere."""
    if cluster_by not in CLUSTERINGS:
        raise InputError(
            f"unknown clustering {cluster_by!r}; known: {', '.join(CLUSTERINGS)}", key="simulation.cluster_by"
        )
    out = long[["method", *CELL_KEYS, "evaluator", "item"]].copy()
    answered = long["pred"].notna()
    correct = (answered & (long["pred"] == long["gold"])).astype(float)
    if metric == "accuracy_answered":
        correct[~answered] = np.nan
    out["correct"] = correct.to_numpy()
    out["gold"] = long["gold"].to_numpy()
    if "consensus" in long.columns:
        out["eligible"] = long["consensus"].notna().to_numpy()
    item = long["item"].astype(str)
    judgment = long["evaluator"].astype(str) + "|" + item
    if cluster_by == "group" and "group" in long.columns:
        out["cluster"] = long["group"].fillna(item).astype(str).to_numpy()
    elif cluster_by == "judgment":
        out["cluster"] = judgment.to_numpy()
    else:
        out["cluster"] = item.to_numpy()
    cell = long["method"].astype(str) + "|" + long["model"].astype(str) + "|" + long["demo_type"].astype(str)
    cell = cell + "|" + long["shots"].astype(str)
    out["guess"] = np.where(long["method"] == BASE_JUDGE, cell + "|" + item, cell + "|" + judgment)
    return out


def _item_wide(items: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Judgments (evaluator, item) x the ``columns`` groups: the mean correctness over the cells
    of a group (NaN-aware)."""
    return items.pivot_table(
        index=["evaluator", "item"], columns=list(columns), values="correct", aggfunc="mean"
    )


def _strata(wide: pd.DataFrame) -> np.ndarray:
    return wide.index.get_level_values("evaluator").to_numpy(dtype=object)


def clusters_of(items: pd.DataFrame | None) -> pd.Series | None:
    """(evaluator, item) -> its cluster (see :func:`item_scores`)."""
    if items is None or "cluster" not in items.columns:
        return None
    return items.drop_duplicates(["evaluator", "item"]).set_index(["evaluator", "item"])["cluster"]


def _of(clusters: pd.Series | None, index: pd.Index) -> np.ndarray | None:
    return None if clusters is None else clusters.reindex(index).to_numpy(dtype=object)


def _item_contrast(
    x: pd.Series,
    y: pd.Series,
    clusters: pd.Series | None = None,
    *,
    permutations: int,
    seed: int,
    mcnemar: bool = False,
) -> list[dict]:
    """Item-level rows of one paired contrast (two Series indexed by (evaluator, item))."""
    both = pd.concat([x.rename("x"), y.rename("y")], axis=1).dropna()
    strata = both.index.get_level_values("evaluator").to_numpy(dtype=object)
    ev_x = both["x"].groupby(level="evaluator").mean().mean() if len(both) else math.nan
    ev_y = both["y"].groupby(level="evaluator").mean().mean() if len(both) else math.nan
    rows = [
        sign_flip_test(
            (both["x"] - both["y"]).to_numpy(),
            strata,
            _of(clusters, both.index),
            permutations=permutations,
            seed=seed,
            mean_x=ev_x,
            mean_y=ev_y,
        )
    ]
    if mcnemar:
        rows.append(mcnemar_test(both["x"].to_numpy(), both["y"].to_numpy()))
    return rows


def _holm_bh(df: pd.DataFrame, keys: Sequence[str], alpha: float, bh: bool = True) -> pd.DataFrame:
    """Holm (and Benjamini-Hochberg) adjusted p within each family ``keys`` (+ test); the
    smallest adjusted p each test could reach: Holm m x min_p, BH min_p."""
    if not len(df):
        return df
    df = df.copy()
    df["p_holm"] = math.nan
    df["min_p_holm"] = math.nan
    if bh:
        df["p_bh"] = math.nan
    for pos in df.groupby(list(keys) + ["test"], sort=False).indices.values():
        idx = df.index[pos]
        p = df.loc[idx, "p"]
        m = int(p.notna().sum())
        df.loc[idx, "p_holm"] = adjust_pvalues(p, "holm")
        df.loc[idx, "min_p_holm"] = np.minimum(1.0, df.loc[idx, "min_p"] * max(m, 1))
        if bh:
            df.loc[idx, "p_bh"] = adjust_pvalues(p, "fdr_bh")
    df["significant_holm"] = df["p_holm"] < alpha
    if bh:
        df["significant_bh"] = df["p_bh"] < alpha
    return df


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


# --------------------------------------------------------------------------------------------
# Analyses of one evaluator set


def _pj(acc: pd.DataFrame) -> pd.DataFrame:
    return acc[acc["method"] == PJ]


def _cell_name(model: str, demo_type: str, shots: int) -> str:
    return f"{model} | {demo_type} | {int(shots)}-shot"


def _levels(values) -> list:
    return sorted(values, key=lambda v: (not isinstance(v, (int, np.integer)), v))


def factor_tests(
    acc: pd.DataFrame,
    items: pd.DataFrame | None = None,
    metric: str = "accuracy",
    *,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> pd.DataFrame:
    """Omnibus over all PersonaJudge cells and per factor (per-evaluator marginal means over the
    other factors): Friedman at the evaluator level, the within-judgment permutation test at the
    item level; the repeated-measures ANOVA over the factorial design."""
    pj = _pj(acc)
    pji = items[items["method"] == PJ] if items is not None else None
    cl = clusters_of(items)
    rows = []
    wide = pj.pivot_table(index="evaluator", columns=CELL_KEYS, values=metric)
    rows.append({"family": "omnibus", "factor": "cells", **friedman(wide.to_numpy())})
    if pji is not None and len(pji):
        w = _item_wide(pji, CELL_KEYS)
        rows.append(
            {
                "family": "omnibus",
                "factor": "cells",
                **block_permutation_test(
                    w.to_numpy(), _strata(w), _of(cl, w.index), permutations=permutations, seed=seed
                ),
            }
        )
    for f in FACTORS:
        marg = pj.groupby(["evaluator", f])[metric].mean().unstack(f)
        rows.append({"family": "factor", "factor": f, **friedman(marg.to_numpy())})
        if pji is not None and len(pji):
            w = _item_wide(pji, [f])
            rows.append(
                {
                    "family": "factor",
                    "factor": f,
                    **block_permutation_test(
                        w.to_numpy(), _strata(w), _of(cl, w.index), permutations=permutations, seed=seed
                    ),
                }
            )
    anova = rm_anova(pj, metric, "evaluator", list(FACTORS))
    for _, r in anova.iterrows():
        rows.append(
            {
                "family": "rm_anova",
                "factor": r["effect"],
                **_row(
                    "evaluator",
                    "RM-ANOVA",
                    n=r["n"],
                    statistic=r["F"],
                    df=r["num_df"],
                    p=r["p"],
                    min_p=r["min_p"],
                    note=r["note"],
                ),
                "den_df": r["den_df"],
            }
        )
    return pd.DataFrame(rows)


def pairwise_tests(
    acc: pd.DataFrame,
    items: pd.DataFrame | None = None,
    metric: str = "accuracy",
    *,
    alpha: float = 0.05,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> pd.DataFrame:
    """Within each factor, every pair of levels (marginal means over the other factors):
    Wilcoxon and paired t over evaluators, the stratified permutation test over judgments; Holm
    over the factor's pairs, per test."""
    pj = _pj(acc)
    pji = items[items["method"] == PJ] if items is not None else None
    rows = []
    for f in FACTORS:
        marg = pj.groupby(["evaluator", f])[metric].mean().unstack(f)
        wide = _item_wide(pji, [f]) if pji is not None and len(pji) else None
        for a, b in itertools.combinations(_levels(marg.columns), 2):
            key = {"factor": f, "level_x": str(a), "level_y": str(b)}
            rows += [{**key, **r} for r in compare(marg[a], marg[b])]
            if wide is not None:
                rows += [
                    {**key, **r}
                    for r in _item_contrast(
                        wide[a], wide[b], clusters_of(items), permutations=permutations, seed=seed
                    )
                ]
    return _holm_bh(pd.DataFrame(rows), ["factor"], alpha, bh=False) if rows else pd.DataFrame()


def versus_base(
    acc: pd.DataFrame,
    items: pd.DataFrame | None = None,
    metric: str = "accuracy",
    alpha: float = 0.05,
    *,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> pd.DataFrame:
    """Every PersonaJudge cell against its model's Base Judge: Wilcoxon, paired t and d over
    evaluators; the stratified permutation test and McNemar over judgments; Holm and
    Benjamini-Hochberg over all cells, per test."""
    base = acc[acc["method"] == BASE_JUDGE]
    rows = []
    base_items = items[items["method"] == BASE_JUDGE] if items is not None else None
    pj_items = items[items["method"] == PJ] if items is not None else None
    for (model, dt, shots), g in _pj(acc).groupby(CELL_KEYS, sort=True):
        b = base[base["model"] == model].set_index("evaluator")[metric]
        x = g.set_index("evaluator")[metric]
        ev = sorted(set(x.index) & set(b.index))
        key = {"model": model, "demo_type": dt, "shots": int(shots)}
        rows += [{**key, **r} for r in compare(x.reindex(ev), b.reindex(ev))]
        if items is not None:
            xi = pj_items[
                (pj_items["model"] == model) & (pj_items["demo_type"] == dt) & (pj_items["shots"] == shots)
            ].set_index(["evaluator", "item"])["correct"]
            bi = base_items[base_items["model"] == model].set_index(["evaluator", "item"])["correct"]
            rows += [
                {**key, **r}
                for r in _item_contrast(
                    xi, bi, clusters_of(items), permutations=permutations, seed=seed, mcnemar=True
                )
            ]
    return _holm_bh(pd.DataFrame(rows), [], alpha) if rows else pd.DataFrame()


def all_pairs(
    acc: pd.DataFrame, items: pd.DataFrame | None = None, metric: str = "accuracy", alpha: float = 0.05
) -> pd.DataFrame:
    """Every pair of PersonaJudge cells (section 14.4: 2,016 pairs for 64 cells): Wilcoxon over
    evaluators and McNemar over judgments, Holm and Benjamini-Hochberg over the whole family,
    per test."""
    wide = _pj(acc).pivot_table(index="evaluator", columns=CELL_KEYS, values=metric)
    iw = _item_wide(items[items["method"] == PJ], CELL_KEYS) if items is not None else None
    rows = []
    for a, b in itertools.combinations(wide.columns, 2):
        key = {"cell_x": _cell_name(*a), "cell_y": _cell_name(*b)}
        rows.append({**key, **wilcoxon(wide[a], wide[b])})
        if iw is not None:
            rows.append({**key, **mcnemar_test(iw[a].to_numpy(), iw[b].to_numpy())})
    cols = ["cell_x", "cell_y", *TEST_COLUMNS]
    out = pd.DataFrame(rows, columns=cols) if rows else pd.DataFrame(columns=cols)
    return _holm_bh(out, [], alpha)


def _levels_of(df: pd.DataFrame) -> list[tuple[str, str, pd.Series]]:
    """("all", "all", every row) and (factor, level, rows of that level) for every factor."""
    out = [("all", "all", pd.Series(True, index=df.index))]
    for f in FACTORS:
        for lv in _levels(df[f].unique()):
            out.append((f, str(lv), df[f] == lv))
    return out


def chance_tests(
    acc: pd.DataFrame,
    items: pd.DataFrame | None = None,
    metric: str = "accuracy",
    alpha: float = 0.05,
    *,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> pd.DataFrame:
    """PersonaJudge against chance (1/3) overall and at every level of every factor (section
    14.1: "in both tasks and at every factor level"), and each model's Base Judge: Wilcoxon and
    one-sample t over evaluators (each evaluator's mean over the cells), and over the judgments
    the uniform-guess simulation (:func:`guess_test`; one guess per Base Judge item)."""
    rows = []
    pj = _pj(acc)
    pji = items[items["method"] == PJ] if items is not None else None

    def guesses(sel: pd.DataFrame) -> dict:
        return guess_test(
            sel["correct"].to_numpy(),
            sel["gold"].to_numpy(),
            sel["evaluator"].to_numpy(),
            sel["guess"].to_numpy(),
            draws=permutations,
            seed=seed,
        )

    for f, lv, mask in _levels_of(pj):
        per = pj[mask].groupby("evaluator")[metric].mean()
        key = {"method": PJ, "factor": f, "level": lv}
        rows += [{**key, **r} for r in one_sample(per.to_numpy(), CHANCE)]
        if pji is not None:
            rows.append({**key, **guesses(pji if f == "all" else pji[pji[f].astype(str) == lv])})
    base = acc[acc["method"] == BASE_JUDGE]
    for model, g in base.groupby("model", sort=True):
        key = {"method": BASE_JUDGE, "factor": "model", "level": model}
        rows += [{**key, **r} for r in one_sample(g.groupby("evaluator")[metric].mean().to_numpy(), CHANCE)]
        if items is not None:
            rows.append(
                {**key, **guesses(items[(items["method"] == BASE_JUDGE) & (items["model"] == model)])}
            )
    return pd.DataFrame(rows)


def alignment_tests(
    acc: pd.DataFrame,
    acc_eligible: pd.DataFrame,
    items: pd.DataFrame | None = None,
    metric: str = "accuracy",
    *,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> pd.DataFrame:
    """PersonaJudge (per evaluator, the mean over its cells) against every baseline and reference
    predictor on the consensus-eligible items, where all predictors are scored on the same pairs
    (section 14.1): Wilcoxon and paired t over evaluators, the stratified permutation test over
    judgments. Random Selection is tested as chance (:func:`chance_tests`), not as one draw."""
    rows = []
    pj = _pj(acc_eligible).groupby("evaluator")[metric].mean()
    others = acc_eligible[~acc_eligible["method"].isin([PJ, "random"])]
    elig = items[items["eligible"].astype(bool)] if items is not None else None
    pj_items = (
        elig[elig["method"] == PJ].groupby(["evaluator", "item"])["correct"].mean()
        if elig is not None
        else None
    )
    for (method, model), g in others.groupby(["method", "model"], sort=True):
        y = g.groupby("evaluator")[metric].mean()
        ev = sorted(set(pj.index) & set(y.index))
        name = method if model in ("", "-") else f"{method} ({model})"
        key = {"contrast": f"PersonaJudge vs {name}", "items": "consensus-eligible"}
        rows += [{**key, **r} for r in compare(pj.reindex(ev), y.reindex(ev))]
        if elig is not None:
            yi = (
                elig[(elig["method"] == method) & (elig["model"] == model)]
                .groupby(["evaluator", "item"])["correct"]
                .mean()
            )
            rows += [
                {**key, **r}
                for r in _item_contrast(
                    pj_items, yi, clusters_of(items), permutations=permutations, seed=seed
                )
            ]
    return pd.DataFrame(rows)


def control_tests(
    control: pd.DataFrame,
    control_items: pd.DataFrame | None = None,
    clusters: pd.Series | None = None,
    *,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
) -> pd.DataFrame:
    """PersonaJudge vs the cross-evaluator control on the matched items (section 14.5): overall
    (per evaluator, the mean over cells) and per level of each factor - Wilcoxon and paired t
    over evaluators, the stratified permutation test over the matched judgments (own correctness
    minus the control's; ``clusters``: (evaluator, item) -> cluster, see :func:`item_scores`);
    with the number of evaluators for whom PersonaJudge is ahead."""
    rows = []
    for f, lv, mask in _levels_of(control):
        g = control[mask]
        per = g.groupby("evaluator")[["own_accuracy", "control_accuracy"]].mean()
        key = {
            "factor": f,
            "level": lv,
            "evaluators_ahead": int((per["own_accuracy"] > per["control_accuracy"]).sum()),
            "evaluators": len(per),
        }
        rows += [{**key, **r} for r in compare(per["own_accuracy"], per["control_accuracy"])]
        if control_items is not None and len(control_items):
            ci = control_items if f == "all" else control_items[control_items[f].astype(str) == lv]
            per_item = ci.groupby(["evaluator", "item"])[["own_correct", "control_accuracy"]].mean()
            rows += [
                {**key, **r}
                for r in _item_contrast(
                    per_item["own_correct"],
                    per_item["control_accuracy"],
                    clusters,
                    permutations=permutations,
                    seed=seed,
                )
            ]
    return pd.DataFrame(rows)


def improvements(versus: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """The count of configurations that improve on their model's Base Judge (section 5.1.1: "43 of
    64 combinations improve"), overall and per demonstration type, model and shot count, with
    the misses that involve telemetry; and how many survive Benjamini-Hochberg per test
    (section 14.4)."""
    if not len(versus):
        return pd.DataFrame()
    cells = versus[versus["test"] == "Wilcoxon signed-rank"].drop_duplicates(CELL_KEYS)
    rows = []
    groups = [("all", "all", cells)] + [
        (f, str(lv), cells[cells[f] == lv]) for f in FACTORS for lv in _levels(cells[f].unique())
    ]
    for f, lv, g in groups:
        better = g["delta"] > 0
        worse = g["delta"] <= 0
        row = {
            "factor": f,
            "level": lv,
            "configurations": len(g),
            "improve": int(better.sum()),
            "do_not_improve": int(worse.sum()),
            "misses_with_telemetry": int((worse & g["demo_type"].str.contains("IT")).sum()),
        }
        for test, name in (
            ("Wilcoxon signed-rank", "wilcoxon"),
            ("stratified permutation", "permutation"),
            ("McNemar exact", "mcnemar"),
        ):
            t = versus[versus["test"] == test].merge(g[CELL_KEYS], on=CELL_KEYS)
            row[f"bh_significant_{name}"] = int((t["p_bh"] < alpha).sum()) if len(t) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)
