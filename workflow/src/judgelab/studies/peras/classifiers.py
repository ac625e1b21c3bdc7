"""Persona features -> supervised relevance classifiers (PERAS section 4.4, Experiment 2, RQ3).

For every pair of the held-out dataset the features are the label (0-3) and the confidence
(0-100) of each persona condition of one judge model x task template: 11 + 11 = 22 columns for
the PERAS set-up. The human grade is the target. Each of ``trials`` seeded trials draws a
stratified train split (``train_fraction`` of the pairs, 10% in the paper) and tests on the rest;
every classifier and every single persona are scored on the same test pairs with Cohen's kappa,
QWK and macro F1 (:func:`judgelab.analysis.agreement.agreement`); the summary reports mean and SD over trials.

Classifiers (PERAS section 5.2.2): Random Forest (200 trees, max depth 6, bootstrap with
``max_samples=0.81``), XGBoost and LightGBM (200 estimators, max depth 5, learning rate 0.05,
row subsample 0.81; LightGBM needs ``subsample_freq=1`` for the subsample to act), ordinal
logistic regression (statsmodels ``OrderedModel``, logit link), and the RF ablation without the
confidence features. Every other hyper-parameter is the library default; the config can change
them all.

**Missing features.** An unparsable label, or a confidence that was not asked (label missing)
or did not parse, is not dropped: the feature takes the sentinel value ``-1`` (outside both
ranges) and a 0/1 indicator column ``miss_label_<persona>`` / ``miss_conf_<persona>`` is added.
Indicators are added only where they carry information: ``miss_label_<p>`` when persona ``p``
has at least one missing label in the dataset, ``miss_conf_<p>`` when ``p`` has a missing
confidence on a pair whose label parsed (otherwise it would repeat ``miss_label_<p>``). The set
of columns thus depends on the missingness pattern of the features only, never on the grades;
with every answer parsed it is exactly the 22 features of the paper. :func:`missing_summary`
counts them.

**Split.** Per grade g with n_g pairs, the train split takes about ``train_fraction * n_g``
pairs (largest-remainder rounding so the total is ``round(train_fraction * n)``), but at least
one pair of every grade present (so every classifier sees every grade) and at most ``n_g - 1``
(so every grade with two or more pairs is also tested). On a tiny sample the "at least one per
grade" rule makes the train split larger than ``train_fraction``; ``n_train`` is reported.

**Oracle.** A single persona used as the judge: its label on the test pairs. A missing label
there is replaced by the train split's most frequent grade (ties: the lowest), so the persona is
scored on the same test pairs as the classifiers; ``coverage`` in the per-trial table says how
many of its test labels parsed. Oracle = for each metric, the persona with the highest mean over
the trials (one persona per metric, as the cell colours of Table 5 say), reported with its SD.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from judgelab import schema
from judgelab.analysis import render
from judgelab.analysis.agreement import agreement
from judgelab.errors import InputError

log = logging.getLogger(__name__)

METRICS = ["kappa", "qwk", "macro_f1"]
SENTINEL = -1.0
KINDS = ("rf", "xgb", "lgbm", "ordinal")
FEATURE_SETS = ("all", "labels")

#: PERAS section 5.2.2, in the column order of its Table 5.
DEFAULT_CLASSIFIERS: dict[str, dict] = {
    "RF": {
        "kind": "rf",
        "features": "all",
        "params": {"n_estimators": 200, "max_depth": 6, "max_samples": 0.81},
    },
    "RF w/o conf.": {
        "kind": "rf",
        "features": "labels",
        "params": {"n_estimators": 200, "max_depth": 6, "max_samples": 0.81},
    },
    "XGB": {
        "kind": "xgb",
        "features": "all",
        "params": {"n_estimators": 200, "max_depth": 5, "learning_rate": 0.05, "subsample": 0.81},
    },
    "LGBM": {
        "kind": "lgbm",
        "features": "all",
        "params": {
            "n_estimators": 200,
            "max_depth": 5,
            "learning_rate": 0.05,
            "subsample": 0.81,
            "subsample_freq": 1,
        },
    },
    "Ord. Log.": {"kind": "ordinal", "features": "all", "params": {"maxiter": 200}},
}


@dataclass(frozen=True)
class ClassifierSpec:
    name: str
    kind: str
    features: str = schema.default_of("peras.classifier.models.<name>.features")
    params: dict = field(default_factory=dict)


def parse_specs(models: Mapping[str, Mapping] | None) -> list[ClassifierSpec]:
    """Classifier specs from the config (``classifier.models``); ``None`` gives the paper's five."""
    models = DEFAULT_CLASSIFIERS if models is None else models
    specs = []
    for name, m in models.items():
        # the kind and the feature set: the schema's (peras.classifier.models.<name>)
        kind, feats = m["kind"], m.get("features", schema.default("peras.classifier.models.<name>.features"))
        if name == "Oracle" or name.startswith("persona "):
            raise InputError(
                "this name is reserved for the single-persona baselines", key=f"classifier.models.{name}"
            )
        specs.append(ClassifierSpec(str(name), kind, feats, dict(m.get("params") or {})))
    return specs


# --------------------------------------------------------------------------------------------
# Features


def build_features(
    pairs: pd.DataFrame, judgments: Mapping[str, pd.DataFrame], confidence: Mapping[str, pd.DataFrame]
) -> pd.DataFrame:
    """One row per pair of ``pairs`` (qid, docid, grade) with ``label_<p>`` (nullable Int64) and
    ``conf_<p>`` (nullable Float64) per persona ``p`` of ``judgments`` (in its order). Missing
    stays missing here; :func:`design_matrix` applies the sentinel rule."""
    out = pairs[["qid", "docid", "grade"]].copy()
    out["grade"] = out["grade"].astype(int)
    for p, j in judgments.items():
        part = j[["qid", "docid", "label"]].rename(columns={"label": f"label_{p}"})
        n = len(out)
        out = out.merge(part, on=["qid", "docid"], how="left", validate="one_to_one")
        c = confidence.get(p)
        if c is not None:
            out = out.merge(
                c[["qid", "docid", "confidence"]].rename(columns={"confidence": f"conf_{p}"}),
                on=["qid", "docid"],
                how="left",
                validate="one_to_one",
            )
        else:
            out[f"conf_{p}"] = pd.NA
        assert len(out) == n
        out[f"label_{p}"] = out[f"label_{p}"].astype("Int64")
        out[f"conf_{p}"] = out[f"conf_{p}"].astype("Float64")
        # a confidence without a label cannot happen in judgelab's tables; keep the rule explicit
        out.loc[out[f"label_{p}"].isna(), f"conf_{p}"] = pd.NA
    # PERAS's x(q, d): the labels of every persona, then their confidences
    return out[
        ["qid", "docid", "grade"] + [f"label_{p}" for p in judgments] + [f"conf_{p}" for p in judgments]
    ]


def personas_of(features: pd.DataFrame) -> list[str]:
    return [c[len("label_") :] for c in features.columns if c.startswith("label_")]


def design_matrix(features: pd.DataFrame, which: str = "all") -> pd.DataFrame:
    """The numeric matrix the classifiers see (see the module docstring for the missing rule)."""
    cols: dict[str, pd.Series] = {}
    personas = personas_of(features)
    for p in personas:
        lab = features[f"label_{p}"]
        cols[f"label_{p}"] = lab.astype("Float64").fillna(SENTINEL).astype(float)
    if which == "all":
        for p in personas:
            cols[f"conf_{p}"] = features[f"conf_{p}"].astype("Float64").fillna(SENTINEL).astype(float)
    for p in personas:
        lab_missing = features[f"label_{p}"].isna()
        if lab_missing.any():
            cols[f"miss_label_{p}"] = lab_missing.astype(float)
        if which == "all":
            conf_missing = features[f"conf_{p}"].isna()
            if (conf_missing & ~lab_missing).any():
                cols[f"miss_conf_{p}"] = conf_missing.astype(float)
    return pd.DataFrame(cols, index=features.index)


def missing_summary(features: pd.DataFrame) -> pd.DataFrame:
    """Per persona: pairs, missing labels, missing confidences (of which with a parsed label)."""
    rows = []
    for p in personas_of(features):
        lab_missing = features[f"label_{p}"].isna()
        conf_missing = features[f"conf_{p}"].isna()
        rows.append(
            {
                "persona": p,
                "n_pairs": len(features),
                "missing_label": int(lab_missing.sum()),
                "missing_confidence": int(conf_missing.sum()),
                "missing_confidence_label_parsed": int((conf_missing & ~lab_missing).sum()),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Split


def stratified_split(
    grades: Iterable[int], train_fraction: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Indices (train, test) of a stratified split; see the module docstring for the rules."""
    y = np.asarray(list(grades))
    if not 0 < train_fraction < 1:
        raise ValueError("train_fraction must lie strictly between 0 and 1")
    classes, counts = np.unique(y, return_counts=True)
    target = int(round(train_fraction * len(y)))
    exact = train_fraction * counts
    alloc = np.floor(exact).astype(int)
    # largest remainder: hand the rest of the target to the grades with the largest fractions
    rest = target - alloc.sum()
    if rest > 0:
        order = np.argsort(-(exact - alloc), kind="stable")
        alloc[order[:rest]] += 1
    alloc = np.clip(alloc, 1, np.maximum(counts - 1, 1))
    train, test = [], []
    for g, k in zip(classes, alloc):
        idx = np.flatnonzero(y == g)
        rng.shuffle(idx)
        train.append(idx[:k])
        test.append(idx[k:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


# --------------------------------------------------------------------------------------------
# Models


def _fit_predict(
    spec: ClassifierSpec, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray, seed: int
) -> np.ndarray:
    classes = np.unique(y_train)
    if len(classes) == 1:
        return np.full(len(X_test), classes[0])
    params = dict(spec.params)
    if spec.kind == "rf":
        from sklearn.ensemble import RandomForestClassifier

        params.setdefault("bootstrap", True)
        model = RandomForestClassifier(random_state=seed, n_jobs=1, **params)
        model.fit(X_train, y_train)
        return model.predict(X_test)
    if spec.kind == "xgb":
        from xgboost import XGBClassifier

        enc = {c: i for i, c in enumerate(classes)}
        model = XGBClassifier(random_state=seed, n_jobs=1, verbosity=0, **params)
        model.fit(X_train, np.array([enc[c] for c in y_train]))
        return classes[np.asarray(model.predict(X_test), dtype=int)]
    if spec.kind == "lgbm":
        from lightgbm import LGBMClassifier

        model = LGBMClassifier(random_state=seed, n_jobs=1, verbose=-1, **params)
        model.fit(X_train, y_train)
        return np.asarray(model.predict(X_test))
    if spec.kind == "ordinal":
        return _ordinal(X_train, y_train, X_test, classes, params)
    raise ValueError(spec.kind)


def _ordinal(X_train, y_train, X_test, classes, params) -> np.ndarray:
    """Ordinal logistic regression. Columns are centred and scaled with the train split's mean and
    SD (centring also keeps the intercept, which OrderedModel forbids, out of the column span);
    columns constant on the train split are dropped. With fewer train pairs than features the MLE
    does not exist; BFGS then stops at ``maxiter`` and the fit still orders the pairs."""
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    sd = X_train.std(axis=0)
    keep = sd > 0
    if not keep.any():
        values, counts = np.unique(y_train, return_counts=True)
        return np.full(len(X_test), values[np.argmax(counts)])
    mu = X_train[:, keep].mean(axis=0)
    Xtr = (X_train[:, keep] - mu) / sd[keep]
    Xte = (X_test[:, keep] - mu) / sd[keep]
    endog = pd.Series(pd.Categorical(y_train, categories=list(classes), ordered=True))
    maxiter = int(params.pop("maxiter", 200))
    method = params.pop("method", "bfgs")
    distr = params.pop("distr", "logit")
    model = OrderedModel(endog, Xtr, distr=distr)
    # skip_hessian: only the point estimate is used; no standard errors (and no numerical Hessian)
    res = model.fit(method=method, maxiter=maxiter, disp=False, skip_hessian=True, **params)
    probs = np.asarray(model.predict(res.params, exog=Xte))
    return classes[probs.argmax(axis=1)]


# --------------------------------------------------------------------------------------------
# Trials


def _trial_seed(seed: int, trial: int) -> int:
    return int(np.random.default_rng([seed, trial]).integers(2**31 - 1))


def _majority(y: np.ndarray) -> int:
    values, counts = np.unique(y, return_counts=True)
    return int(values[np.argmax(counts)])  # np.unique sorts: ties go to the lowest grade


def run_trials(
    features: pd.DataFrame,
    specs: list[ClassifierSpec],
    *,
    trials: int,
    train_fraction: float,
    seed: int,
) -> tuple[pd.DataFrame, Counter]:
    """Every classifier and every single persona on ``trials`` seeded stratified splits.

    Returns the per-trial table (trial, method, kind, kappa, qwk, macro_f1, n_train, n_test,
    coverage) and a count of the warnings the fits raised (by classifier and category)."""
    y = features["grade"].to_numpy(dtype=int)
    if len(np.unique(y)) < 2:
        raise InputError("the classifier dataset needs at least two human grades", key="classifier.dataset")
    personas = personas_of(features)
    matrices = {w: design_matrix(features, w).to_numpy(dtype=float) for w in FEATURE_SETS}
    labels = {p: features[f"label_{p}"] for p in personas}
    rows: list[dict] = []
    warned: Counter = Counter()
    for t in range(trials):
        s = _trial_seed(seed, t)
        train, test = stratified_split(y, train_fraction, np.random.default_rng(s))
        y_train, y_test = y[train], y[test]
        common = {"trial": t, "seed": s, "n_train": len(train), "n_test": len(test)}
        for spec in specs:
            X = matrices[spec.features]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                pred = _fit_predict(spec, X[train], y_train, X[test], s)
            for w in caught:
                warned[(spec.name, w.category.__name__)] += 1
            rows.append(
                {
                    **common,
                    "method": spec.name,
                    "kind": spec.kind,
                    "coverage": 1.0,
                    **agreement(y_test, cast("Sequence[int]", pred)),  # pred: an int array
                }
            )
        fallback = _majority(y_train)
        for p in personas:
            lab = labels[p].iloc[test]
            pred = lab.fillna(fallback).to_numpy(dtype=int)
            rows.append(
                {
                    **common,
                    "method": f"persona {p}",
                    "kind": "persona",
                    "coverage": float(lab.notna().mean()),
                    **agreement(y_test, pred),
                }
            )
    return pd.DataFrame(rows), warned


def summarize(trials: pd.DataFrame, method_order: list[str] | None = None) -> pd.DataFrame:
    """Tidy summary: one row per method x metric with mean, SD (ddof 1) and the number of trials
    with a defined value; plus ``Oracle`` rows naming the best single persona per metric."""
    long = trials.melt(
        id_vars=["trial", "method", "kind"], value_vars=METRICS, var_name="metric", value_name="value"
    )
    agg = (
        long.groupby(["method", "kind", "metric"], sort=False)["value"]
        .agg(mean="mean", sd=lambda v: v.std(ddof=1), n_trials="count")
        .reset_index()
    )
    agg["persona"] = agg["method"].where(agg["kind"] == "persona").str.removeprefix("persona ")
    oracle = []
    for metric in METRICS:
        per = agg[(agg["kind"] == "persona") & (agg["metric"] == metric) & agg["mean"].notna()]
        if per.empty:
            oracle.append(
                {
                    "method": "Oracle",
                    "kind": "oracle",
                    "metric": metric,
                    "mean": math.nan,
                    "sd": math.nan,
                    "n_trials": 0,
                    "persona": None,
                }
            )
            continue
        best = per.loc[per["mean"].idxmax()]
        oracle.append({**best.to_dict(), "method": "Oracle", "kind": "oracle"})
    out = pd.concat([agg, pd.DataFrame(oracle)], ignore_index=True)
    order = method_order or list(dict.fromkeys(trials.loc[trials["kind"] != "persona", "method"]))
    order = order + ["Oracle"] + sorted(set(out.loc[out["kind"] == "persona", "method"]))
    out["_m"] = out["method"].map({m: i for i, m in enumerate(order)})
    out["_k"] = out["metric"].map({m: i for i, m in enumerate(METRICS)})
    return out.sort_values(["_m", "_k"]).drop(columns=["_m", "_k"]).reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Table 5 rendering

METRIC_NAMES = {"kappa": "κ", "qwk": "QWK", "macro_f1": "F1"}
METRIC_TEX = {"kappa": r"$\kappa$", "qwk": "QWK", "macro_f1": "F1"}


def table5_wide(summary: pd.DataFrame) -> pd.DataFrame:
    """PERAS Table 5 shape: rows dataset, model, template, metric; per method a Mean and an SD
    column, Oracle last with the persona that attains it. ``summary`` is the tidy table of all
    jobs (columns dataset, model, template + :func:`summarize`'s)."""
    s = summary[summary["kind"] != "persona"]
    methods = list(dict.fromkeys(s["method"]))
    methods = [m for m in methods if m != "Oracle"] + (["Oracle"] if "Oracle" in methods else [])
    rows = []
    for (d, m, t), g in s.groupby(["dataset", "model", "template"], sort=False):
        for metric in METRICS:
            row: dict[str | tuple[str, str], Any] = {
                "dataset": d,
                "model": m,
                "template": t,
                "metric": metric,
            }
            for meth in methods:
                cell = g[(g["method"] == meth) & (g["metric"] == metric)]
                row[(meth, "Mean")] = cell["mean"].iloc[0] if len(cell) else math.nan
                row[(meth, "SD")] = cell["sd"].iloc[0] if len(cell) else math.nan
                if meth == "Oracle":
                    row[("Oracle", "persona")] = cell["persona"].iloc[0] if len(cell) else None
            rows.append(row)
    return pd.DataFrame(rows)


def _method_cells(r: pd.Series, methods: list, oracle_mark) -> list[str]:
    """Mean and (SD) cells of every method; the Oracle's mean is marked with its persona."""
    cells = []
    for meth in methods:
        mean = render.fmt(r[(meth, "Mean")])
        if meth == "Oracle" and r.get(("Oracle", "persona")):
            mean += oracle_mark(r[("Oracle", "persona")])
        cells += [mean, f"({render.fmt(r[(meth, 'SD')])})"]
    return cells


def _methods(wide: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(c[0] for c in wide.columns if isinstance(c, tuple)))


def _rows(wide: pd.DataFrame):
    """(dataset, model, template) shown on a group's first row only, and the row."""
    return render.id_cells(wide, ["dataset", "model", "template"], nested=False)


def render_markdown(wide: pd.DataFrame) -> str:
    methods = _methods(wide)
    head = ["Dataset", "LLM", "Template", "Metric"]
    for meth in methods:
        head += [f"{meth} Mean", f"{meth} SD"]
    rows = [
        ids + [METRIC_NAMES[r["metric"]]] + _method_cells(r, methods, lambda persona: f" ({persona})")
        for ids, r in _rows(wide)
    ]
    return render.markdown_table(head, rows, ["l"] * 4 + ["r"] * (2 * len(methods)))


def render_latex(wide: pd.DataFrame) -> str:
    methods = _methods(wide)
    esc = render.tex_escape
    head = [
        "Dataset & LLM & Template & Metric & " + " & ".join(render.multicolumn(2, esc(m)) for m in methods),
        " & & & & " + " & ".join(["Mean & SD"] * len(methods)),
    ]
    rows = [
        [esc(k) for k in ids]
        + [METRIC_TEX[r["metric"]]]
        + _method_cells(r, methods, lambda persona: rf"\textsuperscript{{{esc(persona)}}}")
        for ids, r in _rows(wide)
    ]
    return render.latex_table("llll" + "rr" * len(methods), head, rows)


def render_html(wide: pd.DataFrame, caption: str = "") -> str:
    methods = _methods(wide)
    fmt = render.fmt
    df = pd.DataFrame(
        {
            **{k: wide[k] for k in ("dataset", "model", "template")},
            "metric": wide["metric"].map(METRIC_NAMES),
            **{
                f"{m} {part}": (
                    wide[(m, part)].map(fmt)
                    if part == "Mean"
                    else wide[(m, part)].map(lambda v: f"({fmt(v)})")
                )
                for m in methods
                for part in ("Mean", "SD")
            },
        }
    )
    if ("Oracle", "persona") in wide.columns:
        df["Oracle persona"] = wide[("Oracle", "persona")]
    return render.html_table(df, caption)
