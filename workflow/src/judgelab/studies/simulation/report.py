"""Tables shaped like the PersonaJudge paper's (TSV + Markdown), in the order the report shows them.

What the data can support comes first:

* ``annotators`` - per evaluator set the agreement of its human annotators (pairwise Cohen's
  kappa, Fleiss' kappa, Krippendorff's alpha), each evaluator's neutral and deviation rate, and
  the deviating validation pairs the deviation metrics rest on (:mod:`.annotators`).
* ``splits`` - the leakage groups of each split and what it leaves across (:func:`.splits.split_report`).

Then one block of rows per evaluator set where the paper has one per task:

* ``factors`` - Table 1: marginal mean accuracy (SD across evaluators) per level of demonstration
  type, model and demonstration count.
* ``core`` - Table 2: Random Selection (its expectation 1/3, and beside it the distribution over
  many seeded draws), the Base Judge per model and averaged over the models, PersonaJudge (mean
  over all cells) with its gain over that average, then the best configurations with their gain
  over the same model's Base Judge; coverage (answered / all judgments) in every row.
* ``improvements`` - the configurations that improve on their model's Base Judge (section 5.1.1),
  overall and per factor level, the misses involving telemetry, the BH-significant ones.
* ``evaluators`` - the evaluator-level tables of section 12.
* ``baselines`` - Table 13: every predictor on the consensus-eligible pairs, with coverage.
* ``deviation`` - Table 14: deviation accuracy, alignment lift, captured direction.
* ``confusion`` / ``prf`` - Tables 15 and 16: pooled over all models, demonstration types and
  counts (and the Base Judge over all models; Random Selection's expected per-class structure);
  ``confusion_cells`` / ``prf_cells`` the same per cell and model.
* ``distribution`` - the preference distribution tables of section 13.
* ``correlations``, ``cross_task`` - section 5.1.3 and Figure 3.
* ``stats_*`` - Tables 10 and 11, the per-configuration, all-pairs, chance, alignment and control
  tests (section 14), each at the evaluator and the item level. A p-value cell says "cannot
  reject at n = ..." where the test's smallest attainable p (``min_p``; Holm: times the family
  size) is above alpha (:func:`p_text`).
* ``design`` - the cells that ran and the demonstration types skipped, with the reason.

The figures are in :mod:`.figures`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.analysis.render import MISSING, fmt, markdown_frame
from judgelab.data.tables import write_tsv
from judgelab.studies.simulation.baselines import random_expected_prf
from judgelab.studies.simulation.data import LABELS
from judgelab.studies.simulation.metrics import BASE_JUDGE, PJ, confusion, per_class_prf, row_normalise

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


#: proposed captions of the report tables (also written above each Markdown table), in the
#: report's order
CAPTIONS = {
    "annotators": "What the data can support: agreement of the human annotators of each evaluator "
    "set (pairwise raw agreement and Cohen's kappa, Fleiss' kappa, Krippendorff's alpha), each "
    "evaluator's neutral and deviation rate, and the deviating validation pairs the deviation "
    "metrics rest on (PersonaJudge: deviation rate 20-23%).",
    "splits": "Leakage groups of each split (items sharing a context, swapped-response twins, identical "
    "items) kept whole on one side, and what the split leaves across pool and validation.",
    "factors": "Marginal mean three-class accuracy (SD across evaluators) per factor level "
    "(PersonaJudge Table 1).",
    "core": "Random Selection (expected accuracy, and the distribution over seeded draws), Base Judge "
    "per model and averaged over the models, PersonaJudge; the best configurations with their gain "
    "over the same model's Base Judge; coverage = answered / all judgments (PersonaJudge Table 2).",
    "improvements": "Configurations that improve on their model's Base Judge, overall and per factor "
    "level; the misses involving telemetry; the Benjamini-Hochberg-significant gains per test "
    "(PersonaJudge sections 5.1.1, 14.4).",
    "evaluators": "Per-evaluator accuracy: Base Judge per model and PersonaJudge marginal means by "
    "model, demonstration type and count (PersonaJudge section 12).",
    "baselines": "Predictors scored against each evaluator's own labels on the consensus-eligible "
    "pairs, with coverage; the cross-evaluator control on the matched pairs (PersonaJudge Table 13).",
    "deviation": "Deviation accuracy, alignment lift and captured direction per cell, with the pairs "
    "each rests on (PersonaJudge Table 14).",
    "confusion": "Row-normalised confusion matrices pooled over all models, demonstration types and "
    "counts (rows gold, columns prediction; the diagonal is the recall) (PersonaJudge Table 15).",
    "prf": "Per-class precision, recall and F1 pooled over all models, demonstration types and counts; "
    "Random Selection's expectation (PersonaJudge Table 16).",
    "confusion_cells": "Confusion matrices per cell and per model, rows gold, columns prediction; "
    "row_share is the row-normalised value.",
    "prf_cells": "Per-class precision, recall and F1 per cell and per model.",
    "distribution": "Preference distribution (A / N / B) of the predictions and of the human labels "
    "(PersonaJudge section 13).",
    "correlations": "Per-evaluator PersonaJudge accuracy vs neutral rate and deviation rate; the "
    "partial correlation controls for neutral rate; no p-value over fewer than 4 evaluators "
    "(PersonaJudge section 5.1.3).",
    "cross_task": "Evaluators who judged two tasks: correlation across the tasks of their neutral rate "
    "and of their PersonaJudge accuracy (the PersonaJudge paper, section 5.1.3, Figure 3).",
    "stats_factors": "Friedman omnibus over all configurations and per factor (evaluators) beside the "
    "within-judgment permutation test (judgments, evaluator as stratum); repeated-measures ANOVA "
    "(PersonaJudge Table 10).",
    "stats_pairwise": "Pairwise contrasts within each factor: Wilcoxon and paired t over evaluators, "
    "the stratified permutation test over judgments; Holm per test (PersonaJudge Table 11).",
    "stats_versus_base": "Each configuration vs its model's Base Judge: Wilcoxon and paired t over "
    "evaluators, stratified permutation and McNemar over judgments; Holm and Benjamini-Hochberg over "
    "configurations, per test (PersonaJudge section 14.4).",
    "stats_all_pairs": "All pairs of configurations: how many differ after Holm and after "
    "Benjamini-Hochberg, per test (PersonaJudge section 14.4).",
    "stats_chance": "PersonaJudge against chance (1/3) overall and at every factor level, and each Base "
    "Judge: Wilcoxon and one-sample t over evaluators, simulated uniform guesses over judgments "
    "(PersonaJudge section 14.1).",
    "stats_alignment": "PersonaJudge vs the baselines and reference predictors on the consensus-eligible "
    "pairs, over evaluators and over judgments (PersonaJudge section 14.1).",
    "stats_control": "PersonaJudge vs the cross-evaluator control on matched items, over evaluators and "
    "over judgments (PersonaJudge section 14.5).",
    "design": "The cells that ran (model x demonstration type x shot count; the Base Judge is type "
    "base with 0 shots) and the demonstration types the data cannot support, with the reason.",
}
REPORT_TABLES = tuple(CAPTIONS)


def mean_sd(values: Sequence[float]) -> str:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not len(v):
        return MISSING
    return f"{fmt(v.mean())} ({fmt(v.std(ddof=1))})" if len(v) > 1 else fmt(v.mean())


#: count columns, shown as integers
COUNT_COLUMNS = (
    "n",
    "n_discordant",
    "clusters",
    "k",
    "strata",
    "evaluators",
    "evaluators_ahead",
    "count",
    "of",
)
#: text columns: empty where there is nothing to say
TEXT_COLUMNS = ("note", "reason", "reading", "gain_vs_base", "coverage")


def for_reading(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as the tables show it: counts as integers, an empty text cell empty (not ``n/a``:
    that is for a number that is missing or undefined)."""
    out = df.copy()
    for col in out.columns:
        if col in COUNT_COLUMNS and pd.api.types.is_numeric_dtype(out[col]):
            out[col] = [str(int(v)) if np.isfinite(v) else MISSING for v in out[col].astype(float)]
        elif col in TEXT_COLUMNS or not pd.api.types.is_numeric_dtype(out[col]):
            out[col] = out[col].astype(object).where(out[col].notna(), "")
    return out


def write_table(df: pd.DataFrame, stem: str | Path, caption: str = "") -> None:
    """``stem``.tsv and ``stem``.md (the caption above the table)."""
    stem = Path(stem)
    df = for_reading(df)
    write_tsv(df, stem.with_suffix(".tsv"))
    text = (f"{caption}\n\n" if caption else "") + markdown_frame(df)
    stem.with_suffix(".md").write_text(text, encoding="utf-8")


def p_text(p: float, min_p: float, n, alpha: float, clusters=math.nan) -> str:
    """A p-value cell: "cannot reject at n = N" (with the clusters a test keeps together, where
    fewer than N) where the smallest p the test could reach is above alpha; else the p ("< 0.001"
    below that; ``n/a`` where there is none)."""
    if min_p is not None and np.isfinite(min_p) and min_p > alpha:
        if not np.isfinite(n):
            return "cannot reject"
        extra = (
            f" ({int(clusters)} clusters)"
            if clusters is not None and np.isfinite(clusters) and clusters < n
            else ""
        )
        return f"cannot reject at n = {int(n)}{extra}"
    if np.isfinite(p) and p < 0.001:
        return "< 0.001"
    return fmt(p)


def _per_evaluator(acc: pd.DataFrame, metric: str) -> pd.Series:
    return acc.groupby("evaluator")[metric].mean()


def _coverage(acc: pd.DataFrame) -> str:
    n = acc["n"].sum()
    return fmt(acc["n_answered"].sum() / n) if n else MISSING


def factors_table(accs: Mapping[str, pd.DataFrame], metric: str) -> pd.DataFrame:
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


def random_rows(draws: pd.DataFrame, items: str) -> list[dict]:
    """Random Selection as the paper reports it: the expected accuracy 1/3 (uniform over A, N, B,
    whatever the label shares), and beside it the distribution over the seeded draws of the mean
    over evaluators."""
    rows = [
        {
            "method": NAMES["random"],
            "configuration": "uniform over A, N, B: expected accuracy 1/3",
            "accuracy": fmt(1 / 3),
            "coverage": fmt(1.0),
        }
    ]
    d = draws[draws["items"] == items] if len(draws) else draws
    if len(d):
        per_draw = d.groupby("draw")["accuracy"].mean()
        lo, hi = np.quantile(per_draw, [0.025, 0.975])
        rows.append(
            {
                "method": NAMES["random"],
                "configuration": f"{len(per_draw)} seeded draws: mean (SD) of the evaluator mean; "
                f"2.5-97.5%: {fmt(lo)}-{fmt(hi)}",
                "accuracy": f"{fmt(per_draw.mean())} ({fmt(per_draw.std(ddof=1))})",
                "coverage": fmt(1.0),
            }
        )
    return rows


def core_table(acc: pd.DataFrame, draws: pd.DataFrame, metric: str, top: int = 5) -> pd.DataFrame:
    """Table 2: Random Selection, the Base Judge per model and averaged, PersonaJudge overall with
    its gain over the averaged Base Judge; then the ``top`` cells with their gain over their
    model's Base Judge."""
    rows = [{**r, "gain_vs_base": ""} for r in random_rows(draws, "validation")]
    base = acc[acc["method"] == BASE_JUDGE]
    for model, g in base.groupby("model", sort=True):
        rows.append(
            {
                "method": NAMES[BASE_JUDGE],
                "configuration": model,
                "accuracy": mean_sd(_per_evaluator(g, metric)),
                "coverage": _coverage(g),
                "gain_vs_base": "",
            }
        )
    base_ev = base.groupby(["evaluator", "model"])[metric].mean().groupby("evaluator").mean()
    n_models = base["model"].nunique()
    if n_models:
        rows.append(
            {
                "method": NAMES[BASE_JUDGE],
                "configuration": f"mean over {n_models} model{'s' if n_models > 1 else ''}",
                "accuracy": mean_sd(base_ev),
                "coverage": _coverage(base),
                "gain_vs_base": "",
            }
        )
    pj = acc[acc["method"] == PJ]
    pj_ev = (
        pj.groupby(["evaluator", "model", "demo_type", "shots"])[metric].mean().groupby("evaluator").mean()
    )
    n_cells = pj.groupby(["model", "demo_type", "shots"]).ngroups
    gain = pj_ev.mean() - base_ev.mean() if len(pj_ev) and len(base_ev) else math.nan
    rows.append(
        {
            "method": NAMES[PJ],
            "configuration": f"mean over {n_cells} cells",
            "accuracy": mean_sd(pj_ev),
            "coverage": _coverage(pj),
            "gain_vs_base": MISSING if not math.isfinite(gain) else f"{gain:+.3f} (vs the mean Base Judge)",
        }
    )
    base_mean = base.groupby(["model", "evaluator"])[metric].mean().groupby("model").mean()
    cells = (
        pj.groupby(["model", "demo_type", "shots", "evaluator"])[metric]
        .mean()
        .groupby(["model", "demo_type", "shots"])
        .mean()
        .sort_values(ascending=False, kind="stable")
    )
    for (model, dt, shots), v in cells.head(top).items():
        g = pj[(pj["model"] == model) & (pj["demo_type"] == dt) & (pj["shots"] == shots)]
        gain = v - base_mean.get(model, math.nan)
        rows.append(
            {
                "method": f"{NAMES[PJ]} (best)",
                "configuration": f"{model}, {int(shots)}-shot, {dt}",
                "accuracy": mean_sd(_per_evaluator(g, metric)),
                "coverage": _coverage(g),
                "gain_vs_base": MISSING if not math.isfinite(gain) else f"{gain:+.3f}",
            }
        )
    return pd.DataFrame(rows, columns=["method", "configuration", "accuracy", "coverage", "gain_vs_base"])


def evaluators_table(acc: pd.DataFrame, metric: str) -> pd.DataFrame:
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
    acc_eligible: pd.DataFrame, control: pd.DataFrame, draws: pd.DataFrame, metric: str
) -> pd.DataFrame:
    """Table 13: mean (SD) over evaluators of each predictor's accuracy on the consensus-eligible
    pairs, with coverage; Random Selection as its expectation and the seeded draws; the
    cross-evaluator control (and PersonaJudge on the same matched items) from ``control``."""
    rows = []
    order = ["oracle_consensus", PJ, "evaluator_majority", "global_majority", BASE_JUDGE]
    for method in order:
        g = acc_eligible[acc_eligible["method"] == method]
        if method == BASE_JUDGE:
            for model, gm in g.groupby("model", sort=True):
                rows.append(
                    {
                        "predictor": f"{NAMES[method]} ({model})",
                        "pairs": "consensus-eligible",
                        "accuracy": mean_sd(_per_evaluator(gm, metric)),
                        "coverage": _coverage(gm),
                    }
                )
        elif len(g):
            per = (
                g.groupby(["evaluator", "model", "demo_type", "shots"])[metric]
                .mean()
                .groupby("evaluator")
                .mean()
            )
            rows.append(
                {
                    "predictor": NAMES[method],
                    "pairs": "consensus-eligible",
                    "accuracy": mean_sd(per),
                    "coverage": _coverage(g),
                }
            )
    for r in random_rows(draws, "consensus-eligible"):
        rows.append(
            {
                "predictor": f"{r['method']}: {r['configuration']}",
                "pairs": "consensus-eligible",
                "accuracy": r["accuracy"],
                "coverage": r["coverage"],
            }
        )
    if len(control):
        per = control.groupby("evaluator")[["own_accuracy", "control_accuracy"]].mean()
        n_matched = int(control.groupby("evaluator")["n_matched"].max().sum())
        for name, col in (
            (NAMES["cross_evaluator"], "control_accuracy"),
            (f"{NAMES[PJ]} (same matched pairs)", "own_accuracy"),
        ):
            rows.append(
                {
                    "predictor": name,
                    "pairs": f"matched multi-annotator ({n_matched})",
                    "accuracy": mean_sd(per[col]),
                    "coverage": "",
                }
            )
    return pd.DataFrame(rows, columns=["predictor", "pairs", "accuracy", "coverage"])


def deviation_report(deviation: pd.DataFrame) -> pd.DataFrame:
    """Table 14 with the pairs each metric rests on; Random Selection as its expectation (a
    uniform guess deviates from the consensus with probability 2/3 whether the evaluator does or
    not: deviation accuracy 1/3, alignment lift 0, captured direction 1/2), not one draw."""
    deviation = deviation.copy()
    if len(deviation) and "method" in deviation.columns:
        rnd = deviation["method"] == "random"
        expected = {
            "deviation_accuracy": 1 / 3,
            "p_model_deviates_given_deviation": 2 / 3,
            "p_model_deviates_given_conform": 2 / 3,
            "alignment_lift": 0.0,
            "captured_direction": 0.5,
            "n_model_deviates_on_deviation": math.nan,
        }
        for col, v in expected.items():
            if col in deviation.columns:
                deviation.loc[rnd, col] = v
        deviation.loc[rnd, "method"] = "random (expected)"
    keep = [
        "method",
        "model",
        "demo_type",
        "shots",
        "n_eligible",
        "n_deviation",
        "human_deviation_rate",
        "deviation_accuracy",
        "n_deviation_answered",
        "alignment_lift",
        "n_conform_answered",
        "n_model_deviates_on_deviation",
        "captured_direction",
    ]
    return deviation[[c for c in keep if c in deviation.columns]]


def pooled_confusion(long: pd.DataFrame) -> pd.DataFrame:
    """Table 15: row-normalised confusion of PersonaJudge over all its cells and models, and of the
    Base Judge over all models (rows gold, columns prediction, with the row's answered count)."""
    rows = []
    for method in (PJ, BASE_JUDGE):
        g = long[long["method"] == method]
        if not len(g):
            continue
        cm = confusion(g)
        norm = row_normalise(cm)
        for i, gold in enumerate(LABELS):
            rows.append(
                {
                    "predictor": f"{NAMES[method]} (all models{', types, counts' if method == PJ else ''})",
                    "gold": gold,
                    **{f"pred_{p}": norm[i, j] for j, p in enumerate(LABELS)},
                    "n": int(cm[i].sum()),
                }
            )
    return pd.DataFrame(rows)


def pooled_prf(long: pd.DataFrame) -> pd.DataFrame:
    """Table 16: per-class precision, recall and F1 of PersonaJudge over all its cells and models
    and of the Base Judge over all models (answered predictions), and Random Selection's
    expectation over the same validation pairs."""
    parts = []
    for method in (PJ, BASE_JUDGE):
        g = long[long["method"] == method]
        if len(g):
            name = f"{NAMES[method]} (all models{', types, counts' if method == PJ else ''})"
            parts.append(per_class_prf(confusion(g)).assign(predictor=name))
    gold = long.drop_duplicates(["evaluator", "item"])["gold"]
    if len(gold):
        parts.append(random_expected_prf(list(gold)).assign(predictor=f"{NAMES['random']} (expected)"))
    if not parts:
        return pd.DataFrame()
    out = pd.concat(parts, ignore_index=True)
    return out[["predictor", "label", "precision", "recall", "f1", "support"]]


def distribution_report(dist: pd.DataFrame) -> pd.DataFrame:
    """Section 13 with Random Selection as its expectation (1/3 each), not one draw."""
    if not len(dist):
        return dist
    out = dist.copy()
    rnd = (out["method"] == "random") & (out["source"] == "prediction")
    for lab in LABELS:
        out.loc[rnd, lab] = 1 / 3
    out.loc[rnd, "source"] = "prediction (expected)"
    return out


#: the p-value columns of the stats tables and the column with the smallest p each can reach
P_COLUMNS = {"p": "min_p", "p_holm": "min_p_holm", "p_bh": "min_p"}


def stats_report(df: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """A stats table for reading: each p-value cell says "cannot reject at n = ..." where the
    test's smallest attainable p (Holm: times the family size) is above alpha; the numbers stay
    in the stats TSV files."""
    if not len(df):
        return df
    out = df.copy()
    clusters = df["clusters"] if "clusters" in df.columns else pd.Series(math.nan, index=df.index)
    for col, floor in P_COLUMNS.items():
        if col in out.columns:
            out[col] = [
                p_text(p, mp, n, alpha, c)
                for p, mp, n, c in zip(df[col], df.get(floor, df["min_p"]), df["n"], clusters)
            ]
    drop = [
        c
        for c in ("min_p_holm", "significant_holm", "significant_bh", "mean_x", "mean_y")
        if c in out.columns
    ]
    return out.drop(columns=drop)


def all_pairs_summary(all_pairs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Section 14.4's count: of the pairs of configurations, how many differ after Holm and after
    Benjamini-Hochberg, per test; and how many a test could reject at all."""
    rows = []
    for test, g in all_pairs.groupby("test", sort=False):
        rows.append(
            {
                "test": test,
                "unit": g["unit"].iloc[0],
                "pairs": len(g),
                "tested": int(g["p"].notna().sum()),
                "could_reject_after_holm": int((g["min_p_holm"] <= alpha).sum()),
                "significant_holm": int((g["p_holm"] < alpha).sum()),
                "significant_bh": int((g["p_bh"] < alpha).sum()),
            }
        )
    return pd.DataFrame(rows)


def annotators_report(table: pd.DataFrame) -> pd.DataFrame:
    """The annotators table with counts as integers and rates with three decimals."""
    if not len(table):
        return table
    out = table.copy()
    counts = out["measure"].str.endswith("pairs")
    out["value"] = [
        (str(int(v)) if np.isfinite(v) else MISSING) if c else fmt(v) for v, c in zip(table["value"], counts)
    ]
    return out
