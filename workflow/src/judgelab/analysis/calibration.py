"""Calibration of a judge's probabilities, shared by every study whose judges give one (PERAS,
overrating, the ranking study's pool labels): expected calibration error with equal-width and
equal-mass bins, the Brier score and the reliability-diagram data.

* **What is calibrated** (a *signal*, one row of a study's calibration table):

  - ``label_distribution``: the label-token distribution as P(relevant), the mass of the labels at
    or above the relevance threshold (:func:`relevance_threshold`: TREC's grade 2 on the graded
    scale, 1 on the binary one), renormalised over the scale's labels, against the human binary
    relevance (:func:`judgelab.data.labels.binarise`); beside it the expected grade's mean absolute
    error against the human grade (graded scale only);
  - a confidence (PERAS's verbal 0-100 confidence / 100, the overrating study's token confidence)
    as the probability that the label is correct (label = human grade; on the binary scale the
    binarised grade).

* **Missing is missing**: a pair counts when its answer was read (a label) and it has the
  probability; the others are left out and counted (``n_missing`` beside ``n``), never imputed.

* **Bins** (``calibration.bins`` of the config, at least 1): equal width, [0, 1/B], (1/B, 2/B], ...
  (the right edge closed, as :func:`sklearn.calibration.calibration_curve`'s ``uniform``
  strategy), and equal mass, the edges at the B-quantiles of the probabilities (its ``quantile``
  strategy): tied probabilities share a bin, so equal-mass bins may be fewer than B and some
  empty. ECE = sum over non-empty bins of n_b / n x |observed_b - mean probability_b|. The Brier
  score is :func:`sklearn.metrics.brier_score_loss`. Both are NaN with no pair.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from judgelab.data.labels import SCALES, TREC_RELEVANT, binarise
from judgelab.data.tables import write_tsv
from judgelab.params import Settings

log = logging.getLogger("judgelab")

#: The two binnings of the ECE and the reliability diagram.
BINNINGS = ("equal_width", "equal_mass")

#: The signal of the label-token distribution (P(relevant) against the human binary relevance).
LABEL_DISTRIBUTION = "label_distribution"

#: Columns of a calibration table after a study's id columns.
CALIBRATION_COLUMNS = [
    "signal",
    "n_pairs",
    "n",
    "n_missing",
    "bins",
    "mean_probability",
    "observed",
    "brier",
    "ece_equal_width",
    "ece_equal_mass",
    "expected_grade_mae",
]

#: Columns of a reliability table (one row per bin) after a study's id columns.
RELIABILITY_COLUMNS = ["signal", "binning", "bin", "lower", "upper", "n", "mean_probability", "observed"]


@dataclass(frozen=True)
class CalibrationSettings(Settings):
    """The calibration options of every study (the config's top-level ``calibration`` section):
    the number of ECE bins (each binning)."""

    bins: int


def _arrays(prob: ArrayLike, outcome: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(prob, dtype=float)
    y = np.asarray(outcome, dtype=float)
    if p.shape != y.shape or p.ndim != 1:
        raise ValueError(f"probabilities {p.shape} and outcomes {y.shape} differ in shape")
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("probabilities must lie in [0, 1] (leave missing ones out)")
    if np.any((y != 0) & (y != 1)):
        raise ValueError("outcomes must be 0 or 1")
    return p, y


def bin_edges(prob: ArrayLike, bins: int, binning: str) -> np.ndarray:
    """The ``bins`` + 1 edges of a binning of the probabilities ``prob``: equal width over [0, 1],
    or equal mass (the quantiles of ``prob``; [0, 1] repeated with no probability)."""
    if int(bins) < 1:
        raise ValueError(f"at least 1 bin needed, got {bins}")
    if binning == "equal_width":
        return np.linspace(0.0, 1.0, int(bins) + 1)
    if binning == "equal_mass":
        p = np.asarray(prob, dtype=float)
        if not len(p):
            return np.linspace(0.0, 1.0, int(bins) + 1)
        return np.percentile(p, np.linspace(0.0, 100.0, int(bins) + 1))
    raise ValueError(f"unknown binning {binning!r} (one of {list(BINNINGS)})")


def bin_index(prob: ArrayLike, edges: np.ndarray) -> np.ndarray:
    """The bin of each probability: bin b holds (edges[b], edges[b + 1]], the first one also its
    left edge (the convention of :func:`sklearn.calibration.calibration_curve`)."""
    return np.searchsorted(np.asarray(edges)[1:-1], np.asarray(prob, dtype=float))


def reliability(prob: ArrayLike, outcome: ArrayLike, bins: int, binning: str) -> pd.DataFrame:
    """The reliability-diagram data: one row per bin (``bin``, its ``lower`` and ``upper`` edge,
    ``n`` pairs, their ``mean_probability`` and ``observed`` share of positive outcomes; NaN in an
    empty bin)."""
    p, y = _arrays(prob, outcome)
    edges = bin_edges(p, bins, binning)
    idx = bin_index(p, edges)
    n = np.bincount(idx, minlength=int(bins)).astype(int)
    sum_p = np.bincount(idx, weights=p, minlength=int(bins))
    sum_y = np.bincount(idx, weights=y, minlength=int(bins))
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.where(n > 0, sum_p / np.where(n > 0, n, 1), np.nan)
        observed = np.where(n > 0, sum_y / np.where(n > 0, n, 1), np.nan)
    return pd.DataFrame(
        {
            "bin": np.arange(int(bins)),
            "lower": edges[:-1],
            "upper": edges[1:],
            "n": n,
            "mean_probability": mean_p,
            "observed": observed,
        }
    )


def ece(prob: ArrayLike, outcome: ArrayLike, bins: int, binning: str = "equal_width") -> float:
    """Expected calibration error: the pair-weighted mean over the non-empty bins of
    |observed share - mean probability|; NaN with no pair."""
    table = reliability(prob, outcome, bins, binning)
    full = table[table["n"] > 0]
    total = int(full["n"].sum())
    if not total:
        return math.nan
    gap = (full["observed"] - full["mean_probability"]).abs()
    return float((full["n"] * gap).sum() / total)


def brier(prob: ArrayLike, outcome: ArrayLike) -> float:
    """The Brier score, mean (probability - outcome)^2 (:func:`sklearn.metrics.brier_score_loss`);
    NaN with no pair."""
    from sklearn.metrics import brier_score_loss

    p, y = _arrays(prob, outcome)
    if not len(p):
        return math.nan
    return float(brier_score_loss(y.astype(int), p, pos_label=1))


def relevance_threshold(labels: Sequence[str]) -> int:
    """The lowest relevant label of a scale: 1 on the binary scale, :data:`TREC_RELEVANT` (2) on
    the graded one."""
    return 1 if tuple(str(x) for x in labels) == SCALES["binary"] else TREC_RELEVANT


def _distribution(table: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """The label distribution (columns ``p<label>``) as floats (NaN where missing), renormalised
    over ``labels``."""
    cols = [f"p{x}" for x in labels]
    dist = table[cols].astype("Float64").astype(float)
    total = dist.sum(axis=1, min_count=len(cols))
    return dist.div(total.where(total > 0), axis=0)


def relevance_probability(table: pd.DataFrame, labels: Sequence[str]) -> pd.Series:
    """P(relevant) of each row: the mass of the labels at or above :func:`relevance_threshold` in
    the distribution ``p<label>`` renormalised over ``labels`` (NaN where it is missing)."""
    threshold = relevance_threshold(labels)
    dist = _distribution(table, labels)
    relevant = [f"p{x}" for x in labels if int(x) >= threshold]
    return dist[relevant].sum(axis=1, min_count=len(relevant)).clip(0.0, 1.0)


def expected_grade(table: pd.DataFrame, labels: Sequence[str]) -> pd.Series:
    """The expected label of each row, sum of label x probability over ``labels`` (NaN where the
    distribution is missing)."""
    dist = _distribution(table, labels)
    weights = np.array([int(x) for x in labels], dtype=float)
    return pd.Series(dist.to_numpy() @ weights, index=table.index)


def assess(
    signal: str, prob: pd.Series, outcome: pd.Series, bins: int, **extra: float
) -> tuple[dict, pd.DataFrame]:
    """One row of a calibration table (:data:`CALIBRATION_COLUMNS`, ``extra`` columns added) and
    its reliability rows (:data:`RELIABILITY_COLUMNS`, both binnings): ``prob`` and ``outcome``
    one value per pair (NaN: missing, left out and counted in ``n_missing``)."""
    p = pd.Series(prob, dtype="Float64").astype(float).to_numpy()
    y = pd.Series(outcome, dtype="Float64").astype(float).to_numpy()
    keep = np.isfinite(p) & np.isfinite(y)
    p, y = p[keep], y[keep]
    row = {
        "signal": signal,
        "n_pairs": len(keep),
        "n": int(keep.sum()),
        "n_missing": int((~keep).sum()),
        "bins": int(bins),
        "mean_probability": float(p.mean()) if len(p) else math.nan,
        "observed": float(y.mean()) if len(y) else math.nan,
        "brier": brier(p, y),
        "ece_equal_width": ece(p, y, bins, "equal_width"),
        "ece_equal_mass": ece(p, y, bins, "equal_mass"),
        "expected_grade_mae": math.nan,
        **extra,
    }
    curves = [reliability(p, y, bins, b).assign(signal=signal, binning=b) for b in BINNINGS]
    return row, pd.concat(curves, ignore_index=True)[RELIABILITY_COLUMNS]


def judge_calibration(
    pairs: pd.DataFrame,
    labels: Sequence[str],
    bins: int,
    confidence: str | None = None,
) -> tuple[list[dict], pd.DataFrame]:
    """The calibration rows and reliability rows of one judge (a judge x template x persona).

    ``pairs``: one row per pair with a human grade: ``grade`` (0-3), ``label`` (the judge's, on
    the scale of ``labels``; nullable), the distribution ``p<label>`` per label (nullable), and,
    when ``confidence`` names a signal, a ``confidence`` column in [0, 1] (nullable). Rows:
    :data:`LABEL_DISTRIBUTION` (P(relevant) against the binarised grade, with the expected grade's
    MAE on the graded scale) and ``confidence`` (the confidence against label = grade, the
    binarised grade on the binary scale). A pair whose label is missing is missing in both."""
    labels = tuple(str(x) for x in labels)
    binary = labels == SCALES["binary"]
    grade = pairs["grade"].astype("Int64")
    read = pairs["label"].notna().to_numpy()
    truth = pd.Series(binarise(grade.fillna(0)), index=pairs.index).where(grade.notna())
    p_rel = relevance_probability(pairs, labels).where(read)
    extra = {}
    if not binary:
        err = (expected_grade(pairs, labels) - grade.astype(float)).abs().where(read)
        extra["expected_grade_mae"] = float(err.mean()) if err.notna().any() else math.nan
    row, curve = assess(LABEL_DISTRIBUTION, p_rel, truth, bins, **extra)
    rows, curves = [row], [curve]
    if confidence is not None:
        human = truth if binary else grade.astype(float)
        correct = (pairs["label"].astype(float) == human).astype(float).where(read & human.notna())
        conf = pd.Series(pairs["confidence"], dtype="Float64").astype(float).where(read)
        row, curve = assess(confidence, conf, correct, bins)
        rows.append(row)
        curves.append(curve)
    return rows, pd.concat(curves, ignore_index=True)


def calibration_tables(
    judges: Iterable[tuple[Mapping[str, str], pd.DataFrame, Sequence[str], str | None]], bins: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A study's calibration table and reliability table: ``judges`` gives, per judge, its id
    columns (e.g. dataset, model, template, persona), its pairs, labels and confidence signal
    (:func:`judge_calibration`); each row starts with its ids."""
    rows: list[dict] = []
    curves: list[pd.DataFrame] = []
    id_cols: list[str] = []
    for ids, pairs, labels, confidence in judges:
        id_cols = id_cols or list(ids)
        got, curve = judge_calibration(pairs, labels, bins, confidence)
        rows += [{**ids, **r} for r in got]
        curves.append(curve.assign(**ids))
    table = pd.DataFrame(rows, columns=id_cols + CALIBRATION_COLUMNS)
    bins_table = (
        pd.concat(curves, ignore_index=True)[id_cols + RELIABILITY_COLUMNS]
        if curves
        else pd.DataFrame(columns=RELIABILITY_COLUMNS)
    )
    return table, bins_table


def write_calibration(
    judges: Iterable[tuple[Mapping[str, str], pd.DataFrame, Sequence[str], str | None]],
    bins: int,
    outputs: Mapping[str, str],
    panels: Sequence[str],
    line: str,
    title: str,
) -> pd.DataFrame:
    """A study's calibration job's outputs from its judges (:func:`calibration_tables`):
    ``outputs["calibration"]`` and ``outputs["reliability"]`` (TSV), the reliability diagrams
    (``outputs["png"]``, ``outputs["pdf"]``; :func:`reliability_figure` with ``panels``, ``line``
    and ``title``), and one log line per row (its ids, signal, pairs, ECE, Brier, MAE)."""
    table, bins_table = calibration_tables(judges, bins)
    write_tsv(table, outputs["calibration"])
    write_tsv(bins_table, outputs["reliability"])
    reliability_figure(bins_table, panels, line, title, outputs["png"], outputs["pdf"])
    ids = [c for c in table.columns if c not in CALIBRATION_COLUMNS]
    for r in table.to_dict("records"):
        log.info(
            "%s, %s: %d of %d pairs, ECE %.3f (equal width) %.3f (equal mass), Brier %.3f, "
            "expected-grade MAE %.3f",
            " / ".join(str(r[c]) for c in ids),
            r["signal"],
            r["n"],
            r["n_pairs"],
            r["ece_equal_width"],
            r["ece_equal_mass"],
            r["brier"],
            r["expected_grade_mae"],
        )
    return table


def reliability_figure(
    bins_table: pd.DataFrame,
    panels: Sequence[str],
    line: str,
    title: str,
    out_png,
    out_pdf=None,
    binning: str = "equal_width",
) -> None:
    """Reliability diagrams of a study (PNG and PDF): one row of panels per value of the id
    columns ``panels`` (e.g. dataset, model, template), one panel per signal, one line per value of
    ``line`` (e.g. persona): each non-empty bin of ``binning`` at (mean probability, observed
    share), its marker area growing with its pairs; the diagonal is perfect calibration. A panel
    without a pair says ``n/a``; a line keeps its colour in every panel."""
    from judgelab.analysis.plotting import plt, save
    from judgelab.analysis.render import MISSING

    data = bins_table[bins_table["binning"] == binning]
    signals = list(dict.fromkeys(data["signal"])) or [LABEL_DISTRIBUTION]
    keys = (
        list(dict.fromkeys(map(tuple, data[list(panels)].astype(str).to_numpy())))
        if len(data)
        else [("",) * len(panels)]
    )
    lines = list(dict.fromkeys(data[line].astype(str))) if len(data) else []
    palette = plt.get_cmap("tab10" if len(lines) <= 10 else "tab20")
    colours = {v: palette(i % palette.N) for i, v in enumerate(lines)}
    fig, axes = plt.subplots(
        len(keys), len(signals), figsize=(3.4 * len(signals), 3.2 * len(keys)), squeeze=False
    )
    for i, key in enumerate(keys):
        at = data[(data[list(panels)].astype(str) == list(key)).all(axis=1)] if len(data) else data
        for j, signal in enumerate(signals):
            ax = axes[i][j]
            ax.plot([0, 1], [0, 1], color="0.6", lw=0.8, ls="--")
            cell = at[(at["signal"] == signal) & (at["n"] > 0)]
            for value, curve in cell.groupby(line, sort=False) if len(cell) else []:
                colour = colours[str(value)]
                ax.plot(
                    curve["mean_probability"],
                    curve["observed"],
                    marker="o",
                    ms=3,
                    lw=1,
                    color=colour,
                    label=f"{value} (n={int(curve['n'].sum())})",
                )
                ax.scatter(
                    curve["mean_probability"],
                    curve["observed"],
                    s=8 + 4 * curve["n"],
                    alpha=0.3,
                    color=colour,
                )
            if cell.empty:
                ax.text(0.5, 0.5, MISSING, ha="center", va="center", fontsize=10, color="0.3")
            else:
                ax.legend(fontsize=6, loc="best")
            ax.set_xlim(0, 1)
            ax.set_ylim(-0.02, 1.02)
            ax.set_xlabel("mean probability in the bin", fontsize=8)
            ax.set_ylabel("observed share", fontsize=8)
            ax.set_title(f"{' / '.join(key)}\n{signal.replace('_', ' ')}", fontsize=8)
    fig.suptitle(f"{title} ({binning.replace('_', '-')} bins)", fontsize=10)
    fig.tight_layout()
    save(fig, out_png, out_pdf)
