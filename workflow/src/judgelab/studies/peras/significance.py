"""Persona vs default: paired bootstrap over queries, with Holm's adjustment.

For one dataset x model x template and each persona P other than the reference (``default``),
the statistic is delta = metric(P) - metric(default) for Cohen's kappa, QWK, macro F1 and Sakai's
HMR, each judge's metric computed exactly as in the metrics table (agreement over the pairs whose
label parsed, HMR over the pairs whose label and confidence parsed), so the observed delta is the
difference of the two rows of ``metrics.tsv``.

Bootstrap: the queries are resampled with replacement (``n_boot`` times, one seeded generator,
the same resamples for every persona and metric), a query bringing all its pairs for both judges,
so the pairing and the within-query correlation are kept. Every metric is a function of per-query
sums (the 4x4 confusion matrix; for HMR the number and confidence mass of correct and incorrect
pairs), so a resample costs one matrix product.

* 95% interval: percentile interval of the resampled deltas (``alpha`` configurable).
* p-value: two-sided test of delta = 0 on the null-shifted bootstrap distribution (Efron and
  Tibshirani 1993, section 16.4; the unstudentised form of Sakai's paired bootstrap test):
  ``p = (1 + #{|d* - d| >= |d|}) / (1 + B)``, B the resamples where delta is defined.
* Holm: within each dataset x model x template x metric, over the personas compared with the
  reference (a family of 10 for PERAS); undefined p-values are left out of the family.

Support: every comparison is made twice (:func:`by_support`, column ``support``): on each
persona's parsed pairs (``parsed``, the published reading: the two judges of a comparison may be
scored on different pairs) and on the common support (``common``: the pairs every persona of the
dataset x model x template answered, the same pairs for every judge, as the metrics table's
``common_*`` columns), each with its own Holm family.

Resamples where a metric is undefined (e.g. kappa with a single label) are left out of that
metric's interval and p-value; ``n_valid`` counts the ones used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab.analysis import render
from judgelab.analysis.agreement import kappa_from_confusion, macro_f1_from_confusion
from judgelab.analysis.bootstrap import percentile_interval, resample_counts
from judgelab.analysis.stats import adjust_pvalues
from judgelab.data.labels import GRADES
from judgelab.studies.peras.metrics import calibration_from_sums

METRICS = ["kappa", "qwk", "macro_f1", "HMR"]
K = len(GRADES)


# --------------------------------------------------------------------------------------------
# Metrics from sufficient statistics (vectorised over resamples)


def query_stats(pairs: pd.DataFrame, qids: Sequence[str]) -> np.ndarray:
    """Per query (in ``qids`` order) the additive statistics of one judge: 16 confusion counts
    (parsed labels), then n_neg, O, n_pos, U (pairs with label and confidence). ``pairs`` has
    qid, grade, label (nullable), confidence (nullable, 0-100)."""
    pos = {q: i for i, q in enumerate(qids)}
    out = np.zeros((len(qids), K * K + 4))
    parsed = pairs[pairs["label"].notna()]
    qi = parsed["qid"].map(pos).to_numpy(dtype=int)
    g = parsed["grade"].to_numpy(dtype=int)
    lab = parsed["label"].to_numpy(dtype=int)
    np.add.at(out, (qi, g * K + lab), 1.0)
    conf = parsed[parsed["confidence"].notna()]
    qi = conf["qid"].map(pos).to_numpy(dtype=int)
    correct = conf["label"].to_numpy(dtype=int) == conf["grade"].to_numpy(dtype=int)
    p = conf["confidence"].to_numpy(dtype=float) / 100.0
    np.add.at(out[:, K * K + 0], qi[~correct], 1.0)
    np.add.at(out[:, K * K + 1], qi[~correct], p[~correct])
    np.add.at(out[:, K * K + 2], qi[correct], 1.0)
    np.add.at(out[:, K * K + 3], qi[correct], 1.0 - p[correct])
    return out


def metrics_from_stats(stats: np.ndarray) -> dict[str, np.ndarray]:
    """kappa, qwk, macro_f1, HMR from summed statistics ``(..., 20)``."""
    cm = stats[..., : K * K].reshape(stats.shape[:-1] + (K, K))
    c = stats[..., K * K :]
    return {
        "kappa": kappa_from_confusion(cm),
        "qwk": kappa_from_confusion(cm, "quadratic"),
        "macro_f1": macro_f1_from_confusion(cm),
        "HMR": calibration_from_sums(c[..., 0], c[..., 1], c[..., 2], c[..., 3])["HMR"],
    }


# --------------------------------------------------------------------------------------------
# Bootstrap and Holm


def paired_bootstrap(
    stats_a: np.ndarray, stats_b: np.ndarray, counts: np.ndarray, alpha: float
) -> pd.DataFrame:
    """delta = metric(a) - metric(b) with percentile interval and shifted-null p-value, per metric;
    ``stats_*`` are :func:`query_stats` of the two judges on the same queries."""
    obs_a, obs_b = metrics_from_stats(stats_a.sum(axis=0)), metrics_from_stats(stats_b.sum(axis=0))
    boot_a, boot_b = metrics_from_stats(counts @ stats_a), metrics_from_stats(counts @ stats_b)
    rows = []
    for m in METRICS:
        d = float(obs_a[m] - obs_b[m])
        db = boot_a[m] - boot_b[m]
        db = db[np.isfinite(db)]
        row = {
            "metric": m,
            "value": float(obs_a[m]),
            "reference_value": float(obs_b[m]),
            "delta": d,
            "ci_low": math.nan,
            "ci_high": math.nan,
            "p": math.nan,
            "n_valid": int(len(db)),
        }
        if len(db) and math.isfinite(d):
            row["ci_low"], row["ci_high"] = percentile_interval(db, alpha)
            row["p"] = float((1 + np.sum(np.abs(db - d) >= abs(d) - 1e-12)) / (1 + len(db)))
        rows.append(row)
    return pd.DataFrame(rows)


def persona_vs_reference(
    pairs: pd.DataFrame,
    judged: Mapping[str, pd.DataFrame],
    *,
    reference: str = "default",
    n_boot: int,
    seed: int,
    alpha: float,
) -> pd.DataFrame:
    """The significance table of one dataset x model x template.

    ``pairs``: qid, docid, grade of the dataset; ``judged``: persona -> table with qid, docid,
    label, confidence. One row per persona x metric (reference excluded): value, reference_value,
    delta, ci_low, ci_high, p, p_holm, significant, n_queries, n_boot, n_valid."""
    if reference not in judged:
        raise ValueError(f"reference persona {reference!r} has no judgments")
    base = pairs[["qid", "docid", "grade"]]
    qids = sorted(base["qid"].unique())
    counts = resample_counts(len(qids), n_boot, seed)

    def stats(p):
        merged = base.merge(
            judged[p][["qid", "docid", "label", "confidence"]],
            on=["qid", "docid"],
            how="left",
            validate="one_to_one",
        )
        return query_stats(merged, qids)

    ref = stats(reference)
    parts = []
    for p in judged:
        if p == reference:
            continue
        res = paired_bootstrap(stats(p), ref, counts, alpha)
        res.insert(0, "persona", p)
        parts.append(res)
    cols = [
        "persona",
        "metric",
        "value",
        "reference_value",
        "delta",
        "ci_low",
        "ci_high",
        "p",
        "p_holm",
        "significant",
        "reference",
        "n_queries",
        "n_boot",
        "n_valid",
    ]
    if not parts:
        return pd.DataFrame(columns=cols)
    out = pd.concat(parts, ignore_index=True)
    out["p_holm"] = np.nan
    for _m, idx in out.groupby("metric").groups.items():
        out.loc[idx, "p_holm"] = adjust_pvalues(out.loc[idx, "p"].to_numpy(), "holm")
    out["significant"] = out["p_holm"] < alpha
    out["reference"], out["n_queries"], out["n_boot"] = reference, len(qids), n_boot
    return out[cols]


#: The pairs a comparison is computed on: each persona's parsed pairs (the published reading), or
#: the common support (the pairs every persona of the dataset x model x template answered).
SUPPORTS = ("parsed", "common")


def by_support(
    pairs: pd.DataFrame,
    judged: Mapping[str, pd.DataFrame],
    *,
    reference: str = "default",
    n_boot: int,
    seed: int,
    alpha: float,
) -> pd.DataFrame:
    """:func:`persona_vs_reference` on each persona's parsed pairs and on the common support
    (every judge's table cut to the pairs whose label parsed for all personas), one table with a
    ``support`` column (:data:`SUPPORTS`); the same seed, so the same query resamples, and Holm
    within each support."""
    from judgelab.studies.peras.metrics import common_support

    keys = ["qid", "docid"]
    common = common_support(list(judged.values()), keys)
    on_common = {p: t.merge(common, on=keys, how="inner") for p, t in judged.items()}
    parts = []
    for support, tables in (("parsed", judged), ("common", on_common)):
        res = persona_vs_reference(pairs, tables, reference=reference, n_boot=n_boot, seed=seed, alpha=alpha)
        res["support"] = support
        parts.append(res)
    return pd.concat(parts, ignore_index=True)


def join_metrics(metrics: pd.DataFrame, significance: pd.DataFrame) -> pd.DataFrame:
    """``metrics.tsv`` with, per tested metric, the delta to the reference persona, its interval,
    the Holm-adjusted p-value and a ``*`` marker column (``<metric>_sig``); the comparisons on the
    common support (``support`` common) beside them as ``common_<metric>_<stat>``."""
    keys = ["dataset", "model", "template", "persona"]
    if significance.empty:
        return metrics.copy()
    support = (
        significance["support"]
        if "support" in significance
        else pd.Series("parsed", index=significance.index)
    )
    out = metrics.copy()
    for name, prefix in (("parsed", ""), ("common", "common_")):
        part = significance[support == name]
        if part.empty:
            continue
        sig = part.assign(sig=np.where(part["significant"].astype(bool), "*", ""))
        wide = sig.pivot(index=keys, columns="metric", values=["delta", "ci_low", "ci_high", "p_holm", "sig"])
        wide.columns = [f"{prefix}{m}_{stat}" for stat, m in wide.columns]
        order = [
            f"{prefix}{m}_{stat}" for m in METRICS for stat in ("delta", "ci_low", "ci_high", "p_holm", "sig")
        ]
        wide = wide[[c for c in order if c in wide.columns]]
        out = out.merge(wide.reset_index(), on=keys, how="left")
    return out


def render_html(joined: pd.DataFrame) -> str:
    """The metrics table for the report: one row per job, values to 3 decimals; a tested metric
    shows its delta to the reference persona and ``*`` when the Holm-adjusted p is below alpha."""
    keys = ["dataset", "model", "template", "persona", "coverage"]
    shown = ["kappa", "qwk", "macro_f1", "alpha", "RO", "RU", "HMR"]
    df = joined[[c for c in keys if c in joined]].copy()
    if "coverage" in df:
        df["coverage"] = df["coverage"].map(lambda v: render.fmt(v, 2))
    for m in shown:
        if m not in joined:
            continue

        def cell(r, m=m):
            v = r[m]
            txt = render.fmt(v)
            d = r.get(f"{m}_delta")
            if d is not None and not pd.isna(d):
                txt += f" ({d:+.3f}{r.get(f'{m}_sig') or ''})"
            return txt

        df[m] = joined.apply(cell, axis=1)
    return render.html_table(
        df,
        "Metrics per job. In brackets: difference to the reference persona; * = significant "
        "after Holm's adjustment (paired bootstrap over queries).",
    )
