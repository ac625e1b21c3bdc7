"""Tables shaped like seed 001's (TSV + Markdown).

One column block per evaluator set where the seed has one per task:

* ``factors`` - Table 1: marginal mean accuracy (SD across evaluators) per level of demonstration
  type, model and demonstration count.
* ``core`` - Table 2: Random Selection, Base Judge (per model) and PersonaJudge (mean over all
  cells), then the best configurations with their gain over the same model's Base Judge.
* ``evaluators`` - the evaluator-level tables of section 12: per evaluator the Base Judge per
  model and PersonaJudge marginal means by model, demonstration type and count; an Avg row.
* ``baselines`` - Table 13: every predictor scored on the consensus-eligible pairs.
* ``deviation`` - Table 14: deviation accuracy, alignment lift, captured direction.
* ``confusion`` / ``prf`` - Tables 15 and 16.
* ``distribution`` - the preference distribution tables of section 13.
* ``stats_*`` - Tables 10 and 11, the per-configuration and control tests (section 14).
* ``design`` - the cells that ran and the demonstration types skipped, with the reason.

The figures are in :mod:`.figures`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ...render import MISSING, fmt, markdown_frame
from ...tables import write_tsv
from .metrics import BASE_JUDGE, PJ

NAMES = {
    "random": "Random Selection",
    BASE_JUDGE: "Base Judge",
    PJ: "PersonaJudge",
    "oracle_consensus": "Oracle consensus",
    "global_majority": "Global majority",
    "evaluator_majority": "Per-evaluator majority",
    "cross_evaluator": "Cross-evaluator control",
}


FACTOR_NAMES = {"demo_type": "Demonstration Type", "model": "Model", "shots": "Demonstration Count"}


#: proposed captions of the report tables (also written above each Markdown table)
CAPTIONS = {
    "factors": "Marginal mean three-class accuracy (SD across evaluators) per factor level "
    "(seed 001 Table 1).",
    "core": "Random Selection, Base Judge and PersonaJudge; the best configurations with their gain "
    "over the same model's Base Judge (seed 001 Table 2).",
    "evaluators": "Per-evaluator accuracy: Base Judge per model and PersonaJudge marginal means by "
    "model, demonstration type and count (seed 001 section 12).",
    "baselines": "Predictors scored against each evaluator's own labels on the consensus-eligible "
    "pairs; the cross-evaluator control on the matched pairs (seed 001 Table 13).",
    "deviation": "Deviation accuracy, alignment lift and captured direction per cell (seed 001 Table 14).",
    "confusion": "Confusion matrices, rows gold, columns prediction; row_share is the "
    "row-normalised value (seed 001 Table 15).",
    "prf": "Per-class precision, recall and F1 (seed 001 Table 16).",
    "distribution": "Preference distribution (A / N / B) of the predictions and of the human labels "
    "(seed 001 section 13).",
    "correlations": "Per-evaluator PersonaJudge accuracy vs neutral rate and deviation rate; the "
    "partial correlation controls for neutral rate (seed 001 section 5.1.3).",
    "stats_factors": "Friedman omnibus over all configurations, Friedman per factor, "
    "repeated-measures ANOVA (seed 001 Table 10).",
    "stats_pairwise": "Pairwise Wilcoxon contrasts within each factor, Holm-corrected, with paired t "
    "and Cohen's d (seed 001 Table 11).",
    "stats_versus_base": "Each configuration vs its model's Base Judge: Wilcoxon with Holm and "
    "Benjamini-Hochberg over configurations (seed 001 section 14.4).",
    "stats_alignment": "PersonaJudge vs chance and vs the baselines and reference predictors "
    "(seed 001 section 14.1).",
    "stats_control": "PersonaJudge vs the cross-evaluator control on matched items (seed 001 section 14.5).",
    "design": "The cells that ran (model x demonstration type x shot count; the Base Judge is type "
    "base with 0 shots) and the demonstration types the data cannot support, with the reason.",
}


def mean_sd(values: Sequence[float]) -> str:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not len(v):
        return MISSING
    return f"{fmt(v.mean())} ({fmt(v.std(ddof=1))})" if len(v) > 1 else fmt(v.mean())


def write_table(df: pd.DataFrame, stem: str | Path, caption: str = "") -> None:
    """``stem``.tsv and ``stem``.md (the caption above the table)."""
    stem = Path(stem)
    write_tsv(df, stem.with_suffix(".tsv"))
    text = (f"{caption}\n\n" if caption else "") + markdown_frame(df)
    stem.with_suffix(".md").write_text(text, encoding="utf-8")


def _per_evaluator(acc: pd.DataFrame, metric: str) -> pd.Series:
    return acc.groupby("evaluator")[metric].mean()


def factors_table(accs: Mapping[str, pd.DataFrame], metric: str = "accuracy") -> pd.DataFrame:
    """Table 1: per factor level, mean (SD across evaluators) of the per-evaluator marginal
    means; one column per evaluator set."""
    rows: dict[tuple[str, str], dict] = {}
    for name, acc in accs.items():
        pj = acc[acc["method"] == PJ]
        for f in ("demo_type", "model", "shots"):
            marg = pj.groupby(["evaluator", f])[metric].mean().unstack(f)
            for lv in marg.columns:
                key = (FACTOR_NAMES[f], f"{lv}-shot" if f == "shots" else str(lv))
                rows.setdefault(key, {})[name] = mean_sd(marg[lv])
    out = pd.DataFrame([{"factor": k[0], "level": k[1], **v} for k, v in rows.items()])
    return out.fillna(MISSING)


def core_table(acc: pd.DataFrame, metric: str = "accuracy", top: int = 5) -> pd.DataFrame:
    """Table 2: random, Base Judge per model, PersonaJudge overall; then the ``top`` cells."""
    rows = []
    rnd = acc[acc["method"] == "random"]
    rows.append(
        {
            "method": NAMES["random"],
            "configuration": "uniform (expected 0.333)",
            "accuracy": mean_sd(_per_evaluator(rnd, metric)),
            "gain_vs_base": "",
        }
    )
    base = acc[acc["method"] == BASE_JUDGE]
    for model, g in base.groupby("model", sort=True):
        rows.append(
            {
                "method": NAMES[BASE_JUDGE],
                "configuration": model,
                "accuracy": mean_sd(_per_evaluator(g, metric)),
                "gain_vs_base": "",
            }
        )
    pj = acc[acc["method"] == PJ]
    pj_ev = (
        pj.groupby(["evaluator", "model", "demo_type", "shots"])[metric].mean().groupby("evaluator").mean()
    )
    n_cells = pj.groupby(["model", "demo_type", "shots"]).ngroups
    rows.append(
        {
            "method": NAMES[PJ],
            "configuration": f"mean over {n_cells} cells",
            "accuracy": mean_sd(pj_ev),
            "gain_vs_base": "",
        }
    )
    base_mean = base.groupby("model")[metric].mean()
    cells = pj.groupby(["model", "demo_type", "shots"])[metric].mean().sort_values(ascending=False)
    for (model, dt, shots), v in cells.head(top).items():
        g = pj[(pj["model"] == model) & (pj["demo_type"] == dt) & (pj["shots"] == shots)]
        gain = v - base_mean.get(model, math.nan)
        rows.append(
            {
                "method": f"{NAMES[PJ]} (best)",
                "configuration": f"{model}, {int(shots)}-shot, {dt}",
                "accuracy": mean_sd(_per_evaluator(g, metric)),
                "gain_vs_base": MISSING if not math.isfinite(gain) else f"{gain:+.3f}",
            }
        )
    return pd.DataFrame(rows)


def evaluators_table(acc: pd.DataFrame, metric: str = "accuracy") -> pd.DataFrame:
    """Section 12: per evaluator, the Base Judge per model and PersonaJudge marginal means by
    model, demonstration type and count; the Avg row is the mean over evaluators."""
    base = acc[acc["method"] == BASE_JUDGE].pivot_table(index="evaluator", columns="model", values=metric)
    base.columns = [f"Base Judge: {c}" for c in base.columns]
    parts = [base]
    pj = acc[acc["method"] == PJ]
    for f, label in (("model", "Model"), ("demo_type", "Type"), ("shots", "Count")):
        m = pj.groupby(["evaluator", f])[metric].mean().unstack(f)
        m.columns = [f"{label}: {c}" for c in m.columns]
        parts.append(m)
    wide = pd.concat(parts, axis=1)
    wide.loc["Avg"] = wide.mean(axis=0)
    return wide.reset_index().rename(columns={"index": "evaluator"})


def baselines_table(
    acc_eligible: pd.DataFrame, control: pd.DataFrame, metric: str = "accuracy"
) -> pd.DataFrame:
    """Table 13: mean (SD) over evaluators of each predictor's accuracy on the consensus-eligible
    pairs; the cross-evaluator control (and PersonaJudge on the same matched items) from
    ``control``."""
    rows = []
    order = ["oracle_consensus", PJ, "evaluator_majority", "global_majority", BASE_JUDGE, "random"]
    for method in order:
        g = acc_eligible[acc_eligible["method"] == method]
        if method == BASE_JUDGE:
            for model, gm in g.groupby("model", sort=True):
                rows.append(
                    {
                        "predictor": f"{NAMES[method]} ({model})",
                        "pairs": "consensus-eligible",
                        "accuracy": mean_sd(_per_evaluator(gm, metric)),
                    }
                )
        elif len(g):
            per = (
                g.groupby(["evaluator", "model", "demo_type", "shots"])[metric]
                .mean()
                .groupby("evaluator")
                .mean()
            )
            rows.append({"predictor": NAMES[method], "pairs": "consensus-eligible", "accuracy": mean_sd(per)})
    if len(control):
        per = control.groupby("evaluator")[["own_accuracy", "control_accuracy"]].mean()
        rows.append(
            {
                "predictor": NAMES["cross_evaluator"],
                "pairs": "matched multi-annotator",
                "accuracy": mean_sd(per["control_accuracy"]),
            }
        )
        rows.append(
            {
                "predictor": f"{NAMES[PJ]} (same matched pairs)",
                "pairs": "matched multi-annotator",
                "accuracy": mean_sd(per["own_accuracy"]),
            }
        )
    return pd.DataFrame(rows)


def deviation_report(deviation: pd.DataFrame) -> pd.DataFrame:
    keep = [
        "method",
        "model",
        "demo_type",
        "shots",
        "n_eligible",
        "human_deviation_rate",
        "n_deviation_answered",
        "deviation_accuracy",
        "alignment_lift",
        "n_model_deviates_on_deviation",
        "captured_direction",
    ]
    return deviation[[c for c in keep if c in deviation.columns]]
