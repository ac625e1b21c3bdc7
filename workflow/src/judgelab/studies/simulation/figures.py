"""Figures of the evaluator simulation (PersonaJudge), PNG and PDF: accuracy by shot count per
demonstration type (with the Base Judge and the per-evaluator majority as reference lines), the
personalization advantage over the cross-evaluator control by shot count (Figure 12),
per-evaluator accuracy against neutral rate and deviation rate (section 5.1.3), the
row-normalised confusion matrices (Table 15), each evaluator's label distribution (Figure 9),
and the cross-task comparison of the evaluators who judged two tasks (Figure 3).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analysis.plotting import annotated_heatmap, plt, save
from judgelab.analysis.render import fmt
from judgelab.studies.simulation.data import LABELS
from judgelab.studies.simulation.metrics import BASE_JUDGE, PJ


def fig_shots(acc: pd.DataFrame, title: str, out_png, out_pdf=None, *, metric: str) -> None:
    """Accuracy by shot count, one line per demonstration type, one panel per model; the Base
    Judge (dashed) and the per-evaluator majority (dotted) as reference lines; bars = SD across
    evaluators."""
    pj = acc[acc["method"] == PJ]
    models = sorted(pj["model"].unique()) or ["(none)"]
    fig, axes = plt.subplots(1, len(models), figsize=(4.2 * len(models), 3.4), squeeze=False, sharey=True)
    maj = acc[acc["method"] == "evaluator_majority"][metric].mean()
    for ax, model in zip(axes[0], models):
        g = pj[pj["model"] == model]
        for dt, gd in g.groupby("demo_type", sort=True):
            per = gd.groupby(["shots", "evaluator"])[metric].mean().groupby("shots")
            mean, sd = per.mean(), per.std(ddof=1)
            ax.errorbar(
                mean.index.astype(int),
                mean.to_numpy(),
                yerr=sd.fillna(0).to_numpy(),
                marker="o",
                capsize=3,
                label=dt,
            )
        base = acc[(acc["method"] == BASE_JUDGE) & (acc["model"] == model)][metric].mean()
        if np.isfinite(base):
            ax.axhline(base, ls="--", color="grey", label="Base Judge")
        if np.isfinite(maj):
            ax.axhline(maj, ls=":", color="black", label="per-evaluator majority")
        ax.axhline(1 / 3, ls="-", color="lightgrey", lw=0.8, label="chance")
        shots = sorted(g["shots"].unique())
        if shots:
            ax.set_xscale("log", base=2)
            ax.set_xticks([int(s) for s in shots], [str(int(s)) for s in shots])
        ax.set_title(model)
        ax.set_xlabel("demonstrations (shots)")
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("three-class accuracy")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.suptitle(title, y=1.04)
    save(fig, out_png, out_pdf)


def fig_control(control: pd.DataFrame, title: str, out_png, out_pdf=None) -> None:
    """Figure 12: PersonaJudge minus the cross-evaluator control by shot count (mean over
    evaluators of their mean over cells; bars = SD across evaluators)."""
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    if len(control):
        d = control.assign(adv=control["own_accuracy"] - control["control_accuracy"])
        per = d.groupby(["shots", "evaluator"])["adv"].mean().groupby("shots")
        mean, sd = per.mean(), per.std(ddof=1)
        pos = np.arange(len(mean))
        ax.bar(pos, mean.to_numpy(), yerr=sd.fillna(0).to_numpy(), capsize=3, color="#4c72b0")
        ax.set_xticks(pos, [str(int(s)) for s in mean.index])
    else:
        ax.text(0.5, 0.5, "no matched items", ha="center", va="center", transform=ax.transAxes)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xlabel("demonstrations (shots)")
    ax.set_ylabel("accuracy: PersonaJudge - control")
    ax.set_title(title, fontsize=9)
    save(fig, out_png, out_pdf)


def fig_evaluators(accuracy: pd.Series, traits: pd.DataFrame, title: str, out_png, out_pdf=None) -> None:
    """Per-evaluator PersonaJudge accuracy against neutral rate and deviation rate."""
    t = traits.set_index("evaluator").reindex(accuracy.index)
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4), sharey=True)
    for ax, col, label in (
        (axes[0], "neutral_rate", "neutral rate"),
        (axes[1], "deviation_rate", "deviation rate (vs other annotators)"),
    ):
        ax.scatter(t[col], accuracy.to_numpy(), color="#dd8452")
        for ev, x, y in zip(accuracy.index, t[col], accuracy.to_numpy()):
            ax.annotate(str(ev), (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.set_xlabel(label)
    axes[0].set_ylabel("PersonaJudge accuracy (mean over cells)")
    fig.suptitle(title)
    save(fig, out_png, out_pdf)


def fig_confusion(confusion: pd.DataFrame, groups: Sequence[str], title: str, out_png, out_pdf=None) -> None:
    """Row-normalised confusion matrices (rows gold, columns prediction) of the given groups
    (values of the ``group`` column)."""
    groups = list(groups) or ["(none)"]
    fig, axes = plt.subplots(1, len(groups), figsize=(3.3 * len(groups), 3.2), squeeze=False)
    for ax, grp in zip(axes[0], groups):
        g = confusion[confusion["group"] == grp]
        m = np.full((3, 3), np.nan)
        for _, r in g.iterrows():
            m[LABELS.index(r["gold"]), LABELS.index(r["pred"])] = r["row_share"]
        annotated_heatmap(ax, m, [[fmt(v, 2) for v in row] for row in m])
        ax.set_xticks(range(3), LABELS)
        ax.set_yticks(range(3), LABELS)
        ax.set_xlabel("predicted")
        ax.set_ylabel("gold")
        ax.set_title(grp, fontsize=8)
    fig.suptitle(title)
    save(fig, out_png, out_pdf)


LABEL_COLOURS = {"A": "#4c72b0", "N": "#bbbbbb", "B": "#dd8452"}
LABEL_NAMES = {"A": "Prefer A", "N": "Neutral", "B": "Prefer B"}


def fig_label_distribution(traits: pd.DataFrame, title: str, out_png, out_pdf=None) -> None:
    """Figure 9: each evaluator's preference distribution over Prefer A, Neutral and Prefer B
    (stacked shares of all its judgments), evaluators ordered by their neutral rate."""
    t = traits.sort_values(["rate_N", "evaluator"]).reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(6, 0.35 * max(len(t), 3) + 1.2))
    left = np.zeros(len(t))
    for lab in LABELS:
        vals = t[f"rate_{lab}"].to_numpy(dtype=float)
        ax.barh(t["evaluator"], vals, left=left, color=LABEL_COLOURS[lab], label=LABEL_NAMES[lab])
        for y, (x0, v) in enumerate(zip(left, vals)):
            if v >= 0.06:
                ax.text(x0 + v / 2, y, fmt(v, 2), ha="center", va="center", fontsize=7)
        left += vals
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of the evaluator's judgments")
    ax.legend(fontsize=7, ncol=3, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    ax.set_title(title, fontsize=9, pad=22)
    save(fig, out_png, out_pdf)


def fig_cross_task(points: pd.DataFrame, corr: pd.DataFrame, title: str, out_png, out_pdf=None) -> None:
    """Figure 3: for the evaluators who judged two tasks, their neutral rate (left) and their
    PersonaJudge accuracy (right) in one task against the other; r (and p from 4 evaluators) in
    the panel titles."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.6))
    if not len(points):
        for ax in axes:
            ax.text(
                0.5, 0.5, "no evaluator judged two tasks", ha="center", va="center", transform=ax.transAxes
            )
            ax.set_axis_off()
    else:
        first = points.iloc[0]
        pair = points[(points["set_x"] == first["set_x"]) & (points["set_y"] == first["set_y"])]
        for ax, what, label in ((axes[0], "neutral_rate", "neutral rate"), (axes[1], "accuracy", "accuracy")):
            x, y = pair[f"{what}_x"].to_numpy(dtype=float), pair[f"{what}_y"].to_numpy(dtype=float)
            ax.scatter(x, y, color="#4c72b0")
            for ev, a, b in zip(pair["evaluator"], x, y):
                ax.annotate(str(ev), (a, b), fontsize=7, xytext=(3, 3), textcoords="offset points")
            lims = [0, 1]
            ax.plot(lims, lims, ls=":", color="grey", lw=0.8)
            ax.set_xlim(lims)
            ax.set_ylim(lims)
            ax.set_xlabel(f"{label}: {first['task_x']} ({first['set_x']})")
            ax.set_ylabel(f"{label}: {first['task_y']} ({first['set_y']})")
            c = corr[
                (corr["set_x"] == first["set_x"])
                & (corr["set_y"] == first["set_y"])
                & (corr["measure"] == what)
            ]
            if len(c):
                r = c.iloc[0]
                p = "" if not np.isfinite(r["p"]) else f", p = {fmt(r['p'])}"
                ax.set_title(f"r = {fmt(r['r'])}{p} (n = {int(r['n'])})", fontsize=8)
    fig.suptitle(title)
    save(fig, out_png, out_pdf)
