"""How far a judge's system ranking agrees with the human one.

Inputs are two *per-topic tables* of one measure: the human one (every run scored under the human
qrels) and the judge's (the same runs under the judge's labels). A per-topic table is either tidy,
with columns ``run``, ``topic``, ``value`` (the rows of
:func:`judgelab.studies.ranking.scores.score_runs` for one measure; rows with topic ``all`` are
dropped), or wide: index = topics, columns = runs. :func:`align` turns both into topic x run
matrices over the same runs and the topics both tables score; a system's score is its mean over
those topics (trec_eval's mean when both tables cover the same topics). :func:`align`,
:func:`ranking_order`, :func:`kendall_tau` and :func:`spearman` are the shared core's
(:mod:`judgelab.analysis.rankcorr`, re-exported here).

Rankings order systems by score descending with ties broken by run name ascending (a fixed,
judge-independent rule), where a measure needs a total order (tau_ap, RBO, top-k selection);
Kendall's tau-b and Spearman's rho use the scores themselves and handle ties as scipy does.

Library where one exists: Kendall's tau-b (:func:`scipy.stats.kendalltau`), Spearman's rho
(:func:`scipy.stats.spearmanr`), the paired tests (:func:`scipy.stats.ttest_rel`,
:func:`scipy.stats.wilcoxon`, :func:`scipy.stats.binomtest`). By hand (no maintained library
computes them on these inputs): tau_ap, RBO_ext, top-k tau, tau_gap (the shared core's
:mod:`judgelab.analysis.taugap`), the topic bootstrap and the
significance-decision agreement; each is tested against hand-computed cases.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from itertools import combinations
from types import SimpleNamespace

import numpy as np
import pandas as pd

from judgelab.analysis.bootstrap import percentile_interval, resample_indices
from judgelab.analysis.rankcorr import align as align
from judgelab.analysis.rankcorr import kendall_tau as kendall_tau
from judgelab.analysis.rankcorr import ranking_order as ranking_order
from judgelab.analysis.rankcorr import scipy_stats as _stats
from judgelab.analysis.rankcorr import spearman as spearman
from judgelab.analysis.rankcorr import topic_matrix as topic_matrix
from judgelab.analysis.stats import PAIRED_TESTS, paired_p
from judgelab.analysis.taugap import tau_gap, tau_gap_at_k
from judgelab.studies.ranking.settings import CorrelationSettings

#: Keys of :func:`correlations` (the columns of ``correlations.tsv``), in order.
CORRELATION_KEYS = [
    "n_systems",
    "n_topics",
    "kendall_tau",
    "kendall_tau_low",
    "kendall_tau_high",
    "kendall_tau_ci",
    "kendall_tau_boot_below",
    "tau_ap",
    "spearman",
    "rbo",
    "topk_tau",
    "tau_gap",
    "tau_gap_at_k",
    "sig_agreement",
    "sig_fpr",
    "sig_fnr",
]

#: Paired two-sided tests of :func:`pair_decisions`, by name.
TESTS = PAIRED_TESTS


def _check_orders(a: Sequence[Hashable], b: Sequence[Hashable], same_items: bool) -> None:
    for what, seq in (("first", a), ("second", b)):
        if len(set(seq)) != len(seq):
            raise ValueError(f"the {what} ranking lists an item twice")
    if same_items and set(a) != set(b):
        raise ValueError("the two rankings must hold the same items")


def tau_ap(reference: Sequence[Hashable], ranking: Sequence[Hashable]) -> float:
    """AP correlation tau_ap (Yilmaz, Aslam and Robertson, SIGIR 2008) of ``ranking`` against the
    ``reference`` (the true order; here the human ranking), both lists of the same N items, best
    first:

        tau_ap = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1)  -  1

    where C(i) is the number of items above rank i in ``ranking`` that the reference also ranks
    above the item at rank i of ``ranking``. It is asymmetric: swapping the arguments changes the
    value in general (errors near the top of ``ranking`` weigh most). Ties: none; the lists are
    total orders (:func:`correlations` breaks score ties by run name, see :func:`ranking_order`).
    E.g. reference 1..10 and ranking 2,1,3..10 give 7/9 = 0.7778; 1..8,10,9 give 79/81 = 0.9753.
    NaN for fewer than two items."""
    _check_orders(reference, ranking, same_items=True)
    n = len(ranking)
    if n < 2:
        return float("nan")
    where = {item: pos for pos, item in enumerate(reference)}
    ref_pos = [where[item] for item in ranking]
    total = 0.0
    for i in range(1, n):
        correct = sum(1 for j in range(i) if ref_pos[j] < ref_pos[i])
        total += correct / i
    return 2.0 * total / (n - 1) - 1.0


def rbo(a: Sequence[Hashable], b: Sequence[Hashable], p: float) -> float:
    """Extrapolated rank-biased overlap RBO_ext (Webber, Moffat and Zobel 2010, TOIS 28(4), eq. 32)
    of two rankings (best first, no ties: the given order is the ranking; lengths may differ).

    With S the shorter list (length s), L the longer (length l), A_d = X_d / d the agreement at
    depth d, X_d = |S[:d] & L[:d]| for d <= s and X_d = |S & L[:d]| for d > s:

        RBO_ext = (1-p)/p * (sum_{d=1..l} X_d/d p^d + sum_{d=s+1..l} X_s (d-s)/(s d) p^d)
                  + ((X_l - X_s)/l + X_s/s) p^l

    which for s = l = k is (1-p)/p * sum_{d=1..k} A_d p^d + A_k p^k (eq. 30): 1 for identical
    lists, 0 for disjoint ones. ``p`` (persistence, 0 < p < 1): the weight of the top d ranks is
    about 1 - p^d (p = 0.9: the top 10 carry about 86%)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie strictly between 0 and 1, not {p}")
    _check_orders(a, b, same_items=False)
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    n_s, n_l = len(short), len(long_)  # s and l of the formula
    if n_s == 0:
        return float("nan")
    seen_s: set = set()
    seen_l: set = set()
    overlap = 0
    x = [0] * (n_l + 1)  # x[d] = X_d
    for d in range(1, n_l + 1):
        if d <= n_s:
            item_s = short[d - 1]
            overlap += item_s in seen_l
            seen_s.add(item_s)
        item_l = long_[d - 1]
        overlap += item_l in seen_s
        seen_l.add(item_l)
        x[d] = overlap
    total = sum(x[d] / d * p**d for d in range(1, n_l + 1))
    total += sum(x[n_s] * (d - n_s) / (n_s * d) * p**d for d in range(n_s + 1, n_l + 1))
    return (1 - p) / p * total + ((x[n_l] - x[n_s]) / n_l + x[n_s] / n_s) * p**n_l


def topk_tau(human: pd.Series, judge: pd.Series, k: int) -> float:
    """Kendall's tau-b of the human and judge scores over the systems in the human top ``k``
    (:func:`ranking_order` of the human scores: ties at the cut go to the smaller run name); all
    systems when there are at most ``k``. NaN for fewer than two systems."""
    if k < 2:
        raise ValueError(f"k must be at least 2, not {k}")
    top = ranking_order(human)[:k]
    return kendall_tau(human.loc[top].to_numpy(), judge.loc[top].to_numpy())


# --- topic bootstrap --------------------------------------------------------------------------


def bootstrap_taus(
    per_topic_human: pd.DataFrame, per_topic_judge: pd.DataFrame, n_boot: int, seed: int
) -> np.ndarray:
    """Kendall's tau-b of the two system orders in each of ``n_boot`` topic resamples: every
    resample draws n_topics topics with replacement (``numpy.random.default_rng(seed).integers``,
    one row of draws per resample), each system's score is its mean over the drawn topics (a topic
    drawn twice counts twice) under the human and under the judge table. A resample in which all
    systems tie under either table gives NaN."""
    human, judge = align(per_topic_human, per_topic_judge)
    return _bootstrap_taus(human.to_numpy(), judge.to_numpy(), n_boot, seed)


def _bootstrap_taus(h: np.ndarray, j: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    draws = resample_indices(h.shape[0], n_boot, seed)
    return np.array([kendall_tau(h[rows].mean(axis=0), j[rows].mean(axis=0)) for rows in draws])


def bootstrap_tau(
    per_topic_human: pd.DataFrame,
    per_topic_judge: pd.DataFrame,
    n_boot: int,
    seed: int,
    alpha: float,
) -> tuple[float, float]:
    """Percentile interval (1 - ``alpha``) of Kendall's tau-b under topic resampling
    (:func:`bootstrap_taus`): the alpha/2 and 1 - alpha/2 quantiles of the resampled taus
    (``numpy.quantile``, linear interpolation), NaN resamples left out; (NaN, NaN) if all are NaN."""
    human, judge = align(per_topic_human, per_topic_judge)
    return percentile_interval(_bootstrap_taus(human.to_numpy(), judge.to_numpy(), n_boot, seed), alpha)


#: How tau's topic-bootstrap interval is computed (``ranking.correlation.ci_method``): ``bca``,
#: the bias-corrected and accelerated interval (scipy.stats.bootstrap), or ``percentile``.
CI_METHODS = ("bca", "percentile")


def tau_interval(
    h: np.ndarray, j: np.ndarray, n_boot: int, seed: int, alpha: float, method: str
) -> tuple[float, float, str, float]:
    """The ``1 - alpha`` topic-bootstrap interval of Kendall's tau-b between the column means of
    ``h`` (human, topics x systems) and ``j`` (judge), the method that gave it, and the share of
    the resampled taus below the observed one (0.5 for an unbiased bootstrap).

    Resampled topic sets make every system's mean noisier than the all-topic mean, so the
    resampled taus sit mostly below the observed one and a percentile interval can exclude it.
    ``bca`` corrects for that bias (and for the skew, by the jackknife's acceleration):
    ``scipy.stats.bootstrap(method="BCa")`` over the topic indices, with the resamples of
    :func:`bootstrap_taus` (the same seed draws the same topics). Where BCa is undefined (every
    resampled tau equal, a tau undefined in a resample or a jackknife sample, fewer than 3
    topics) the percentile interval of the same resamples is given, and the method says so
    (``percentile (BCa undefined)``).

    BCa's correction grows with that share; where nearly every resampled tau is below the observed
    one (99% and more: a judge very close to the human order on many topics) the corrected
    quantiles land in the last few resamples above it, and the interval can lie above the
    observed tau (measured on DL21: docs/studies/ranking.md). The share is in the table
    (``kendall_tau_boot_below``) so a reader sees it."""
    taus = _bootstrap_taus(h, j, n_boot, seed)
    tau = kendall_tau(h.mean(axis=0), j.mean(axis=0))
    known = taus[~np.isnan(taus)]
    below = float(np.mean(known < tau)) if known.size and not math.isnan(tau) else math.nan
    if method == "percentile":
        return (*percentile_interval(taus, alpha), "percentile", below)
    low = high = math.nan
    if h.shape[0] >= 3 and not np.isnan(taus).any() and np.ptp(taus) > 1e-12:

        def tau_of(rows: np.ndarray) -> float:
            return kendall_tau(h[rows].mean(axis=0), j[rows].mean(axis=0))

        with warnings.catch_warnings():
            # a degenerate jackknife is reported by the NaN bounds, handled below
            warnings.simplefilter("ignore", category=RuntimeWarning)
            warnings.simplefilter("ignore", category=_stats().DegenerateDataWarning)
            # the resamples already drawn (scipy draws the same with the same seed): scipy adds
            # the bias correction and the jackknife's acceleration
            res = _stats().bootstrap(
                (np.arange(h.shape[0]),),
                tau_of,
                n_resamples=0,
                bootstrap_result=SimpleNamespace(bootstrap_distribution=taus),
                vectorized=False,
                confidence_level=1.0 - alpha,
                method="BCa",
            )
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if math.isnan(low) or math.isnan(high):
        return (*percentile_interval(taus, alpha), "percentile (BCa undefined)", below)
    return low, high, "BCa", below


# --- significance decisions -------------------------------------------------------------------


def _signs(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per column: sign of mean(x - y) over the rows, 0 within rounding (1e-12 of the columns'
    largest absolute value, at least 1) of 0."""
    diff = (x - y).mean(axis=0)
    scale = np.maximum(1.0, np.maximum(np.abs(x).max(axis=0), np.abs(y).max(axis=0)))
    return np.where(np.abs(diff) <= 1e-12 * scale, 0, np.sign(diff)).astype(int)


def _pair_pvalues(x: np.ndarray, y: np.ndarray, test: str) -> np.ndarray:
    """:func:`paired_p` of every column of x against the same column of y; the t-test in one
    vectorised scipy.stats.ttest_rel call (the same computation per column)."""
    if test != "t":
        return np.array([paired_p(x[:, i], y[:, i], test) for i in range(x.shape[1])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = np.asarray(_stats().ttest_rel(x, y, axis=0).pvalue, dtype=float)
    return np.where((x != y).any(axis=0), p, np.nan)


def pair_decisions(
    per_topic_human: pd.DataFrame, per_topic_judge: pd.DataFrame, alpha: float, test: str
) -> pd.DataFrame:
    """The significance decision of every pair of systems under both tables.

    For runs a < b (by name) and each table: p = :func:`paired_p` of a's and b's per-topic values
    over the common topics; significant = p < ``alpha`` (NaN p: not significant); sign = sign of
    the mean difference a - b (-1, 0, 1; 0 within 1e-12 of the values' scale, i.e. rounding).
    The decision is "not significant", or "significant with this sign"; ``agree`` is True when
    both tables' decisions are equal. Columns run_a, run_b,
    human_p, human_sig, human_sign, judge_p, judge_sig, judge_sign, agree."""
    return _pair_decisions(*align(per_topic_human, per_topic_judge), alpha, test)


def _pair_decisions(human: pd.DataFrame, judge: pd.DataFrame, alpha: float, test: str) -> pd.DataFrame:
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r} (known: {', '.join(TESTS)})")
    pairs = list(combinations(range(human.shape[1]), 2))
    ia = np.array([a for a, _ in pairs], dtype=int)
    ib = np.array([b for _, b in pairs], dtype=int)
    out = pd.DataFrame({"run_a": human.columns[ia], "run_b": human.columns[ib]})
    for what, m in (("human", human.to_numpy(float)), ("judge", judge.to_numpy(float))):
        p = _pair_pvalues(m[:, ia], m[:, ib], test) if pairs else np.array([])
        out[f"{what}_p"] = p
        out[f"{what}_sig"] = p < alpha  # NaN p: False
        out[f"{what}_sign"] = _signs(m[:, ia], m[:, ib]) if pairs else np.array([], dtype=int)
    out["agree"] = (out["human_sig"] == out["judge_sig"]) & (
        ~out["human_sig"] | (out["human_sign"] == out["judge_sign"])
    )
    return out


def _share(count: int, of: int) -> float:
    return count / of if of else float("nan")


def significance_agreement(
    per_topic_human: pd.DataFrame, per_topic_judge: pd.DataFrame, alpha: float, test: str
) -> dict[str, float | int]:
    """Agreement of the pairwise significance decisions (:func:`pair_decisions`) of the human and
    the judge tables, over the P = n(n-1)/2 system pairs:

    * ``sig_agreement`` = n_agree / P: pairs both find not significant, or both find significant
      with the same sign of the mean difference;
    * ``sig_fpr`` = n_false_pos / n_human_not_sig: among the pairs the human test finds not
      significant, the share the judge finds significant (either sign);
    * ``sig_fnr`` = n_false_neg / n_human_sig: among the pairs the human test finds significant,
      the share the judge does not confirm: not significant, or significant in the opposite
      direction (those are also counted as ``n_sign_flips``);

    a rate whose denominator is 0 is NaN. Also returns the counts n_pairs, n_agree, n_human_sig,
    n_human_not_sig, n_judge_sig, n_false_pos, n_false_neg, n_sign_flips."""
    return _significance_agreement(_pair_decisions(*align(per_topic_human, per_topic_judge), alpha, test))


def _significance_agreement(d: pd.DataFrame) -> dict[str, float | int]:
    hs, js = d["human_sig"].astype(bool), d["judge_sig"].astype(bool)
    flips = hs & js & (d["human_sign"] != d["judge_sign"])
    counts = {
        "n_pairs": len(d),
        "n_agree": int(d["agree"].sum()),
        "n_human_sig": int(hs.sum()),
        "n_human_not_sig": int((~hs).sum()),
        "n_judge_sig": int(js.sum()),
        "n_false_pos": int((~hs & js).sum()),
        "n_false_neg": int((hs & ~js).sum() + flips.sum()),
        "n_sign_flips": int(flips.sum()),
    }
    return {
        "sig_agreement": _share(counts["n_agree"], counts["n_pairs"]),
        "sig_fpr": _share(counts["n_false_pos"], counts["n_human_not_sig"]),
        "sig_fnr": _share(counts["n_false_neg"], counts["n_human_sig"]),
        **counts,
    }


# --- all together -----------------------------------------------------------------------------


def correlations(
    per_topic_human: pd.DataFrame,
    per_topic_judge: pd.DataFrame,
    settings: CorrelationSettings | None = None,
) -> dict[str, float | int]:
    """One row of ``correlations.tsv`` (keys :data:`CORRELATION_KEYS`) for one measure.

    ``settings`` (:class:`~judgelab.studies.ranking.settings.CorrelationSettings`; None: its
    defaults, k 10, p 0.9, n_boot 1000, seed 0, ci_alpha and sig_alpha 0.05, test ``t``). Systems'
    scores are their means over the common topics (:func:`align`). ``kendall_tau``: tau-b of the
    mean scores, with the ``1 - ci_alpha`` topic-bootstrap interval
    ``kendall_tau_low``/``kendall_tau_high`` (:func:`tau_interval`: BCa by default, ``ci_method``;
    ``n_boot`` resamples, ``seed``), the method that gave it (``kendall_tau_ci``) and the share of
    resampled taus below the observed one (``kendall_tau_boot_below``); ``tau_ap``: :func:`tau_ap` of the judge's order against the human order (the
    reference); ``spearman``: rho of the mean scores; ``rbo``: :func:`rbo` of the two orders with
    persistence ``p``; ``topk_tau``: :func:`topk_tau` over the human top ``k``; ``tau_gap``:
    :func:`judgelab.analysis.taugap.tau_gap` of the judge's mean scores against the reference's
    (each misordering weighted by the reference's gap), ``tau_gap_at_k`` the same over the
    reference's top ``tau_gap_cutoff`` systems (the systems in name order: ties at the cut to the
    smaller name); ``sig_*``:
    :func:`significance_agreement` with ``sig_alpha`` and ``test``. Orders: score descending, ties
    by run name (:func:`ranking_order`)."""
    s = settings or CorrelationSettings()
    human, judge = align(per_topic_human, per_topic_judge)
    mean_h, mean_j = human.mean(axis=0), judge.mean(axis=0)
    order_h, order_j = ranking_order(mean_h), ranking_order(mean_j)
    low, high, method, below = tau_interval(
        human.to_numpy(), judge.to_numpy(), s.n_boot, s.seed, s.ci_alpha, s.ci_method
    )
    sig = _significance_agreement(_pair_decisions(human, judge, s.sig_alpha, s.test))
    out = {
        "n_systems": human.shape[1],
        "n_topics": human.shape[0],
        "kendall_tau": kendall_tau(mean_h.to_numpy(), mean_j.to_numpy()),
        "kendall_tau_low": low,
        "kendall_tau_high": high,
        "kendall_tau_ci": method,
        "kendall_tau_boot_below": below,
        "tau_ap": tau_ap(order_h, order_j),
        "spearman": spearman(mean_h.to_numpy(), mean_j.to_numpy()),
        "rbo": rbo(order_h, order_j, s.p),
        "topk_tau": topk_tau(mean_h, mean_j, s.k),
        "tau_gap": tau_gap(mean_h.to_numpy(), mean_j.to_numpy()),
        "tau_gap_at_k": tau_gap_at_k(mean_h.to_numpy(), mean_j.to_numpy(), s.tau_gap_cutoff),
        "sig_agreement": sig["sig_agreement"],
        "sig_fpr": sig["sig_fpr"],
        "sig_fnr": sig["sig_fnr"],
    }
    return {key: out[key] for key in CORRELATION_KEYS}
