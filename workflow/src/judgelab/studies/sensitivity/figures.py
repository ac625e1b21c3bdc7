"""The figure of each judge's agreement over prompts: one panel per type x dataset, one column of
points per judge (published, or live: "(live)"; a box over its prompts but UMBRELA's, each prompt
a point, UMBRELA's prompt a star)."""

from __future__ import annotations

import pandas as pd

from judgelab.analysis.plotting import plt, save
from judgelab.studies.sensitivity.science import MEASURE

_LABEL = {"kappa": "Cohen's kappa", "agree": "share agreeing with the human order"}


def distribution_figure(agreement: pd.DataFrame, png: str, pdf: str) -> None:
    panels = sorted({(str(t), str(d)) for t, d in zip(agreement["type"], agreement["dataset"])})
    fig, axes = plt.subplots(1, max(len(panels), 1), figsize=(3.2 * max(len(panels), 1), 3.4), squeeze=False)
    for ax, (kind, dataset) in zip(axes[0], panels):
        measure = MEASURE[kind]
        df = agreement[(agreement["type"] == kind) & (agreement["dataset"] == dataset)]
        models = sorted(df["model"].unique())
        prompts = [
            df.loc[(df["model"] == m) & (df["group"] != "umbrela"), measure].dropna().astype(float)
            for m in models
        ]
        ax.boxplot(prompts, showfliers=False)
        for i, (m, values) in enumerate(zip(models, prompts), 1):
            ax.scatter([i] * len(values), values, s=10, alpha=0.6, color="tab:blue")
            u = df.loc[(df["model"] == m) & (df["group"] == "umbrela"), measure].dropna()
            if len(u):
                ax.scatter([i], [float(u.iloc[0])], marker="*", s=90, color="tab:red", label="UMBRELA")
        ax.set_xticks(range(1, len(models) + 1), models, rotation=30)
        ax.set_title(f"{kind}, {dataset}")
        ax.set_ylabel(_LABEL[measure])
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            ax.legend(handles[:1], labels[:1], fontsize=7)
    fig.tight_layout()
    save(fig, png, pdf)
