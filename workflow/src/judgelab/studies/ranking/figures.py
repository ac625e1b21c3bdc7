"""Figures of the ranking study, per dataset x judge x measure, each written as PNG and PDF
(:mod:`judgelab.analysis.plotting`).

* :func:`score_scatter` - one point per system: its mean score under the reference qrels (x) and
  under the judge's labels (y), the diagonal y = x, Kendall's tau (with its topic-bootstrap
  interval) and Spearman's rho in the title; undefined values are written ``n/a``.
* :func:`rank_rank` - the same systems by rank: rank under the reference (x) against rank under
  the judge (y), 1 = best, ties broken by run name; points on the diagonal are ranked alike.
* :func:`circularity_scatter` - per dataset x judge x measure, the score scatter with the run the
  judge built (:mod:`judgelab.studies.ranking.circularity`) among the systems, marked, and its
  base run ringed.

Run names label the points when there are at most :data:`MAX_LABELS` systems.
"""

from __future__ import annotations

import pandas as pd

from judgelab.analysis.plotting import plt, save
from judgelab.analysis.render import fmt
from judgelab.studies.ranking.tables import ranks

#: Systems up to which every point carries its run name.
MAX_LABELS = 20


def _title(dataset: str, judge: str, reference: str, measure: str, row: pd.Series) -> str:
    tau = fmt(row.get("kendall_tau"))
    low, high = fmt(row.get("kendall_tau_low")), fmt(row.get("kendall_tau_high"))
    method = row.get("kendall_tau_ci")
    interval = f"[{low}, {high}]" + (f" {str(method).split(' ')[0]}" if isinstance(method, str) else "")
    return (
        f"{dataset}: {judge} vs {reference}, {measure}\n"
        f"Kendall's tau {tau} {interval}, Spearman's rho {fmt(row.get('spearman'))}, "
        f"{int(row['n_systems'])} systems, {int(row['n_topics'])} topics"
    )


def _label(ax, xs, ys, names) -> None:
    if len(names) <= MAX_LABELS:
        for x, y, n in zip(xs, ys, names):
            ax.annotate(str(n), (x, y), xytext=(3, 3), textcoords="offset points", fontsize=7)


def score_scatter(
    systems: pd.DataFrame, reference: str, judge: str, row: pd.Series, title: tuple, out_png, out_pdf=None
) -> None:
    """``systems``: index runs, columns ``reference`` and ``judge`` (mean scores); ``row``: the
    correlations row (kendall_tau, its interval, spearman, n_systems, n_topics); ``title``:
    (dataset, measure)."""
    dataset, measure = title
    x, y = systems[reference].to_numpy(float), systems[judge].to_numpy(float)
    fig, ax = plt.subplots(figsize=(5.2, 4.8))
    ax.scatter(x, y, s=22, color="tab:blue", zorder=3)
    _label(ax, x, y, systems.index)
    finite = [v for v in list(x) + list(y) if v == v]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    pad = 0.05 * (hi - lo or 1.0)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="0.6", lw=0.8, ls="--", zorder=1)
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_xlabel(f"{measure} under {reference}")
    ax.set_ylabel(f"{measure} under {judge}")
    ax.set_title(_title(dataset, judge, reference, measure, row), fontsize=8)
    ax.grid(alpha=0.3)
    save(fig, out_png, out_pdf)


def rank_rank(
    systems: pd.DataFrame, reference: str, judge: str, row: pd.Series, title: tuple, out_png, out_pdf=None
) -> None:
    """The systems' ranks under the reference (x) and under the judge (y); arguments as
    :func:`score_scatter`."""
    dataset, measure = title
    rx, ry = ranks(systems[reference]), ranks(systems[judge])
    n = len(systems)
    fig, ax = plt.subplots(figsize=(5.2, 4.8))
    ax.plot([0.5, n + 0.5], [0.5, n + 0.5], color="0.6", lw=0.8, ls="--", zorder=1)
    ax.scatter(rx.to_numpy(), ry.to_numpy(), s=22, color="tab:orange", zorder=3)
    _label(ax, rx.to_numpy(), ry.to_numpy(), systems.index)
    ax.set_xlim(0.5, n + 0.5)
    ax.set_ylim(n + 0.5, 0.5)  # rank 1 at the top
    ax.set_xlabel(f"rank under {reference} (1 = best)")
    ax.set_ylabel(f"rank under {judge}")
    ax.set_title(_title(dataset, judge, reference, measure, row), fontsize=8)
    ax.grid(alpha=0.3)
    save(fig, out_png, out_pdf)


def circularity_scatter(
    systems: pd.DataFrame, reference: str, judge: str, row: pd.Series, title: tuple, out_png, out_pdf=None
) -> None:
    """Every system's mean score under the reference (x) and under the judge (y), the judge-built
    run (``row["run"]``, a row of ``circularity.tsv``) marked with a star and its base run
    (``row["base"]``) with a ring, the diagonal y = x; its ranks and the rank gap in the title.
    ``systems``: index runs (the dataset's and the judge-built one), columns ``reference`` and
    ``judge``; ``title``: (dataset, measure)."""
    dataset, measure = title
    run, base = str(row["run"]), str(row["base"])
    others = systems.drop(index=[run])
    fig, ax = plt.subplots(figsize=(5.2, 4.8))
    ax.scatter(others[reference], others[judge], s=22, color="tab:blue", zorder=3, label="the dataset's runs")
    _label(ax, others[reference], others[judge], others.index)
    ax.scatter(
        [systems.loc[base, reference]],
        [systems.loc[base, judge]],
        s=90,
        facecolors="none",
        edgecolors="black",
        zorder=4,
        label=f"base run ({base})",
    )
    ax.scatter(
        [systems.loc[run, reference]],
        [systems.loc[run, judge]],
        s=140,
        marker="*",
        color="tab:red",
        zorder=5,
        label=f"built by {judge}",
    )
    values = [v for v in list(systems[reference]) + list(systems[judge]) if v == v]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    pad = 0.05 * (hi - lo or 1.0)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="0.6", lw=0.8, ls="--", zorder=1)
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_xlabel(f"{measure} under {reference}")
    ax.set_ylabel(f"{measure} under {judge}")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(
        f"{dataset}: the run built by {judge}, {measure}\n"
        f"rank {int(row['reference_rank'])} under {reference}, {int(row['judge_rank'])} under {judge} "
        f"(gap {int(row['rank_gap']):+d}) of {int(row['n_systems'])}; "
        f"tau {fmt(row.get('kendall_tau'))} with it, {fmt(row.get('kendall_tau_without'))} without",
        fontsize=8,
    )
    ax.grid(alpha=0.3)
    save(fig, out_png, out_pdf)
