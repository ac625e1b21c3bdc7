"""Figures of PERAS (matplotlib), each written as PNG and PDF.

* :func:`radar` - Figures 4 and 5: one polar panel per metric over the persona conditions of one
  dataset x model x template. The default persona's value is a dashed reference circle; a
  persona whose difference to the default is significant (Holm-adjusted paired bootstrap, see
  :mod:`.significance`) gets a star and a ``*`` beside its name. An undefined metric
  (NaN: e.g. no parsed answer) leaves a gap in the polygon and ``n/a`` beside the persona.
* :func:`interpersona_heatmap` - Figure 2: Cohen's kappa between every two persona conditions,
  over the pairs both parsed; undefined cells are grey with ``n/a``.
* :func:`confidence_by_grade` - Figure 3: mean self-reported confidence of the predictions with
  a given label (0 by default) by human grade, for chosen personas, with the count of pairs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib.ticker
import numpy as np
import pandas as pd

from judgelab.analysis.agreement import cohen_kappa
from judgelab.analysis.plotting import annotated_heatmap, plt, save
from judgelab.analysis.render import MISSING
from judgelab.data.labels import GRADES

METRIC_LABELS = {
    "kappa": "Cohen's κ",
    "qwk": "QWK",
    "macro_f1": "macro F1",
    "RO": "RO",
    "RU": "RU",
    "HMR": "HMR",
}
AGREEMENT = ["kappa", "qwk", "macro_f1"]
CALIBRATION = ["RO", "RU", "HMR"]
COLORS = {
    "kappa": "#1f77b4",
    "qwk": "#2ca02c",
    "macro_f1": "#9467bd",
    "RO": "#d62728",
    "RU": "#ff7f0e",
    "HMR": "#8c564b",
}


def _radial_limits(values: np.ndarray, fixed: tuple[float, float] | None) -> tuple[float, float]:
    if fixed is not None:
        return fixed
    v = values[np.isfinite(values)]
    if not len(v):
        return 0.0, 1.0
    lo = min(0.0, math.floor(v.min() * 10) / 10)
    hi = max(lo + 0.1, math.ceil(v.max() * 10 + 1e-9) / 10)
    return lo, min(hi, 1.0) if v.max() <= 1.0 else hi


def radar(
    metrics: pd.DataFrame,
    metric_names: Sequence[str],
    title: str,
    out_png,
    out_pdf=None,
    *,
    significance: pd.DataFrame | None = None,
    reference: str = "default",
    fixed_range: Mapping[str, tuple[float, float]] | None = None,
):
    """One polar panel per metric of ``metric_names`` over the personas of ``metrics`` (rows in
    display order, columns persona + the metrics). ``significance``: rows persona, metric,
    significant (bool) for the metrics that were tested."""
    personas = list(metrics["persona"])
    n = len(personas)
    angles = np.linspace(0, 2 * np.pi, n, endpoint=False)
    sig = set()
    if significance is not None and len(significance):
        s = significance[significance["significant"].astype(bool)]
        sig = set(zip(s["persona"], s["metric"]))
    fig, axes = plt.subplots(
        1, len(metric_names), subplot_kw={"projection": "polar"}, figsize=(4.3 * len(metric_names), 4.9)
    )
    axes = np.atleast_1d(axes)
    for ax, m in zip(axes, metric_names):
        vals = metrics[m].to_numpy(dtype=float)
        lo, hi = _radial_limits(vals, (fixed_range or {}).get(m))
        closed_a, closed_v = np.append(angles, angles[:1]), np.append(vals, vals[:1])
        color = COLORS.get(m, "C0")
        ax.plot(closed_a, closed_v, color=color, lw=1.8)  # NaN leaves a gap
        ok = np.isfinite(closed_v)
        if ok.all():
            ax.fill(closed_a, closed_v, color=color, alpha=0.12)
        # clip_on=False: a point on the outer ring (e.g. RU = 1) stays whole
        ax.scatter(
            angles[np.isfinite(vals)], vals[np.isfinite(vals)], color=color, s=18, zorder=3, clip_on=False
        )
        if reference in personas:
            ref = vals[personas.index(reference)]
            if np.isfinite(ref):
                theta = np.linspace(0, 2 * np.pi, 200)
                ax.plot(theta, np.full_like(theta, ref), color="0.35", lw=1, ls="--", zorder=1)
        stars = [i for i, p in enumerate(personas) if (p, m) in sig and np.isfinite(vals[i])]
        if stars:
            ax.scatter(angles[stars], vals[stars], marker="*", s=170, color="black", zorder=4, clip_on=False)
        ticks = []
        for i, p in enumerate(personas):
            lab = p + ("*" if (p, m) in sig else "")
            if not np.isfinite(vals[i]):
                lab += "\n(n/a)"
            ticks.append(lab)
        ax.set_xticks(angles)
        ax.set_xticklabels(ticks, fontsize=8.5)
        ax.set_theta_offset(np.pi / 2)
        ax.set_theta_direction(-1)
        ax.set_ylim(lo, hi)
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=4))
        if lo < 0:  # a negative agreement is inside the zero circle
            theta = np.linspace(0, 2 * np.pi, 200)
            ax.plot(theta, np.zeros_like(theta), color="0.55", lw=0.9, zorder=1)
        ax.set_rlabel_position(180 / max(n, 1))
        ax.tick_params(axis="y", labelsize=7, colors="0.4")
        for lab in ax.get_yticklabels():
            lab.set_bbox({"facecolor": "white", "edgecolor": "none", "alpha": 0.75, "pad": 0.3})
        ax.grid(color="0.8", lw=0.6)
        n_na = int((~np.isfinite(vals)).sum())
        sub = METRIC_LABELS.get(m, m) + (f"  ({n_na} n/a)" if n_na else "")
        ax.set_title(sub, fontsize=11, pad=16)
    fig.suptitle(title, fontsize=12, y=1.02)
    handles = [plt.Line2D([], [], color="0.35", ls="--", label=f"{reference} (reference)")]
    if significance is not None:
        handles.append(
            plt.Line2D(
                [],
                [],
                color="black",
                marker="*",
                ls="",
                markersize=11,
                label=f"differs from {reference} (Holm p < 0.05)",
            )
        )
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=len(handles),
        frameon=False,
        fontsize=9,
        bbox_to_anchor=(0.5, -0.05),
    )
    fig.tight_layout()
    save(fig, out_png, out_pdf)


def interpersona_kappa(labels: Mapping[str, pd.Series]) -> pd.DataFrame:
    """Tidy Cohen's kappa between every two personas (``labels``: persona -> nullable labels on
    the same pairs, same index), over the pairs where both parsed; NaN when undefined."""
    rows = []
    for a, la in labels.items():
        for b, lb in labels.items():
            both = la.notna() & lb.notna()
            k = math.nan
            if both.sum() >= 2:  # one single label on both sides: kappa is 0/0, NaN ("n/a" in the figure)
                k = cohen_kappa(la[both].astype(int), lb[both].astype(int), GRADES)
            rows.append({"persona_a": a, "persona_b": b, "kappa": k, "n_pairs": int(both.sum())})
    return pd.DataFrame(rows)


def interpersona_heatmap(tidy: pd.DataFrame, title: str, out_png, out_pdf=None):
    order = list(dict.fromkeys(tidy["persona_a"]))
    mat = tidy.pivot(index="persona_a", columns="persona_b", values="kappa").loc[order, order]
    vals = mat.to_numpy(dtype=float)
    finite = vals[np.isfinite(vals)]
    vmin = min(0.0, math.floor(finite.min() * 10) / 10) if len(finite) else 0.0
    size = 0.55 * len(order) + 2.2
    fig, ax = plt.subplots(figsize=(size + 1.2, size))
    texts = [[f"{v:.2f}" for v in row] for row in vals]
    image = annotated_heatmap(
        ax, vals, texts, cmap="viridis", vmin=vmin, fontsize=7, white_above=None, lines="white"
    )
    fig.colorbar(image, ax=ax, label="Cohen's κ", shrink=0.8).outline.set_visible(False)
    ax.set_xticks(range(len(order)), order)
    ax.set_yticks(range(len(order)), order)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.set_title(title, fontsize=11)
    if not np.isfinite(vals).all():
        fig.text(
            0.01,
            0.005,
            f"{MISSING}: fewer than two pairs parsed by both personas, or both use one single "
            "label (kappa undefined)",
            fontsize=7,
            color="0.35",
            ha="left",
            va="bottom",
        )
    plt.setp(ax.get_xticklabels(), rotation=45, ha="right")
    plt.setp(ax.get_yticklabels(), rotation=0)
    fig.tight_layout()
    save(fig, out_png, out_pdf)


def confidence_by_grade_table(
    pairs: pd.DataFrame, confidence: Mapping[str, pd.DataFrame], label: int
) -> pd.DataFrame:
    """Per persona and human grade: mean and SD of the confidence of the pairs the persona
    labelled ``label`` (with a parsed confidence), and their count."""
    rows = []
    for p, c in confidence.items():
        m = pairs[["qid", "docid", "grade"]].merge(
            c[["qid", "docid", "label", "confidence"]], on=["qid", "docid"], validate="one_to_one"
        )
        sel = m[(m["label"] == label) & m["confidence"].notna()]
        for g in GRADES:
            v = sel.loc[sel["grade"] == g, "confidence"].astype(float)
            rows.append(
                {
                    "persona": p,
                    "grade": g,
                    "label": label,
                    "n": len(v),
                    "mean_confidence": float(v.mean()) if len(v) else math.nan,
                    "sd_confidence": float(v.std(ddof=1)) if len(v) > 1 else math.nan,
                }
            )
    return pd.DataFrame(rows)


def confidence_by_grade(table: pd.DataFrame, title: str, out_png, out_pdf=None):
    personas = list(dict.fromkeys(table["persona"]))
    label = int(table["label"].iloc[0]) if len(table) else 0
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * len(GRADES), 3.8))
    width = 0.8 / max(len(personas), 1)
    for k, p in enumerate(personas):
        t = table[table["persona"] == p].set_index("grade").reindex(GRADES)
        x = np.arange(len(GRADES)) + (k - (len(personas) - 1) / 2) * width
        y = t["mean_confidence"].to_numpy(dtype=float)
        ax.bar(x, np.nan_to_num(y), width * 0.92, label=p, color=f"C{k}", alpha=0.85)
        for xi, yi, ni in zip(x, y, t["n"].to_numpy()):
            txt = f"n={int(ni)}" if np.isfinite(yi) else "n=0"
            ax.text(xi, (yi if np.isfinite(yi) else 0) + 1.5, txt, ha="center", va="bottom", fontsize=7)
    ax.set_xticks(np.arange(len(GRADES)))
    ax.set_xticklabels([f"grade {g}" for g in GRADES])
    ax.set_xlabel("human grade")
    ax.set_ylabel(f"mean confidence of label-{label} predictions")
    ax.set_ylim(0, 110)
    if table["n"].sum() == 0:
        ax.text(
            1.5,
            55,
            f"no prediction with label {label} and a parsed confidence",
            ha="center",
            va="center",
            fontsize=9,
            color="0.3",
        )
    ax.legend(
        title="persona",
        fontsize=8,
        title_fontsize=8,
        loc="upper left",
        bbox_to_anchor=(1.01, 1),
        frameon=False,
    )
    ax.set_title(title, fontsize=11)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    save(fig, out_png, out_pdf)
