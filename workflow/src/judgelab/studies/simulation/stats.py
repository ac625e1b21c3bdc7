"""Significance tests with the evaluator as the unit (seed 001 section 14).

Every evaluator contributes one accuracy per condition and every comparison is paired across
evaluators. Non-parametric tests are primary (Wilcoxon signed-rank for paired contrasts,
Friedman for omnibus), corroborated by paired / one-sample t tests and a repeated-measures
ANOVA (statsmodels ``AnovaRM``). Pairwise families are Holm-corrected; the family of
configuration-vs-Base-Judge comparisons is also controlled with Benjamini-Hochberg (alpha 0.05).
Effect size: Cohen's d for paired data (mean difference / SD of the differences).

Wrappers call scipy and statsmodels; degenerate inputs (fewer pairs than a test needs, all
differences zero, a constant variable) give NaN with a ``note`` instead of a warning. Wilcoxon
uses scipy's defaults (two-sided, zero differences dropped, exact distribution for small n).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.anova import AnovaRM

from ...stats import adjust_pvalues
from .metrics import BASE_JUDGE, PJ

FACTORS = ("demo_type", "shots", "model")
CHANCE = 1.0 / 3.0


# --------------------------------------------------------------------------------------------
# Wrappers


def _paired(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError("paired samples differ in length")
    ok = np.isfinite(x) & np.isfinite(y)
    return x[ok], y[ok]


def wilcoxon(x: Sequence[float], y: Sequence[float]) -> dict:
    """Wilcoxon signed-rank test of x - y (scipy defaults); pairs with a NaN are dropped."""
    x, y = _paired(x, y)
    d = x - y
    out = {
        "n": len(d),
        "mean_x": float(x.mean()) if len(d) else math.nan,
        "mean_y": float(y.mean()) if len(d) else math.nan,
        "delta": float(d.mean()) if len(d) else math.nan,
        "W": math.nan,
        "p_wilcoxon": math.nan,
        "note": "",
    }
    if not np.any(d != 0):
        out["note"] = "no pairs" if len(d) == 0 else "all differences zero"
        return out
    res = sps.wilcoxon(x, y)
    out.update({"W": float(res.statistic), "p_wilcoxon": float(res.pvalue)})
    return out


def paired_t(x: Sequence[float], y: Sequence[float]) -> dict:
    """Paired t test (scipy ``ttest_rel``); NaN when fewer than 2 pairs or constant differences."""
    x, y = _paired(x, y)
    d = x - y
    if len(d) < 2 or np.ptp(d) == 0:
        return {"t": math.nan, "df": max(len(d) - 1, 0), "p_t": math.nan}
    res = sps.ttest_rel(x, y)
    return {"t": float(res.statistic), "df": len(d) - 1, "p_t": float(res.pvalue)}


def cohens_d_paired(x: Sequence[float], y: Sequence[float]) -> float:
    x, y = _paired(x, y)
    d = x - y
    if len(d) < 2:
        return math.nan
    sd = d.std(ddof=1)
    return float(d.mean() / sd) if sd > 0 else math.nan


def compare(x: Sequence[float], y: Sequence[float]) -> dict:
    """Wilcoxon, paired t and Cohen's d of one paired contrast."""
    return {**wilcoxon(x, y), **paired_t(x, y), "d": cohens_d_paired(x, y)}


def one_sample(x: Sequence[float], mu: float) -> dict:
    """One-sample t test and Wilcoxon signed-rank test of x against ``mu``."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    w = wilcoxon(x, np.full(len(x), mu))
    t = (
        {"t": math.nan, "df": max(len(x) - 1, 0), "p_t": math.nan}
        if len(x) < 2 or np.ptp(x) == 0
        else {"t": float((r := sps.ttest_1samp(x, mu)).statistic), "df": len(x) - 1, "p_t": float(r.pvalue)}
    )
    return {**w, **t}


def friedman(matrix: np.ndarray | pd.DataFrame) -> dict:
    """Friedman test over the columns (conditions) of a subjects x conditions matrix; subjects
    with a NaN are dropped."""
    m = np.asarray(matrix, dtype=float)
    m = m[np.all(np.isfinite(m), axis=1)] if m.ndim == 2 else m
    n, k = m.shape if m.ndim == 2 else (0, 0)
    out = {
        "test": "Friedman",
        "n": n,
        "k": k,
        "statistic": math.nan,
        "df": max(k - 1, 0),
        "p": math.nan,
        "note": "",
    }
    if k < 3:
        out["note"] = "needs at least 3 conditions"
    elif n < 2:
        out["note"] = "needs at least 2 complete subjects"
    elif np.all(np.ptp(m, axis=1) == 0):
        out["note"] = "every subject is constant across conditions"
    else:
        res = sps.friedmanchisquare(*m.T)
        out.update({"statistic": float(res.statistic), "p": float(res.pvalue)})
    return out


def rm_anova(data: pd.DataFrame, depvar: str, subject: str, within: Sequence[str]) -> pd.DataFrame:
    """Repeated-measures ANOVA (statsmodels ``AnovaRM``) over the factors in ``within`` that have
    at least 2 levels; subjects lacking a cell are dropped (the design must be balanced)."""
    within = [w for w in within if data[w].nunique() > 1]
    cols = ["effect", "F", "num_df", "den_df", "p", "n", "note"]
    if not within:
        return pd.DataFrame(
            [
                {
                    "effect": "",
                    "F": math.nan,
                    "num_df": math.nan,
                    "den_df": math.nan,
                    "p": math.nan,
                    "n": data[subject].nunique(),
                    "note": "no factor with 2 or more levels",
                }
            ],
            columns=cols,
        )
    d = data[[subject, depvar, *within]].dropna()
    cells = d.groupby(within).ngroups
    complete = d.groupby(subject).size()
    d = d[d[subject].isin(complete[complete == cells].index)]
    n = d[subject].nunique()
    if n < 2:
        return pd.DataFrame(
            [
                {
                    "effect": ":".join(within),
                    "F": math.nan,
                    "num_df": math.nan,
                    "den_df": math.nan,
                    "p": math.nan,
                    "n": n,
                    "note": "needs at least 2 complete subjects",
                }
            ],
            columns=cols,
        )
    d = d.assign(**{w: d[w].astype(str) for w in within})
    # centred per subject, nothing varies: every F is 0/0 (statsmodels returns rounding noise)
    if np.allclose(d[depvar] - d.groupby(subject)[depvar].transform("mean"), 0):
        return pd.DataFrame(
            [
                {
                    "effect": ":".join(within),
                    "F": math.nan,
                    "num_df": math.nan,
                    "den_df": math.nan,
                    "p": math.nan,
                    "n": n,
                    "note": "no within-subject variation",
                }
            ],
            columns=cols,
        )
    table = AnovaRM(d, depvar, subject, within=list(within)).fit().anova_table
    rows = []
    for eff, r in table.iterrows():
        f = float(r["F Value"])
        ok = math.isfinite(f) and f >= 0
        rows.append(
            {
                "effect": eff,
                "F": f if ok else math.nan,
                "num_df": float(r["Num DF"]),
                "den_df": float(r["Den DF"]),
                "p": float(r["Pr > F"]) if ok else math.nan,
                "n": n,
                "note": "" if ok else "degenerate (zero error variance)",
            }
        )
    return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------------------------
# Analyses of one evaluator set


def _pj(acc: pd.DataFrame) -> pd.DataFrame:
    return acc[acc["method"] == PJ]


def _cell_name(model: str, demo_type: str, shots: int) -> str:
    return f"{model} | {demo_type} | {int(shots)}-shot"


def factor_tests(acc: pd.DataFrame, metric: str = "accuracy") -> pd.DataFrame:
    """Omnibus Friedman over all PersonaJudge cells, Friedman per factor (per-evaluator marginal
    means over the other factors), and the repeated-measures ANOVA over the factorial design."""
    pj = _pj(acc)
    rows = []
    wide = pj.pivot_table(index="evaluator", columns=["model", "demo_type", "shots"], values=metric)
    rows.append({"family": "omnibus", "factor": "cells", **friedman(wide.to_numpy())})
    for f in FACTORS:
        marg = pj.groupby(["evaluator", f])[metric].mean().unstack(f)
        rows.append({"family": "factor", "factor": f, **friedman(marg.to_numpy())})
    anova = rm_anova(pj, metric, "evaluator", list(FACTORS))
    for _, r in anova.iterrows():
        rows.append(
            {
                "family": "rm_anova",
                "factor": r["effect"],
                "test": "RM-ANOVA",
                "n": r["n"],
                "k": math.nan,
                "statistic": r["F"],
                "df": r["num_df"],
                "den_df": r["den_df"],
                "p": r["p"],
                "note": r["note"],
            }
        )
    return pd.DataFrame(rows)


def pairwise_tests(acc: pd.DataFrame, metric: str = "accuracy") -> pd.DataFrame:
    """Within each factor, every pair of levels (per-evaluator marginal means): Wilcoxon with
    Holm over the factor's pairs, paired t, Cohen's d."""
    pj = _pj(acc)
    parts = []
    for f in FACTORS:
        marg = pj.groupby(["evaluator", f])[metric].mean().unstack(f)
        rows = [
            {"factor": f, "level_x": str(a), "level_y": str(b), **compare(marg[a], marg[b])}
            for a, b in itertools.combinations(marg.columns, 2)
        ]
        if rows:
            t = pd.DataFrame(rows)
            t["p_holm"] = adjust_pvalues(t["p_wilcoxon"], "holm")
            parts.append(t)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def versus_base(acc: pd.DataFrame, metric: str = "accuracy", alpha: float = 0.05) -> pd.DataFrame:
    """Every PersonaJudge cell against its model's Base Judge: Wilcoxon, paired t, d; Holm and
    Benjamini-Hochberg over all cells."""
    base = acc[acc["method"] == BASE_JUDGE]
    rows = []
    for (model, dt, shots), g in _pj(acc).groupby(["model", "demo_type", "shots"], sort=True):
        b = base[base["model"] == model].set_index("evaluator")[metric]
        x = g.set_index("evaluator")[metric]
        ev = sorted(set(x.index) & set(b.index))
        rows.append(
            {"model": model, "demo_type": dt, "shots": int(shots), **compare(x.reindex(ev), b.reindex(ev))}
        )
    out = pd.DataFrame(rows)
    if len(out):
        out["p_holm"] = adjust_pvalues(out["p_wilcoxon"], "holm")
        out["p_bh"] = adjust_pvalues(out["p_wilcoxon"], "fdr_bh")
        out["significant_bh"] = out["p_bh"] < alpha
    return out


def all_pairs(acc: pd.DataFrame, metric: str = "accuracy", alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of PersonaJudge cells (Wilcoxon), with Holm and Benjamini-Hochberg over the
    whole family (section 14.4: 2,016 pairs for 64 cells)."""
    wide = _pj(acc).pivot_table(index="evaluator", columns=["model", "demo_type", "shots"], values=metric)
    rows = []
    for a, b in itertools.combinations(wide.columns, 2):
        rows.append({"cell_x": _cell_name(*a), "cell_y": _cell_name(*b), **wilcoxon(wide[a], wide[b])})
    out = pd.DataFrame(
        rows, columns=["cell_x", "cell_y", "n", "mean_x", "mean_y", "delta", "W", "p_wilcoxon", "note"]
    )
    out["p_holm"] = adjust_pvalues(out["p_wilcoxon"], "holm")
    out["p_bh"] = adjust_pvalues(out["p_wilcoxon"], "fdr_bh")
    out["significant_holm"] = out["p_holm"] < alpha
    out["significant_bh"] = out["p_bh"] < alpha
    return out


def alignment_tests(acc: pd.DataFrame, acc_eligible: pd.DataFrame, metric: str = "accuracy") -> pd.DataFrame:
    """PersonaJudge (per evaluator, the mean over its cells) against chance (one-sample tests on
    all validation items) and against every baseline and reference predictor (paired tests on the
    consensus-eligible items, where all predictors are scored on the same pairs)."""
    rows = []
    pj_all = _pj(acc).groupby("evaluator")[metric].mean()
    rows.append(
        {
            "contrast": "PersonaJudge vs chance (1/3)",
            "items": "validation",
            **one_sample(pj_all.to_numpy(), CHANCE),
        }
    )
    pj = _pj(acc_eligible).groupby("evaluator")[metric].mean()
    others = acc_eligible[acc_eligible["method"] != PJ]
    for (method, model), g in others.groupby(["method", "model"], sort=True):
        y = g.groupby("evaluator")[metric].mean()
        ev = sorted(set(pj.index) & set(y.index))
        name = method if model in ("", "-") else f"{method} ({model})"
        rows.append(
            {
                "contrast": f"PersonaJudge vs {name}",
                "items": "consensus-eligible",
                **compare(pj.reindex(ev), y.reindex(ev)),
            }
        )
    return pd.DataFrame(rows)


def control_tests(control: pd.DataFrame) -> pd.DataFrame:
    """PersonaJudge vs the cross-evaluator control on the matched items (section 14.5): overall
    (per evaluator, the mean over cells) and per level of each factor; with the number of
    evaluators for whom PersonaJudge is ahead."""
    rows = []
    groups = [("all", "all", control)] + [
        (f, str(lv), g) for f in FACTORS for lv, g in control.groupby(f, sort=True)
    ]
    for f, lv, g in groups:
        per = g.groupby("evaluator")[["own_accuracy", "control_accuracy"]].mean()
        res = compare(per["own_accuracy"], per["control_accuracy"])
        rows.append(
            {
                "factor": f,
                "level": lv,
                **res,
                "evaluators_ahead": int((per["own_accuracy"] > per["control_accuracy"]).sum()),
                "evaluators": len(per),
            }
        )
    return pd.DataFrame(rows)
