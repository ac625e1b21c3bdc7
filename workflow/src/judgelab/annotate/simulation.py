"""How well each choosing strategy's topics serve PPI, simulated on a collection whose human labels
are all known: draw n topics many times by a strategy's design (:mod:`judgelab.annotate.choose`),
estimate every target's mean (systems' scores, system pairs' differences) by the weighted PPI
estimate (:func:`judgelab.analysis.ppi.weighted_ppi_mean`: the judge on every topic, the human
values on the drawn ones weighted by 1 / inclusion), and compare with the mean over all topics under
the human labels (:func:`judgelab.analysis.ppi.summarise`: coverage, width, bias;
:func:`judgelab.analysis.ppi.separation`: the pairs separated alike). ``workflow/benchmarks/
choose_strategies.py`` runs it on DL21 with the published judges; its table decides
:data:`judgelab.annotate.choose.DEFAULT_STRATEGY` by :func:`default_strategy`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.analysis.ppi import Estimate, Simulation, weighted_ppi_mean
from judgelab.annotate.choose import Design
from judgelab.errors import InputError

#: The method name of the weighted estimate in a :class:`judgelab.analysis.ppi.Simulation`.
WEIGHTED = "weighted_ppi"


def draw_samples(design: Design, draws: int, seed: int) -> np.ndarray:
    """``draws`` samples of ``design`` from one generator seeded with ``seed``: (draws, n) indices."""
    if draws < 1:
        raise InputError(f"draws must be at least 1 (got {draws})")
    rng = np.random.default_rng(seed)
    return np.stack([design.draw(rng) for _ in range(draws)])


def simulate_design(
    human: np.ndarray,
    judge: np.ndarray,
    design: Design,
    draws: int,
    seed: int,
    alpha: float,
    chunk: int = 50,
) -> Simulation:
    """The weighted PPI estimate of every target's mean (the columns of the topics x targets
    matrices ``human`` and ``judge``, whose rows are the design's candidates) over ``draws`` samples
    of ``design`` (:func:`draw_samples`); ``truth`` is the human mean over all topics."""
    human, judge = np.asarray(human, dtype=float), np.asarray(judge, dtype=float)
    if human.shape != judge.shape or human.ndim != 2 or human.shape[0] != len(design.inclusion):
        raise InputError(
            f"human and judge matrices must be topics x targets alike, one row per candidate of the design "
            f"({human.shape}, {judge.shape}, {len(design.inclusion)} candidates)"
        )
    samples = draw_samples(design, draws, seed)
    population = judge.T  # (targets, topics)
    parts = []
    for start in range(0, draws, chunk):
        idx = samples[start : start + chunk]
        y = np.transpose(human[idx], (0, 2, 1))  # (draws, targets, n)
        yhat = np.transpose(judge[idx], (0, 2, 1))
        pi = design.inclusion[idx][:, None, :]
        parts.append(weighted_ppi_mean(y, yhat, population, pi, alpha))
    estimate = Estimate(
        *(np.concatenate([getattr(e, f) for e in parts]) for f in ("estimate", "low", "high", "lam"))
    )
    return Simulation(human.mean(0), {WEIGHTED: estimate})


def default_strategy(table: pd.DataFrame, nominal: float, slack: float) -> str | None:
    """The strategy to choose by default from a simulation's systems rows (columns ``strategy``,
    ``n``, ``coverage``, ``width``; one row per strategy x n, pooled over what was simulated).
    Coverage is judged at every n at which some strategy covers at least ``nominal - slack`` (an n
    at which none does is too few topics for any strategy, not a mark against one): a strategy
    below ``nominal - slack`` at one of those n cannot be the default; of the others, the one with
    the smallest mean width over those n. None when no n or no strategy qualifies."""
    ok = table["coverage"] >= nominal - slack - 1e-12
    valid = table[table["n"].isin(table.loc[ok, "n"].unique())]
    if valid.empty:
        return None
    per = valid.groupby("strategy").agg(low=("coverage", "min"), width=("width", "mean"))
    eligible = per[per["low"] >= nominal - slack - 1e-12]
    if eligible.empty:
        return None
    return str(eligible.sort_values("width", kind="stable").index[0])
