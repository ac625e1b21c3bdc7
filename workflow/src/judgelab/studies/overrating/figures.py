"""Figures of the overrating study (When LLM Judges Inflate Scores, section 2), each written as PNG and PDF
(matplotlib, Agg backend). Undefined values (NaN) are drawn as
``n/a``, never as 0.

* :func:`transition_heatmap` - the human -> LLM label transition matrix of one pointwise run:
  rows human grade 0-3, columns the LLM labels of the scale, colour = share of the row's parsed
  pairs, each cell annotated with the share and the count; a grade without parsed pairs is a grey
  ``n/a`` row; missing answers per grade are counted beside the row label.
* :func:`pairwise_rates` - accuracy, accuracy without ties, tie rate and wrong-wins rate (%) by
  setting (B-A, A-U, B-U, overall) of one dataset x model.
* :func:`confidence_by_outcome` - mean token confidence of TP / FP / TN / FN (binarised) per
  scale of one dataset x model, with the number of pairs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judgelab.analysis.plotting import annotated_heatmap, plt, save
from judgelab.analysis.render import MISSING
from judgelab.data.labels import GRADES
from judgelab.studies.overrating.pointwise import OUTCOMES

RATES = [
    ("accuracy_pct", "Acc."),
    ("accuracy_no_ties_pct", "Acc. (no ties)"),
    ("tie_rate_pct", "Tie rate"),
    ("wrong_win_pct", "Wrong wins"),
]


def transition_heatmap(tidy: pd.DataFrame, title: str, out_png, out_pdf=None) -> None:
    """``tidy``: :func:`judgelab.studies.overrating.pointwise.transition_matrix` (human, llm, n, share, n_missing)."""
    labels = sorted(tidy["llm"].unique())
    share = tidy.pivot(index="human", columns="llm", values="share").reindex(
        index=list(GRADES), columns=labels
    )
    count = tidy.pivot(index="human", columns="llm", values="n").reindex(index=list(GRADES), columns=labels)
    missing = tidy.groupby("human")["n_missing"].first().reindex(list(GRADES)).fillna(0).astype(int)
    vals = share.to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(1.3 * len(labels) + 2.6, 3.9))
    texts = [
        [f"{v:.2f}\n(n={int(n)})" if np.isfinite(v) else "" for v, n in zip(row, counts)]
        for row, counts in zip(vals, count.to_numpy(dtype=float))
    ]
    im = annotated_heatmap(ax, vals, texts, aspect="auto")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([str(x) for x in labels])
    ax.set_yticks(range(len(GRADES)))
    ax.set_yticklabels([f"{g}" + (f"  ({missing[g]} missing)" if missing[g] else "") for g in GRADES])
    ax.set_xlabel("LLM label")
    ax.set_ylabel("human grade")
    fig.colorbar(im, ax=ax, label="share of the grade's parsed pairs", shrink=0.85)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    save(fig, out_png, out_pdf)


def _bar_labels(ax, xs, values, counts=None, fmt="{:.1f}", top=100.0) -> None:
    for k, (x, v) in enumerate(zip(xs, values)):
        if not np.isfinite(v):
            ax.text(x, top * 0.02, MISSING, ha="center", va="bottom", fontsize=7, color="0.3", rotation=90)
            continue
        txt = fmt.format(v) + (f"\nn={counts[k]}" if counts is not None else "")
        ax.text(x, v + top * 0.01, txt, ha="center", va="bottom", fontsize=6.5)


def pairwise_rates(metrics: pd.DataFrame, title: str, out_png, out_pdf=None) -> None:
    """``metrics``: :func:`judgelab.studies.overrating.pairwise.pairwise_metrics` rows (setting + metrics)."""
    settings = list(metrics["setting"])
    x = np.arange(len(settings))
    width = 0.8 / len(RATES)
    fig, ax = plt.subplots(figsize=(1.7 * len(settings) + 2.5, 3.8))
    for k, (col, name) in enumerate(RATES):
        v = metrics[col].to_numpy(dtype=float)
        xs = x + (k - (len(RATES) - 1) / 2) * width
        ax.bar(xs, np.nan_to_num(v), width * 0.92, label=name, color=f"C{k}")
        _bar_labels(ax, xs, v)
    ax.set_xticks(x)
    ax.set_xticklabels([f"{s}\n({int(n)} pairs)" for s, n in zip(settings, metrics["n_judged"])])
    ax.set_ylim(0, 112)
    ax.set_ylabel("% of judged pairs (Acc. no ties: of non-tied)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    save(fig, out_png, out_pdf)


def confidence_by_outcome(
    metrics: pd.DataFrame, title: str, out_png, out_pdf=None, *, confidence: str
) -> None:
    """``metrics``: pointwise metric rows (scale, conf_TP.., conf_renorm_TP.., n_TP..), one per
    scale; ``confidence``: the definition drawn (``full``: conf_*, ``renormalised``:
    conf_renorm_*)."""
    from judgelab.studies.overrating.tables import CONFIDENCE_SUFFIX, CONFIDENCE_TITLE

    sfx = CONFIDENCE_SUFFIX[confidence]
    metrics = metrics.assign(
        **{
            f"conf_{o}": metrics.get(f"conf{sfx}_{o}", pd.Series(np.nan, index=metrics.index))
            for o in OUTCOMES
        }
    )
    scales = list(metrics["scale"])
    x = np.arange(len(OUTCOMES))
    width = 0.8 / max(len(scales), 1)
    fig, ax = plt.subplots(figsize=(6.2, 3.8))
    for k, (_, r) in enumerate(metrics.iterrows()):
        v = np.array([r[f"conf_{o}"] for o in OUTCOMES], dtype=float)
        n = [int(r[f"n_{o}"]) for o in OUTCOMES]
        xs = x + (k - (len(scales) - 1) / 2) * width
        ax.bar(xs, np.nan_to_num(v), width * 0.92, label=str(r["scale"]), color=f"C{k}")
        _bar_labels(ax, xs, v, n, fmt="{:.3f}", top=1.0)
    ax.set_xticks(x)
    ax.set_xticklabels(list(OUTCOMES))
    ax.set_xlabel("binarised outcome (TREC: grade >= 2 relevant)")
    ax.set_ylabel(f"mean token confidence ({CONFIDENCE_TITLE[confidence]})")
    ax.set_ylim(0, 1.18)
    ax.legend(
        title="scale", fontsize=8, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False
    )
    if all(not math.isfinite(float(r[f"conf_{o}"])) for _, r in metrics.iterrows() for o in OUTCOMES):
        ax.text(
            1.5,
            0.55,
            "no pair with a parsed label and a token confidence",
            ha="center",
            fontsize=9,
            color="0.3",
        )
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    save(fig, out_png, out_pdf)
