"""Figures of the perturbation study ("When LLM Judges Inflate Scores", section 3), PNG and PDF
(matplotlib, Agg).

* :func:`transition_heatmaps` - Figure 1: one judge's label transition matrices, one heatmap per
  rewrite variant; rows are the judge's original label, columns its label on the variant, each
  row normalised over its parsed re-judgments. A row without any is grey ``n/a``; the row label
  gives its count and the re-judgments that did not parse (missing, never a label).
* :func:`insertion_distributions` - Figure 3: one panel per insertion (SEM, LEX, QRY), one
  100%-stacked bar per judge with the shares of labels 0-3 among its parsed re-judgments of the
  non-relevant passages, ``n`` (and missing answers) above each bar.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analysis.plotting import annotated_heatmap, plt, save
from judgelab.analysis.render import MISSING
from judgelab.data.labels import GRADES

LABEL_COLORS = ["#d9d9d9", "#9ecae1", "#4292c6", "#08519c"]  # label 0 (light) .. 3 (dark)


def transition_heatmaps(
    tidy: pd.DataFrame, variants: Sequence[str], title: str, out_png, out_pdf=None
) -> None:
    """``tidy``: one judge's rows of :func:`judgelab.studies.perturbations.outcomes.transition_table`."""
    fig, axes = plt.subplots(
        1, len(variants), figsize=(3.6 * len(variants) + 1.0, 3.6), squeeze=False, layout="constrained"
    )
    image = None
    for ax, variant in zip(axes[0], variants):
        t = tidy[tidy["variant"] == variant]
        rows_of = t.drop_duplicates("original_label")
        judged = int(rows_of["row_parsed"].sum() + rows_of["row_missing"].sum())
        cov = f" (coverage {rows_of['row_parsed'].sum() / judged:.2f})" if judged else ""
        ax.set_title(variant + cov, fontsize=11 if not cov else 9.5)
        ax.set_xticks(range(len(GRADES)))
        ax.set_xticklabels(GRADES)
        ax.set_xlabel("label on the rewrite")
        ax.set_xlim(-0.5, len(GRADES) - 0.5)
        ax.set_ylim(len(GRADES) - 0.5, -0.5)
        ax.set_aspect("equal")
        if not len(t):
            ax.set_yticks([])
            ax.text(
                0.5,
                0.5,
                "no kept rewrite\nre-judged",
                ha="center",
                va="center",
                fontsize=9,
                color="0.35",
                transform=ax.transAxes,
            )
            continue
        share = (
            t.pivot(index="original_label", columns="new_label", values="share")
            .reindex(index=GRADES, columns=GRADES)
            .to_numpy(dtype=float)
        )
        count = (
            t.pivot(index="original_label", columns="new_label", values="count")
            .reindex(index=GRADES, columns=GRADES)
            .fillna(0)
            .to_numpy(dtype=int)
        )
        rows = t.drop_duplicates("original_label").set_index("original_label").reindex(GRADES)
        texts = [[f"{v:.2f}\n({c})" for v, c in zip(r, n)] for r, n in zip(share, count)]
        # rows without parsed re-judgments stay grey, one n/a across the row
        image = annotated_heatmap(ax, share, texts, fontsize=7, missing=None, background="0.88")
        for i in np.flatnonzero(~np.isfinite(share).any(axis=1)):
            ax.text(1.5, i, MISSING, ha="center", va="center", fontsize=8, color="0.35")
        ax.set_yticks(range(len(GRADES)))
        ax.set_yticklabels(
            [
                f"{o}\nn={int(r.row_parsed)}" + (f"\n{int(r.row_missing)} miss." if r.row_missing else "")
                for o, r in zip(GRADES, rows.fillna(0).itertuples())
            ],
            fontsize=7.5,
        )
    axes[0][0].set_ylabel("original label")
    if image is not None:
        fig.colorbar(image, ax=list(axes[0]), shrink=0.8, label="share of the row")
    fig.suptitle(title, fontsize=11)
    save(fig, out_png, out_pdf)


def insertion_distributions(
    tidy: pd.DataFrame,
    variants: Sequence[str],
    title: str,
    out_png,
    out_pdf=None,
    *,
    names: dict[str, str] | None = None,
) -> None:
    """``tidy``: rows of :func:`.outcomes.distribution_table` (every judge);
    ``names``: the judges' display names by key (default the keys)."""
    judges = list(dict.fromkeys(tidy["judge"])) if len(tidy) else []
    names = names or {}
    fig, axes = plt.subplots(
        1,
        len(variants),
        figsize=(1.2 + max(len(judges), 1) * 0.9 * len(variants) + 1.5, 3.8),
        squeeze=False,
        sharey=True,
    )
    for ax, variant in zip(axes[0], variants):
        t = tidy[tidy["variant"] == variant]
        ax.set_title(variant, fontsize=11)
        ax.set_ylim(0, 1.12)
        ax.spines[["top", "right"]].set_visible(False)
        ax.set_xticks(range(len(judges)))
        ax.set_xticklabels([names.get(j, j) for j in judges], rotation=30, ha="right", fontsize=8)
        for k, judge in enumerate(judges):
            rows = t[t["judge"] == judge]
            n_parsed = int(rows["n_parsed"].iloc[0]) if len(rows) else 0
            n_missing = int(rows["n_missing"].iloc[0]) if len(rows) else 0
            g = rows.set_index("label").reindex(GRADES)
            if not n_parsed:
                note = f"{MISSING}\n{n_missing} miss." if len(rows) else "none\nre-judged"
                ax.text(k, 0.05, note, ha="center", va="bottom", fontsize=7, color="0.35")
                continue
            bottom = 0.0
            for lab in GRADES:
                v = float(g.loc[lab, "share"])
                ax.bar(k, v, 0.7, bottom=bottom, color=LABEL_COLORS[lab], edgecolor="white", lw=0.5)
                bottom += v
            ax.text(
                k,
                1.02,
                f"n={n_parsed}" + (f"\n{n_missing} miss." if n_missing else ""),
                ha="center",
                va="bottom",
                fontsize=7,
            )
        ax.set_xlim(-0.6, max(len(judges), 1) - 0.4)
        if not judges:
            ax.text(
                0.5,
                0.5,
                "no re-judgment",
                ha="center",
                va="center",
                transform=ax.transAxes,
                fontsize=9,
                color="0.35",
            )
    axes[0][0].set_ylabel("share of parsed labels")
    handles = [plt.Rectangle((0, 0), 1, 1, color=LABEL_COLORS[lab]) for lab in GRADES]
    fig.legend(
        handles,
        [f"label {lab}" for lab in GRADES],
        loc="center left",
        bbox_to_anchor=(1.0, 0.5),
        frameon=False,
        fontsize=8,
    )
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    save(fig, out_png, out_pdf)


def attack_bars(
    table: pd.DataFrame, title: str, out_png, out_pdf=None, *, names: dict[str, str] | None = None
) -> None:
    """The attack figure: one panel per judge, one bar pair per attack x position (x template:
    the defended one hatched) - the share judged relevant before (light) and after (dark) - with
    the difference's interval as an error bar on the after bar and ``n`` above. ``table``: the
    ``passages == all`` rows of :func:`.attacks.attack_table`."""
    judges = list(dict.fromkeys(table["judge"])) if len(table) else []
    names = names or {}
    fig, axes = plt.subplots(
        1, max(len(judges), 1), figsize=(1.5 + 4.2 * max(len(judges), 1), 3.8), squeeze=False, sharey=True
    )
    for ax, judge in zip(axes[0], judges or [""]):
        t = table[table["judge"] == judge].reset_index(drop=True)
        ax.set_title(names.get(judge, judge) or "no attack judged", fontsize=11)
        ax.set_ylim(0, 1.15)
        ax.spines[["top", "right"]].set_visible(False)
        labels = []
        for k, r in t.iterrows():
            hatch = "//" if r["template"] == "defended" else None
            labels.append(f"{r['attack']}\n{r['position']}" + ("\n(defended)" if hatch else ""))
            if not r["n_parsed"]:
                ax.text(k, 0.05, f"{MISSING}\n{r['n']} judged", ha="center", fontsize=7, color="0.35")
                continue
            before, after = float(r["relevant_before"]), float(r["relevant_after"])
            ax.bar(k - 0.18, before, 0.34, color=LABEL_COLORS[1], hatch=hatch, edgecolor="white")
            ax.bar(k + 0.18, after, 0.34, color=LABEL_COLORS[3], hatch=hatch, edgecolor="white")
            if np.isfinite(r["ci_low"]) and np.isfinite(r["ci_high"]):
                lo = max(0.0, before + float(r["ci_low"]))
                hi = min(1.0, before + float(r["ci_high"]))
                ax.errorbar(
                    k + 0.18,
                    after,
                    yerr=[[max(after - lo, 0)], [max(hi - after, 0)]],
                    color="0.2",
                    capsize=3,
                    lw=1,
                )
            ax.text(
                k,
                1.03,
                f"n={int(r['n_parsed'])}\np={r['mcnemar_p']:.2g}",
                ha="center",
                va="bottom",
                fontsize=7,
            )
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_xlim(-0.6, max(len(labels), 1) - 0.4)
    axes[0][0].set_ylabel("share judged relevant")
    handles = [plt.Rectangle((0, 0), 1, 1, color=LABEL_COLORS[i]) for i in (1, 3)]
    fig.legend(
        handles, ["before", "after"], loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False, fontsize=8
    )
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    save(fig, out_png, out_pdf)
