"""Significance analyses of the evaluator simulation (PersonaJudge, section 14), at two units of
analysis, built from the shared tests of :mod:`judgelab.analysis.stats` (Wilcoxon, paired t,
Friedman, RM-ANOVA, the stratified permutation, McNemar and uniform-guess tests, what a row can
say); this module holds how the study applies them.

**Evaluator level** (the paper's): every evaluator contributes one accuracy per condition and
every comparison is paired across evaluators. Non-parametric tests are primary (Wilcoxon
signed-rank for paired contrasts, Friedman for omnibus), corroborated by paired / one-sample t
tests and a repeated-measures ANOVA (statsmodels ``AnovaRM``). Effect size: Cohen's d for paired
data (mean difference / SD of the differences).

**Item level** (beside it, for data with few evaluators: PandaLM has 3, the paper 21): the unit
is one validation judgment (evaluator, item), each evaluator a stratum, and the statistic the
same evaluator-level mean the paper compares (each evaluator weighs 1/E, each of its n_e items
1/(E n_e)):

* paired contrast - a **stratified paired permutation test**: under the null the two conditions
  are exchangeable on every cluster (below), so each cluster's differences keep or flip their
  sign together; exact (all 2^m sign patterns of the m clusters whose difference is not 0) for
  m <= :data:`judgelab.analysis.stats.EXACT_MAX`, else ``permutations`` seeded random sign patterns, p = (1 + hits) /
  (1 + draws);
* two cells - also **McNemar's exact test** on the discordant judgments pooled over evaluators
  (statsmodels; for matched pairs the Mantel-Haenszel test stratified by evaluator is this same
  test);
* omnibus over k conditions - a **within-cluster permutation test**: each cluster's k values are
  permuted among the conditions; statistic the spread of the weighted condition means;
* against chance - a **simulation of uniform guesses** (the null: every guess uniform among the
  three labels, one guess per Base Judge item since its prompt is the same for every evaluator,
  one per judgment elsewhere); with one guess per judgment it is the binomial test.

The tests keep together what may depend on each other (``simulation.cluster_by``, default
``group``): every evaluator's judgment of an item and the items sharing a context (the split's
leakage group) flip or permute as one cluster, so their number - not the number of judgments -
bounds what a test can reject (the bundled sample's 10 validation items come from 5 contexts:
2 / 2^5 = 0.0625 > 0.05). McNemar takes every judgment as independent (its note says so).

The multiple-comparison corrections are the paper's, for each test separately: Holm within each
pairwise family, Holm and Benjamini-Hochberg over the configuration family
(:func:`judgelab.analysis.stats.adjust_pvalues`).

**What a test can say.** Every row carries its ``n`` and ``min_p``, the smallest p the test could
give on data of this size (exact Wilcoxon with n non-zero differences: 2 / 2^n, so 0.25 at
n = 3; the permutation test 2 / 2^m or 1 / (1 + draws); McNemar 2 / 2^m; Friedman chi-square at
perfect agreement; Holm's adjustment multiplies it by the family size). Where ``min_p`` is above
alpha, :func:`reading` - and every report table - says "cannot reject at n = ..." instead of a
p. A parametric p (t, RM-ANOVA; the correlations of :mod:`.metrics`) needs at least
:data:`judgelab.analysis.stats.MIN_POINTS` points: with fewer it rests on a normality nobody can check, and is not given.

Degenerate inputs (no pairs, all differences zero, a constant variable) give NaN with a
``note`` instead of a warning.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgelab.analysis.stats import (
    PERMUTATIONS,
    TEST_COLUMNS,
    _row,
    adjust_pvalues,
    block_permutation_test,
    compare,
    friedman,
    guess_test,
    mcnemar_test,
    one_sample,
    rm_anova,
    sign_flip_test,
    wilcoxon,
)
from judgelab.errors import InputError
from judgelab.studies.simulation.metrics import BASE_JUDGE, PJ

FACTORS = ("demo_type", "shots", "model")
CHANCE = 1.0 / 3.0
CELL_KEYS = ["model", "demo_type", "shots"]


# --------------------------------------------------------------------------------------------
# Evaluator level


# --------------------------------------------------------------------------------------------
# Item level


# --------------------------------------------------------------------------------------------
# Item scores


#: what the item-level permutation tests flip or permute together (``simulation.cluster_by``)
CLUSTERINGS = ("group", "item", "judgment")


def item_scores(long: pd.DataFrame, metric: str, cluster_by: str) -> pd.DataFrame:
    """Per prediction row (method, model, demo_type, shots, evaluator, item) whether it is right:
    1 or 0; a missing prediction is 0 under ``accuracy`` (every judgment) and NaN (not scored)
    under ``accuracy_answered``. ``cluster``: the unit the item-level tests keep together -
    ``group`` the item's leakage group (the split's ``group``: the items sharing a context, and
    every evaluator's judgment of them), ``item`` the item (every evaluator's judgment of it),
    ``judgment`` each (evaluator, item) alone. ``guess``: under the chance null, one guess per
    Base Judge cell and item (its prompt does not depend on the evaluator), one per judgment
    elsewhere."""
    if cluster_by not in CLUSTERINGS:
        raise InputError(
            f"unknown clustering {cluster_by!r}; known: {', '.join(CLUSTERINGS)}", key="simulation.cluster_by"
        )
    out = long[["method", *CELL_KEYS, "evaluator", "item"]].copy()
    answered = long["pred"].notna()
    correct = (answered & (long["pred"] == long["gold"])).astype(float)
    if metric == "accuracy_answered":
        correct[~answered] = np.nan
    out["correct"] = correct.to_numpy()
    out["gold"] = long["gold"].to_numpy()
    if "consensus" in long.columns:
        out["eligible"] = long["consensus"].notna().to_numpy()
    item = long["item"].astype(str)
    judgment = long["evaluator"].astype(str) + "|" + item
    if cluster_by == "group" and "group" in long.columns:
        out["cluster"] = long["group"].fillna(item).astype(str).to_numpy()
    elif cluster_by == "judgment":
        out["cluster"] = judgment.to_numpy()
    else:
        out["cluster"] = item.to_numpy()
    cell = long["method"].astype(str) + "|" + long["model"].astype(str) + "|" + long["demo_type"].astype(str)
    cell = cell + "|" + long["shots"].astype(str)
    out["guess"] = np.where(long["method"] == BASE_JUDGE, cell + "|" + item, cell + "|" + judgment)
    return out


def _item_wide(items: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Judgments (evaluator, item) x the ``columns`` groups: the mean correctness over the cells
    of a group (NaN-aware)."""
    return items.pivot_table(
        index=["evaluator", "item"], columns=list(columns), values="correct", aggfunc="mean"
    )


def _strata(wide: pd.DataFrame) -> np.ndarray:
    return wide.index.get_level_values("evaluator").to_numpy(dtype=object)


def clusters_of(items: pd.DataFrame | None) -> pd.Series | None:
    """(evaluator, item) -> its cluster (see :func:`item_scores`)."""
    if items is None or "cluster" not in items.columns:
        return None
    return items.drop_duplicates(["evaluator", "item"]).set_index(["evaluator", "item"])["cluster"]


def _of(clusters: pd.Series | None, index: pd.Index) -> np.ndarray | None:
    return None if clusters is None else clusters.reindex(index).to_numpy(dtype=object)


def _item_contrast(
    x: pd.Series,
    y: pd.Series,
    clusters: pd.Series | None = None,
    *,
    permutations: int,
    seed: int,
    mcnemar: bool = False,
) -> list[dict]:
    """Item-level rows of one paired contrast (two Series indexed by (evaluator, item))."""
    both = pd.concat([x.rename("x"), y.rename("y")], axis=1).dropna()
    strata = both.index.get_level_values("evaluator").to_numpy(dtype=object)
    ev_x = both["x"].groupby(level="evaluator").mean().mean() if len(both) else math.nan
    ev_y = both["y"].groupby(level="evaluator").mean().mean() if len(both) else math.nan
    rows = [
        sign_flip_test(
            (both["x"] - both["y"]).to_numpy(),
            strata,
            _of(clusters, both.index),
            permutations=permutations,
            seed=seed,
            mean_x=ev_x,
            mean_y=ev_y,
        )
    ]
    if mcnemar:
        rows.append(mcnemar_test(both["x"].to_numpy(), both["y"].to_numpy()))
    return rows


def _holm_bh(df: pd.DataFrame, keys: Sequence[str], alpha: float, bh: bool = True) -> pd.DataFrame:
    """Holm (and Benjamini-Hochberg) adjusted p within each family ``keys`` (+ test); the
    smallest adjusted p each test could reach: Holm m x min_p, BH min_p."""
    if not len(df):
        return df
    df = df.copy()
    df["p_holm"] = math.nan
    df["min_p_holm"] = math.nan
    if bh:
        df["p_bh"] = math.nan
    for pos in df.groupby(list(keys) + ["test"], sort=False).indices.values():
        idx = df.index[pos]
        p = df.loc[idx, "p"]
        m = int(p.notna().sum())
        df.loc[idx, "p_holm"] = adjust_pvalues(p, "holm")
        df.loc[idx, "min_p_holm"] = np.minimum(1.0, df.loc[idx, "min_p"] * max(m, 1))
        if bh:
            df.loc[idx, "p_bh"] = adjust_pvalues(p, "fdr_bh")
    df["significant_holm"] = df["p_holm"] < alpha
    if bh:
        df["significant_bh"] = df["p_bh"] < alpha
    return df


# --------------------------------------------------------------------------------------------
# Analyses of one evaluator set


def _pj(acc: pd.DataFrame) -> pd.DataFrame:
    return acc[acc["method"] == PJ]


def _cell_name(model: str, demo_type: str, shots: int) -> str:
    return f"{model} | {demo_type} | {int(shots)}-shot"


def _levels(values) -> list:
    return sorted(values, key=lambda v: (not isinstance(v, (int, np.integer)), v))


def factor_tests(
    acc: pd.DataFrame,
    items: pd.DataFrame | None = None,
    *,
    metric: str,
    permutations: int = PERMUTATIONS,
    seed: int,
) -> pd.DataFrame:
    """Omnibus over all PersonaJudge cells and per factor (per-evaluator marginal means over the
    other factors): Friedman at the evaluator level, the within-judgment permutation test at the
    item level; the repeated-measures ANOVA over the factorial design."""
    pj = _pj(acc)
    pji = items[items["method"] == PJ] if items is not None else None
    cl = clusters_of(items)
    rows = []
    wide = pj.pivot_table(index="evaluator", columns=CELL_KEYS, values=metric)
    rows.append({"family": "omnibus", "factor": "cells", **friedman(wide.to_numpy())})
    if pji is not None and len(pji):
        w = _item_wide(pji, CELL_KEYS)
        rows.append(
            {
                "family": "omnibus",
                "factor": "cells",
                **block_permutation_test(
                    w.to_numpy(), _strata(w), _of(cl, w.index), permutations=permutations, seed=seed
                ),
            }
        )
    for f in FACTORS:
        marg = pj.groupby(["evaluator", f])[metric].mean().unstack(f)
        rows.append({"family": "factor", "factor": f, **friedman(marg.to_numpy())})
        if pji is not None and len(pji):
            w = _item_wide(pji, [f])
            rows.append(
                {
                    "family": "factor",
                    "factor": f,
                    **block_permutation_test(
                        w.to_numpy(), _strata(w), _of(cl, w.index), permutations=permutations, seed=seed
                    ),
                }
            )
    anova = rm_anova(pj, metric, "evaluator", list(FACTORS))
    for _, r in anova.iterrows():
        rows.append(
            {
                "family": "rm_anova",
                "factor": r["effect"],
                **_row(
                    "evaluator",
                    "RM-ANOVA",
                    n=r["n"],
                    statistic=r["F"],
                    df=r["num_df"],
                    p=r["p"],
                    min_p=r["min_p"],
                    note=r["note"],
                ),
                "den_df": r["den_df"],
            }
        )
    return pd.DataFrame(rows)


def pairwise_tests(
    acc: pd.DataFrame,
    items: pd.DataFrame | None = None,
    *,
    metric: str,
    alpha: float,
    permutations: int = PERMUTATIONS,
    seed: int,
) -> pd.DataFrame:
    """Within each factor, every pair of levels (marginal means over the other factors):
    Wilcoxon and paired t over evaluators, the stratified permutation test over judgments; Holm
    over the factor's pairs, per test."""
    pj = _pj(acc)
    pji = items[items["method"] == PJ] if items is not None else None
    rows = []
    for f in FACTORS:
        marg = pj.groupby(["evaluator", f])[metric].mean().unstack(f)
        wide = _item_wide(pji, [f]) if pji is not None and len(pji) else None
        for a, b in itertools.combinations(_levels(marg.columns), 2):
            key = {"factor": f, "level_x": str(a), "level_y": str(b)}
            rows += [{**key, **r} for r in compare(marg[a], marg[b])]
            if wide is not None:
                rows += [
                    {**key, **r}
                    for r in _item_contrast(
                        wide[a], wide[b], clusters_of(items), permutations=permutations, seed=seed
                    )
                ]
    return _holm_bh(pd.DataFrame(rows), ["factor"], alpha, bh=False) if rows else pd.DataFrame()


def versus_base(
    acc: pd.DataFrame,
    items: pd.DataFrame | None = None,
    *,
    metric: str,
    alpha: float,
    permutations: int = PERMUTATIONS,
    seed: int,
) -> pd.DataFrame:
    """Every PersonaJudge cell against its model's Base Judge: Wilcoxon, paired t and d over
    evaluators; the stratified permutation test and McNemar over judgments; Holm and
    Benjamini-Hochberg over all cells, per test."""
    base = acc[acc["method"] == BASE_JUDGE]
    rows = []
    base_items = items[items["method"] == BASE_JUDGE] if items is not None else None
    pj_items = items[items["method"] == PJ] if items is not None else None
    for (model, dt, shots), g in _pj(acc).groupby(CELL_KEYS, sort=True):
        b = base[base["model"] == model].set_index("evaluator")[metric]
        x = g.set_index("evaluator")[metric]
        ev = sorted(set(x.index) & set(b.index))
        key = {"model": model, "demo_type": dt, "shots": int(shots)}
        rows += [{**key, **r} for r in compare(x.reindex(ev), b.reindex(ev))]
        if items is not None:
            assert pj_items is not None and base_items is not None  # both set when items is given
            xi = pj_items[
                (pj_items["model"] == model) & (pj_items["demo_type"] == dt) & (pj_items["shots"] == shots)
            ].set_index(["evaluator", "item"])["correct"]
            bi = base_items[base_items["model"] == model].set_index(["evaluator", "item"])["correct"]
            rows += [
                {**key, **r}
                for r in _item_contrast(
                    xi, bi, clusters_of(items), permutations=permutations, seed=seed, mcnemar=True
                )
            ]
    return _holm_bh(pd.DataFrame(rows), [], alpha) if rows else pd.DataFrame()


def all_pairs(
    acc: pd.DataFrame, items: pd.DataFrame | None = None, *, metric: str, alpha: float
) -> pd.DataFrame:
    """Every pair of PersonaJudge cells (section 14.4: 2,016 pairs for 64 cells): Wilcoxon over
    evaluators and McNemar over judgments, Holm and Benjamini-Hochberg over the whole family,
    per test."""
    wide = _pj(acc).pivot_table(index="evaluator", columns=CELL_KEYS, values=metric)
    iw = _item_wide(items[items["method"] == PJ], CELL_KEYS) if items is not None else None
    rows = []
    for a, b in itertools.combinations(wide.columns, 2):
        key = {"cell_x": _cell_name(*a), "cell_y": _cell_name(*b)}
        rows.append({**key, **wilcoxon(wide[a], wide[b])})
        if iw is not None:
            rows.append({**key, **mcnemar_test(iw[a].to_numpy(), iw[b].to_numpy())})
    cols = ["cell_x", "cell_y", *TEST_COLUMNS]
    out = pd.DataFrame(rows, columns=cols) if rows else pd.DataFrame(columns=cols)
    return _holm_bh(out, [], alpha)


def _levels_of(df: pd.DataFrame) -> list[tuple[str, str, pd.Series]]:
    """("all", "all", every row) and (factor, level, rows of that level) for every factor."""
    out = [("all", "all", pd.Series(True, index=df.index))]
    for f in FACTORS:
        for lv in _levels(df[f].unique()):
            out.append((f, str(lv), df[f] == lv))
    return out


def chance_tests(
    acc: pd.DataFrame,
    items: pd.DataFrame | None = None,
    *,
    metric: str,
    alpha: float,
    permutations: int = PERMUTATIONS,
    seed: int,
) -> pd.DataFrame:
    """PersonaJudge against chance (1/3) overall and at every level of every factor (section
    14.1: "in both tasks and at every factor level"), and each model's Base Judge: Wilcoxon and
    one-sample t over evaluators (each evaluator's mean over the cells), and over the judgments
    the uniform-guess simulation (:func:`guess_test`; one guess per Base Judge item)."""
    rows = []
    pj = _pj(acc)
    pji = items[items["method"] == PJ] if items is not None else None

    def guesses(sel: pd.DataFrame) -> dict:
        return guess_test(
            sel["correct"].to_numpy(),
            sel["gold"].to_numpy(),
            sel["evaluator"].to_numpy(),
            sel["guess"].to_numpy(),
            draws=permutations,
            seed=seed,
            p0=CHANCE,
        )

    for f, lv, mask in _levels_of(pj):
        per = pj[mask].groupby("evaluator")[metric].mean()
        key = {"method": PJ, "factor": f, "level": lv}
        rows += [{**key, **r} for r in one_sample(per.to_numpy(), CHANCE)]
        if pji is not None:
            rows.append({**key, **guesses(pji if f == "all" else pji[pji[f].astype(str) == lv])})
    base = acc[acc["method"] == BASE_JUDGE]
    for model, g in base.groupby("model", sort=True):
        key = {"method": BASE_JUDGE, "factor": "model", "level": model}
        rows += [{**key, **r} for r in one_sample(g.groupby("evaluator")[metric].mean().to_numpy(), CHANCE)]
        if items is not None:
            rows.append(
                {**key, **guesses(items[(items["method"] == BASE_JUDGE) & (items["model"] == model)])}
            )
    return pd.DataFrame(rows)


def alignment_tests(
    acc: pd.DataFrame,
    acc_eligible: pd.DataFrame,
    items: pd.DataFrame | None = None,
    *,
    metric: str,
    permutations: int = PERMUTATIONS,
    seed: int,
) -> pd.DataFrame:
    """PersonaJudge (per evaluator, the mean over its cells) against every baseline and reference
    predictor on the consensus-eligible items, where all predictors are scored on the same pairs
    (section 14.1): Wilcoxon and paired t over evaluators, the stratified permutation test over
    judgments. Random Selection is tested as chance (:func:`chance_tests`), not as one draw."""
    rows = []
    pj = _pj(acc_eligible).groupby("evaluator")[metric].mean()
    others = acc_eligible[~acc_eligible["method"].isin([PJ, "random"])]
    elig = items[items["eligible"].astype(bool)] if items is not None else None
    pj_items = (
        elig[elig["method"] == PJ].groupby(["evaluator", "item"])["correct"].mean()
        if elig is not None
        else None
    )
    for (method, model), g in others.groupby(["method", "model"], sort=True):
        y = g.groupby("evaluator")[metric].mean()
        ev = sorted(set(pj.index) & set(y.index))
        name = method if model in ("", "-") else f"{method} ({model})"
        key = {"contrast": f"PersonaJudge vs {name}", "items": "consensus-eligible"}
        rows += [{**key, **r} for r in compare(pj.reindex(ev), y.reindex(ev))]
        if elig is not None:
            yi = (
                elig[(elig["method"] == method) & (elig["model"] == model)]
                .groupby(["evaluator", "item"])["correct"]
                .mean()
            )
            rows += [
                {**key, **r}
                for r in _item_contrast(
                    pj_items, yi, clusters_of(items), permutations=permutations, seed=seed
                )
            ]
    return pd.DataFrame(rows)


def control_tests(
    control: pd.DataFrame,
    control_items: pd.DataFrame | None = None,
    clusters: pd.Series | None = None,
    *,
    permutations: int = PERMUTATIONS,
    seed: int,
) -> pd.DataFrame:
    """PersonaJudge vs the cross-evaluator control on the matched items (section 14.5): overall
    (per evaluator, the mean over cells) and per level of each factor - Wilcoxon and paired t
    over evaluators, the stratified permutation test over the matched judgments (own correctness
    minus the control's; ``clusters``: (evaluator, item) -> cluster, see :func:`item_scores`);
    with the number of evaluators for whom PersonaJudge is ahead."""
    rows = []
    for f, lv, mask in _levels_of(control):
        g = control[mask]
        per = g.groupby("evaluator")[["own_accuracy", "control_accuracy"]].mean()
        key = {
            "factor": f,
            "level": lv,
            "evaluators_ahead": int((per["own_accuracy"] > per["control_accuracy"]).sum()),
            "evaluators": len(per),
        }
        rows += [{**key, **r} for r in compare(per["own_accuracy"], per["control_accuracy"])]
        if control_items is not None and len(control_items):
            ci = control_items if f == "all" else control_items[control_items[f].astype(str) == lv]
            per_item = ci.groupby(["evaluator", "item"])[["own_correct", "control_accuracy"]].mean()
            rows += [
                {**key, **r}
                for r in _item_contrast(
                    per_item["own_correct"],
                    per_item["control_accuracy"],
                    clusters,
                    permutations=permutations,
                    seed=seed,
                )
            ]
    return pd.DataFrame(rows)


def improvements(versus: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The count of configurations that improve on their model's Base Judge (section 5.1.1: "43 of
    64 combinations improve"), overall and per demonstration type, model and shot count, with
    the misses that involve telemetry; and how many survive Benjamini-Hochberg per test
    (section 14.4)."""
    if not len(versus):
        return pd.DataFrame()
    cells = versus[versus["test"] == "Wilcoxon signed-rank"].drop_duplicates(CELL_KEYS)
    rows = []
    groups = [("all", "all", cells)] + [
        (f, str(lv), cells[cells[f] == lv]) for f in FACTORS for lv in _levels(cells[f].unique())
    ]
    for f, lv, g in groups:
        better = g["delta"] > 0
        worse = g["delta"] <= 0
        row = {
            "factor": f,
            "level": lv,
            "configurations": len(g),
            "improve": int(better.sum()),
            "do_not_improve": int(worse.sum()),
            "misses_with_telemetry": int((worse & g["demo_type"].str.contains("IT")).sum()),
        }
        for test, name in (
            ("Wilcoxon signed-rank", "wilcoxon"),
            ("stratified permutation", "permutation"),
            ("McNemar exact", "mcnemar"),
        ):
            t = versus[versus["test"] == test].merge(g[CELL_KEYS], on=CELL_KEYS)
            row[f"bh_significant_{name}"] = int((t["p_bh"] < alpha).sum()) if len(t) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)
