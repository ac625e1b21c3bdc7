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
* :func:`bland_altman_figure` - per dataset x judge, the mean-difference (Bland-Altman) plot of
  every measure (columns) at the system and the response level (rows): the pair's mean (x)
  against judge - reference (y), the bias, the 95% limits of agreement and the proportional-bias
  line (over the observed means); x on the measure's own range where it is known (:mod:`.values`).

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


def cost_scatter(board: pd.DataFrame, out_png, out_pdf=None) -> None:
    """Kendall's tau (y) against dollars per 1,000 judgments (x), one point per judge x template
    x persona (the leaderboard's rows), one panel per dataset x measure; an imported judge (no
    call) is an ``x`` at 0, a local model a hollow circle at 0 with its model seconds per 1,000
    judgments in the label. ``board``: :func:`judgelab.studies.ranking.tables.leaderboard`'s rows."""
    panels = list(dict.fromkeys(zip(board["dataset"], board["measure"]))) or [("", "")]
    fig, axes = plt.subplots(1, len(panels), figsize=(1.5 + 4.5 * len(panels), 4.0), squeeze=False)
    for ax, (dataset, measure) in zip(axes[0], panels):
        rows = board[(board["dataset"] == dataset) & (board["measure"] == measure)]
        ax.set_title(f"{dataset}, {measure}" if dataset else "no judge", fontsize=10)
        ax.set_xlabel("$ per 1,000 judgments")
        ax.set_ylabel("Kendall's τ (vs reference)")
        ax.spines[["top", "right"]].set_visible(False)
        for _, r in rows.iterrows():
            x = float(r["usd_per_1k"]) if pd.notna(r["usd_per_1k"]) else 0.0
            y = float(r["tau"]) if pd.notna(r["tau"]) else float("nan")
            source = str(r["cost_source"])
            label = str(r["judge"])
            if r.get("judge_template"):
                label += f" ({r['judge_template']}, {r['judge_persona']})"
            if source.startswith("imported"):
                ax.scatter([x], [y], marker="x", color="0.3")
                label += ", imported"
            elif x == 0 and pd.notna(r["model_s"]) and r["calls"]:
                ax.scatter([x], [y], facecolors="none", edgecolors="C0")
                label += f", {1000 * float(r['model_s']) / float(r['calls']):.0f} model s / 1k"
            else:
                ax.scatter([x], [y], color="C0")
            ax.annotate(
                label if pd.notna(y) else f"{label} (τ n/a)",
                (x, 0 if pd.isna(y) else y),
                fontsize=7,
                xytext=(4, 3),
                textcoords="offset points",
            )
        ax.set_ylim(min(0.0, float(rows["tau"].min()) if rows["tau"].notna().any() else 0.0) - 0.05, 1.05)
        ax.set_xlim(
            left=-0.02
            * max(1e-9, float(rows["usd_per_1k"].max() or 0) if rows["usd_per_1k"].notna().any() else 1)
        )
    fig.suptitle("Ranking agreement against the cost of the labels", fontsize=11)
    fig.tight_layout()
    save(fig, out_png, out_pdf)


def bland_altman_figure(
    pairs: dict[str, dict[str, pd.DataFrame]],
    rows: pd.DataFrame,
    names: tuple[str, str, str],
    out_png,
    out_pdf=None,
) -> None:
    """``pairs``: measure -> level -> the value pairs (columns ``reference``, ``judge``:
    :func:`judgelab.studies.ranking.values.paired_values`); ``rows``: the comparison's rows of
    ``bland_altman.tsv``; ``names``: (dataset, judge, reference)."""
    import numpy as np

    dataset, judge, reference = names
    measures = list(pairs)
    levels = ("system", "response")
    fig, axes = plt.subplots(
        len(levels), len(measures), figsize=(4.6 * len(measures), 7.6), squeeze=False, layout="constrained"
    )
    for c, measure in enumerate(measures):
        for r, level in enumerate(levels):
            ax = axes[r][c]
            p = pairs[measure][level]
            sel = rows[(rows["measure"] == measure) & (rows["level"] == level)]
            row = sel.iloc[0] if len(sel) else None
            x = (p["judge"].to_numpy(float) + p["reference"].to_numpy(float)) / 2.0
            y = p["judge"].to_numpy(float) - p["reference"].to_numpy(float)
            small = level == "response"
            ax.scatter(x, y, s=6 if small else 20, alpha=0.35 if small else 0.9, color="tab:blue", zorder=3)
            known = row is not None and bool(row["range_known"])
            if row is not None and known:
                low, high = float(row["range_low"]), float(row["range_high"])
                span = high - low
                ax.set_xlim(low - 0.02 * span, high + 0.02 * span)
            seen = x[np.isfinite(x)]
            xs = np.array([seen.min(), seen.max()]) if seen.size else np.array(ax.get_xlim())
            ax.axhline(0.0, color="0.6", lw=0.8)
            note = "range unknown: axes follow the data"
            if row is not None and row["n"] >= 2:
                ax.axhline(row["bias"], color="tab:red", lw=1.2)
                for bound in ("loa_low", "loa_high"):
                    ax.axhline(row[bound], color="tab:red", lw=0.9, ls="--")
                if row["slope"] == row["slope"]:
                    ax.plot(xs, row["intercept"] + row["slope"] * xs, color="tab:green", lw=0.9, ls=":")
                note = (
                    f"bias {fmt(row['bias'])}, LoA [{fmt(row['loa_low'])}, {fmt(row['loa_high'])}], "
                    f"slope {fmt(row['slope'])}, n {int(row['n'])}"
                    + ("" if known else "\nrange unknown: axes follow the data")
                )
            ax.set_title(f"{measure}, {level} level\n{note}", fontsize=8)
            ax.set_xlabel(f"mean of {judge} and {reference}")
            ax.set_ylabel(f"{judge} - {reference}")
            ax.grid(alpha=0.3)
    fig.suptitle(f"{dataset}: {judge} vs {reference} (Bland-Altman)", fontsize=10)
    save(fig, out_png, out_pdf)
