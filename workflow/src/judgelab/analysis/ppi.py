"""Prediction-powered inference (PPI++) of a mean, vectorised, and its simulation over topic draws.

The estimator of Angelopoulos, Duchi and Zrnic ("PPI++: Efficient Prediction-Powered Inference",
arXiv 2311.01453; the authors' library ``ppi-python``, ``ppi_py.ppi_mean_ci``) for one mean: n
labelled items with the gold value ``y`` and the prediction ``yhat``, N unlabelled items with the
prediction only (``yhat_unlabeled``). With the power-tuning weight lambda

    theta = lambda * mean(yhat_unlabeled) + mean(y - lambda * yhat)
    se^2  = var(lambda * yhat_unlabeled) / N + var(y - lambda * yhat) / n      (variances with 1/n)
    lambda = clip(cov(y, yhat) / ((1 + n / N) * var(yhat over all n + N items)), 0, 1)

(cov with 1/n, the pooled variance with 1/(n + N - 1): exactly ``ppi_py``'s ``_calc_lam_glm`` for a
mean), and the interval theta -/+ z_(1 - alpha/2) se. lambda = 0 is the classical interval of the n
gold values, lambda = 1 plain PPI. Where every prediction is the same (the pooled variance is 0)
lambda is 0 here (``ppi_py`` divides by zero and returns NaN).

Here every function takes arrays whose last axis is the items, so one call estimates many means at
once (systems, system pairs, repeated draws): ``ppi-python`` costs about 0.26 ms a call and pulls in
numba, llvmlite and gdown; the tests check these functions against it.

In IR evaluation (Boyeau et al., "AutoEval Done Right", arXiv 2403.07008; Oosterhuis et al.,
arXiv 2407.02464) an item is a topic: ``y`` a system's metric under the human qrels on the n
human-judged topics, ``yhat`` the same under the judge's labels, ``yhat_unlabeled`` the judge's on the
other topics. :func:`simulate` draws the n topics many times (without replacement) and reports how
the three estimates - human-only on n topics, judge-only on all, PPI - cover the mean over all the
collection's topics under the human qrels (a finite population, sampled without replacement: the
intervals assume an infinite one, so they are conservative for n near the collection's size and
undercover for small n, where the normal approximation is poor).

When the labelled topics were not drawn uniformly but with known, unequal inclusion probabilities
(``judgelab annotate choose``'s stratified and active strategies), :func:`weighted_ppi_mean` keeps
the estimate unbiased by weighting each labelled topic's rectifier by 1 / its inclusion probability
(Horvitz-Thompson), with the judge's mean over every topic of the collection as the known part.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgelab.errors import InputError

#: The methods of :func:`simulate`, in the order the tables show them.
METHODS = ("human_only", "judge_only", "ppi")


def _z(alpha: float) -> float:
    from scipy.stats import norm

    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must lie in (0, 1), not {alpha}")
    return float(norm.ppf(1.0 - alpha / 2.0))


def _t(alpha: float, df: int) -> float:
    from scipy.stats import t

    _z(alpha)  # the same check of alpha
    return float(t.ppf(1.0 - alpha / 2.0, df))


def ppi_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray) -> np.ndarray:
    """PPI++'s power-tuning weight per mean (over the leading axes), clipped to [0, 1]; 0 where the
    predictions do not vary."""
    y, yhat, yu = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabeled))
    n, big_n = y.shape[-1], yu.shape[-1]
    cov = ((y - y.mean(-1, keepdims=True)) * (yhat - yhat.mean(-1, keepdims=True))).mean(-1)
    pooled = np.concatenate([yhat, yu], axis=-1)
    var = pooled.var(-1, ddof=1)
    denom = (1.0 + n / big_n) * var
    safe = np.where(denom > 0, denom, 1.0)
    return np.where(denom > 0, np.clip(cov / safe, 0.0, 1.0), 0.0)


@dataclass(frozen=True)
class Estimate:
    """Point estimates and interval bounds, each an array over the leading axes of the inputs."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    lam: np.ndarray


def ppi_mean(
    y: np.ndarray, yhat: np.ndarray, yhat_unlabeled: np.ndarray, alpha: float = 0.05, lam: float | None = None
) -> Estimate:
    """The PPI++ estimate of the mean and its two-sided 1 - ``alpha`` interval (``ppi_py.ppi_mean_ci``
    with ``lam=None``; a fixed ``lam`` as its ``lam``). ``y`` and ``yhat``: (..., n); ``yhat_unlabeled``:
    (..., N), N >= 1."""
    y, yhat, yu = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabeled))
    if y.shape != yhat.shape:
        raise InputError(f"gold and predicted values differ in shape: {y.shape} and {yhat.shape}")
    n, big_n = y.shape[-1], yu.shape[-1]
    if n < 2 or big_n < 1:
        raise InputError(f"PPI needs at least 2 labelled and 1 unlabelled item (got {n} and {big_n})")
    z = _z(alpha)
    weight = ppi_lambda(y, yhat, yu) if lam is None else np.full(y.shape[:-1], float(lam))
    w = weight[..., None]
    rectifier = y - w * yhat
    theta = (w * yu).mean(-1) + rectifier.mean(-1)
    se = np.sqrt((w * yu).var(-1) / big_n + rectifier.var(-1) / n)
    return Estimate(theta, theta - z * se, theta + z * se, weight)


def weighted_lambda(y: np.ndarray, yhat: np.ndarray, inclusion: np.ndarray) -> np.ndarray:
    """The weight lambda of :func:`weighted_ppi_mean` per mean (over the leading axes): the
    regression slope of the inverse-probability-weighted gold values on the weighted predictions,
    cov(z_y, z_f) / var(z_f) with z = value / inclusion, clipped to [0, 1] - the lambda that
    minimises the estimated variance of the weighted rectifier; 0 where the weighted predictions do
    not vary."""
    y, yhat = (np.asarray(a, dtype=float) for a in (y, yhat))
    inv = 1.0 / np.asarray(inclusion, dtype=float)
    zy, zf = y * inv, yhat * inv
    cov = ((zy - zy.mean(-1, keepdims=True)) * (zf - zf.mean(-1, keepdims=True))).mean(-1)
    var = zf.var(-1)
    safe = np.where(var > 0, var, 1.0)
    return np.where(var > 0, np.clip(cov / safe, 0.0, 1.0), 0.0)


def weighted_ppi_mean(
    y: np.ndarray,
    yhat: np.ndarray,
    judge_population: np.ndarray,
    inclusion: np.ndarray,
    alpha: float = 0.05,
    lam: float | None = None,
    student: bool = True,
) -> Estimate:
    """PPI of a finite population's mean when the n labelled items were drawn with known,
    possibly unequal, first-order inclusion probabilities ``inclusion`` (pi_i > 0): the difference
    estimator of survey sampling with a Horvitz-Thompson rectifier,

        theta = lambda * mean(judge_population) + (1/T) sum_i (y_i - lambda * yhat_i) / pi_i,

    ``judge_population`` (..., T) the prediction on every one of the population's T items (the
    labelled ones among them: here the judge labels every topic), ``y`` and ``yhat`` (..., n) the gold
    value and the prediction on the labelled items. For a fixed lambda it is unbiased under any
    design with those inclusion probabilities (E sum_S r_i / pi_i = sum_U r_i). Its variance is
    estimated as a with-replacement draw of n items with probabilities pi_i / n (Hansen-Hurwitz):
    with z_i = n (y_i - lambda yhat_i) / (T pi_i), theta = lambda mean(judge_population) + mean(z)
    and se^2 = var(z, ddof 1) / n - no finite-population correction, so conservative for a design
    without replacement. The judge's mean over the population is a known constant (the collection
    is the population): it adds no variance. ``lam`` None: :func:`weighted_lambda`; 0 gives the
    Horvitz-Thompson estimate of the gold values alone. Under equal probabilities (pi = n / T) it is
    PPI with the judge's mean over all T items, ``ppi_py.ppi_mean_ci`` with ``w`` proportional to
    1 / pi (its weights are rescaled to sum n) and a constant ``Yhat_unlabeled``, up to the
    variance's ddof."""
    y, yhat, yp = (np.asarray(a, dtype=float) for a in (y, yhat, judge_population))
    pi = np.broadcast_to(np.asarray(inclusion, dtype=float), y.shape)
    if y.shape != yhat.shape:
        raise InputError(f"gold and predicted values differ in shape: {y.shape} and {yhat.shape}")
    n, big_t = y.shape[-1], yp.shape[-1]
    if n < 2 or big_t < n:
        raise InputError(
            f"weighted PPI needs at least 2 labelled items of a population at least as large (got {n} of {big_t})"
        )
    if not ((pi > 0) & (pi <= 1)).all():
        raise InputError("every inclusion probability must lie in (0, 1]")
    z = _t(alpha, n - 1) if student else _z(alpha)
    weight = weighted_lambda(y, yhat, pi) if lam is None else np.full(y.shape[:-1], float(lam))
    w = weight[..., None]
    scaled = n * (y - w * yhat) / (big_t * pi)
    theta = weight * yp.mean(-1) + scaled.mean(-1)
    se = np.sqrt(scaled.var(-1, ddof=1) / n)
    return Estimate(theta, theta - z * se, theta + z * se, weight)


def classical_mean(y: np.ndarray, alpha: float = 0.05) -> Estimate:
    """The mean of the gold values alone and its normal interval, standard error std / sqrt(n) with
    the 1/n variance (``ppi_py.classical_mean_ci``)."""
    y = np.asarray(y, dtype=float)
    if y.shape[-1] < 2:
        raise InputError(f"an interval needs at least 2 items (got {y.shape[-1]})")
    z = _z(alpha)
    mean = y.mean(-1)
    se = y.std(-1) / np.sqrt(y.shape[-1])
    return Estimate(mean, mean - z * se, mean + z * se, np.zeros_like(mean))


def pair_contrasts(n_systems: int) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The (systems x pairs) matrix whose column for pair (a, b), a < b, is e_a - e_b."""
    pairs = [(a, b) for a in range(n_systems) for b in range(a + 1, n_systems)]
    matrix = np.zeros((n_systems, len(pairs)))
    for k, (a, b) in enumerate(pairs):
        matrix[a, k], matrix[b, k] = 1.0, -1.0
    return matrix, pairs


def topic_draws(n_topics: int, n: int, draws: int, seed: int) -> np.ndarray:
    """``draws`` seeded samples of ``n`` of ``n_topics`` topics without replacement: (draws, n)
    indices, each row's labelled topics; the rest of a row's topics are its unlabelled ones."""
    if not 2 <= n < n_topics:
        raise InputError(
            f"n = {n} human-judged topics: it must be at least 2 and below the dataset's {n_topics} topics "
            "(the judge labels the rest)"
        )
    if draws < 1:
        raise InputError(f"draws must be at least 1 (got {draws})")
    rng = np.random.default_rng(seed)
    order = rng.permuted(np.tile(np.arange(n_topics), (draws, 1)), axis=1)
    return np.sort(order[:, :n], axis=1)


def _unlabelled(labelled: np.ndarray, n_topics: int) -> np.ndarray:
    mask = np.ones((labelled.shape[0], n_topics), dtype=bool)
    np.put_along_axis(mask, labelled, False, axis=1)
    return np.nonzero(mask)[1].reshape(labelled.shape[0], n_topics - labelled.shape[1])


@dataclass(frozen=True)
class Simulation:
    """Per method, arrays (draws x targets): estimates and bounds (judge-only: no interval, NaN);
    ``truth`` (targets): the all-topic human mean; ``lam`` (draws x targets): PPI's weights."""

    truth: np.ndarray
    estimates: dict[str, Estimate]


def simulate(
    human: np.ndarray,
    judge: np.ndarray,
    n: int,
    draws: int = 200,
    seed: int = 0,
    alpha: float = 0.05,
    chunk: int = 25,
) -> Simulation:
    """The three estimates of every target's mean (columns of the topics x targets matrices
    ``human`` and ``judge``: systems' metrics or pair differences) over ``draws`` seeded draws of
    ``n`` human-judged topics: human-only (:func:`classical_mean` on the n topics), judge-only (the
    judge's mean over all topics; the same every draw, no interval) and PPI (:func:`ppi_mean`, the
    judge on the other topics)."""
    human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    if human.shape != judge.shape or human.ndim != 2:
        raise InputError(
            f"human and judge matrices must be topics x targets alike ({human.shape}, {judge.shape})"
        )
    n_topics, n_targets = human.shape
    labelled = topic_draws(n_topics, n, draws, seed)
    unlabelled = _unlabelled(labelled, n_topics)
    parts: dict[str, list[Estimate]] = {"human_only": [], "ppi": []}
    for start in range(0, draws, chunk):
        lab, unl = labelled[start : start + chunk], unlabelled[start : start + chunk]
        # (draws, targets, topics): the last axis is the items
        y = np.transpose(human[lab], (0, 2, 1))
        yhat = np.transpose(judge[lab], (0, 2, 1))
        yu = np.transpose(judge[unl], (0, 2, 1))
        parts["human_only"].append(classical_mean(y, alpha))
        parts["ppi"].append(ppi_mean(y, yhat, yu, alpha))
    estimates = {
        method: Estimate(
            *(np.concatenate([getattr(e, f) for e in chunks]) for f in ("estimate", "low", "high", "lam"))
        )
        for method, chunks in parts.items()
    }
    judged = np.tile(judge.mean(0), (draws, 1))
    nan = np.full((draws, n_targets), np.nan)
    estimates["judge_only"] = Estimate(judged, nan, nan, np.ones((draws, n_targets)))
    return Simulation(human.mean(0), {m: estimates[m] for m in METHODS})


def summarise(sim: Simulation, targets: np.ndarray | slice = slice(None)) -> dict[str, dict[str, float]]:
    """Per method over the chosen targets (columns) and every draw: ``coverage`` (share of intervals
    holding the all-topic human mean; NaN for judge-only), ``width`` (mean interval width), ``bias``
    (mean estimate minus truth) and ``rmse``."""
    out: dict[str, dict[str, float]] = {}
    truth = sim.truth[targets]
    for method, e in sim.estimates.items():
        est, low, high = e.estimate[:, targets], e.low[:, targets], e.high[:, targets]
        has = ~np.isnan(low)
        covered = (low <= truth) & (truth <= high)
        out[method] = {
            "coverage": float(covered[has].mean()) if has.any() else float("nan"),
            "width": float((high - low)[has].mean()) if has.any() else float("nan"),
            "bias": float((est - truth).mean()),
            "rmse": float(np.sqrt(((est - truth) ** 2).mean())),
        }
    return out


def separation(sim: Simulation, pair_columns: np.ndarray, separated: np.ndarray) -> dict[str, float]:
    """Per method with an interval, over the pair targets ``pair_columns`` the human qrels separate
    (``separated``: +1 / -1 the sign of a significant difference on all topics, 0 none): the share of
    (draw, separated pair) cells whose interval excludes 0 on the same side. NaN without such a
    pair."""
    signs = np.asarray(separated)
    chosen = signs != 0
    out: dict[str, float] = {}
    for method, e in sim.estimates.items():
        if method == "judge_only" or not chosen.any():
            out[method] = float("nan")
            continue
        low, high = e.low[:, pair_columns][:, chosen], e.high[:, pair_columns][:, chosen]
        same = np.where(signs[chosen] > 0, low > 0, high < 0)
        out[method] = float(same.mean())
    return out
