"""One robustness table per judge, beside the leaderboard: how far a judge agrees with the
assessors, and how far it can be gamed.

Per judge x ranking dataset x measure (the rows of ``correlations.tsv``: each judge against its
reference - the human qrels, or with ``unjudged: fill`` the human qrels filled by the judge):

* label agreement on the pool: Cohen's kappa and Krippendorff's alpha (a judge that gives scores:
  kappa n/a, alpha after the map ``alpha_map`` names, when ``ranking.score_alpha`` declares one);
* ranking agreement: Kendall's tau with its interval (and the interval's method);
* value agreement: the Bland-Altman bias of the systems' mean scores (judge - reference) and its
  95% limits of agreement (:mod:`judgelab.studies.ranking.values`: is the judge lenient?);
* attack inflation (the perturbation study's ``attacks.tsv``, read as a file: this module imports
  no other study): over the attacks on the study's own template (``plain``) and all attacked
  passages, the largest after-minus-before share judged relevant, its attack and position, its
  interval and, where the defended template ran, the same attack's difference with it;
* circularity (``circularity.tsv``): the rank gap of the run the judge built (its rank under the
  reference qrels minus its rank under its own labels: how many places its own evaluation lifts
  it).

A judge the ranking study does not compare (a perturbation judge only) has a row with the attack
columns alone; a judge no attack judged (an imported one) has no attack value. Missing values are
``n/a`` in the renderings.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from judgelab.analysis import render

ROBUSTNESS_COLUMNS = [
    "judge",
    "dataset",
    "measure",
    "reference",
    "kappa",
    "alpha",
    "alpha_map",
    "tau",
    "tau_low",
    "tau_high",
    "tau_ci",
    "ba_bias",
    "ba_loa_low",
    "ba_loa_high",
    "attack_inflation",
    "attack",
    "attack_dataset",
    "attack_ci_low",
    "attack_ci_high",
    "defended_inflation",
    "circularity_rank_gap",
    "circularity_run",
]

#: (title, column, digits) of the rendered metric columns
SHOWN = [
    ("κ", "kappa", 3),
    ("α", "alpha", 3),
    ("τ", "tau", 3),
    ("τ interval", "tau_interval", None),
    ("bias", "ba_bias", 3),
    ("limits of agreement", "ba_loa", None),
    ("attack inflation", "attack_inflation", 3),
    ("by attack", "attack", None),
    ("defended", "defended_inflation", 3),
    ("circularity rank gap", "circularity_rank_gap", 0),
]


def _frames(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    frames = [t for t in tables if t is not None and len(t)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def attack_inflation(attacks: pd.DataFrame) -> pd.DataFrame:
    """Per judge, the attack (plain template, all passages, at least one parsed pair) with the
    largest difference of shares judged relevant (ties: the first in table order), with the same
    attack's difference under the defended template where it ran (NaN otherwise)."""
    cols = ["judge", "attack_inflation", "attack", "attack_dataset", "attack_ci_low", "attack_ci_high"]
    if attacks.empty:
        return pd.DataFrame(columns=[*cols, "defended_inflation"])
    every = attacks[(attacks["passages"] == "all") & (attacks["n_parsed"] > 0)]
    plain = every[every["template"] == "plain"]
    defended = every[every["template"] == "defended"]
    rows = []
    for judge, g in plain.groupby("judge", sort=False):
        best = g.loc[g["difference"].astype(float).idxmax()]
        match = defended[
            (defended["judge"] == judge)
            & (defended["dataset"] == best["dataset"])
            & (defended["attack"] == best["attack"])
            & (defended["position"] == best["position"])
        ]
        rows.append(
            {
                "judge": judge,
                "attack_inflation": float(best["difference"]),
                "attack": f"{best['attack']} at {best['position']}",
                "attack_dataset": best["dataset"],
                "attack_ci_low": float(best["ci_low"]),
                "attack_ci_high": float(best["ci_high"]),
                "defended_inflation": float(match["difference"].iloc[0]) if len(match) else np.nan,
            }
        )
    return pd.DataFrame(rows, columns=[*cols, "defended_inflation"])


def robustness_table(
    correlations: pd.DataFrame, attacks: Iterable[pd.DataFrame] = (), circularity: Iterable[pd.DataFrame] = ()
) -> pd.DataFrame:
    """The robustness table (:data:`ROBUSTNESS_COLUMNS`): ``correlations`` (the ranking study's
    tables, every dataset), the perturbation study's attack tables, the circularity tables."""
    corr = correlations
    base = pd.DataFrame(
        {
            "judge": corr.get("judge", pd.Series(dtype=str)),
            "dataset": corr.get("dataset", pd.Series(dtype=str)),
            "measure": corr.get("measure", pd.Series(dtype=str)),
            "reference": corr.get("reference", pd.Series(dtype=str)),
            "kappa": corr.get("kappa", pd.Series(dtype=float)),
            "alpha": corr.get("alpha", pd.Series(dtype=float)),
            "alpha_map": corr.get("alpha_map", pd.Series(dtype=str)),
            "tau": corr.get("kendall_tau", pd.Series(dtype=float)),
            "tau_low": corr.get("kendall_tau_low", pd.Series(dtype=float)),
            "tau_high": corr.get("kendall_tau_high", pd.Series(dtype=float)),
            "tau_ci": corr.get("kendall_tau_ci", pd.Series(dtype=str)),
            "ba_bias": corr.get("ba_bias", pd.Series(dtype=float)),
            "ba_loa_low": corr.get("ba_loa_low", pd.Series(dtype=float)),
            "ba_loa_high": corr.get("ba_loa_high", pd.Series(dtype=float)),
        }
    ).reset_index(drop=True)
    inflation = attack_inflation(_frames(attacks))
    out = base.merge(inflation, on="judge", how="outer")
    circ = _frames(circularity)
    if len(circ):
        circ = circ[["dataset", "judge", "measure", "reference", "rank_gap", "run"]]
        circ = circ.rename(columns={"rank_gap": "circularity_rank_gap", "run": "circularity_run"})
        out = out.merge(circ, on=["dataset", "judge", "measure", "reference"], how="left")
    for col in ROBUSTNESS_COLUMNS:
        if col not in out.columns:
            out[col] = np.nan
    order = list(dict.fromkeys([*base["judge"], *inflation["judge"]]))
    out["_order"] = out["judge"].map({j: i for i, j in enumerate(order)})
    out = out.sort_values(["_order", "dataset", "measure"], kind="stable", na_position="last")
    return out[ROBUSTNESS_COLUMNS].reset_index(drop=True)


def _interval(r) -> str:
    if render.is_missing(r["tau_low"]) or render.is_missing(r["tau_high"]):
        return render.MISSING
    return f"[{render.fmt(r['tau_low'])}, {render.fmt(r['tau_high'])}] {r['tau_ci']}"


def _limits(r) -> str:
    if render.is_missing(r["ba_loa_low"]) or render.is_missing(r["ba_loa_high"]):
        return render.MISSING
    return f"[{render.fmt(r['ba_loa_low'])}, {render.fmt(r['ba_loa_high'])}]"


def render_robustness(table: pd.DataFrame, fmt: str) -> str:
    """The robustness table as ``md`` or ``html`` (undefined values ``n/a``)."""
    ids = ["judge", "dataset", "measure", "reference"]
    shown = list(SHOWN)
    maps = table["alpha_map"].map(lambda v: not render.is_missing(v) and str(v) != "")
    if maps.any():  # a score judge's alpha after a declared map: the map beside it
        shown.insert(2, ("α map", "alpha_map", None))
    titles = ["Judge", "Dataset", "Measure", "Reference"] + [t for t, _, _ in shown]
    rows = []
    for _, r in table.iterrows():
        cells = [render.MISSING if render.is_missing(r[c]) else str(r[c]) for c in ids]
        for _, col, digits in shown:
            if col == "alpha_map":
                cells.append("" if render.is_missing(r[col]) else str(r[col]))
            elif col == "tau_interval":
                cells.append(_interval(r))
            elif col == "ba_loa":
                cells.append(_limits(r))
            elif col == "attack":
                a = r["attack"]
                cells.append(render.MISSING if render.is_missing(a) else f"{a} ({r['attack_dataset']})")
            elif digits == 0:
                cells.append(render.MISSING if render.is_missing(r[col]) else f"{int(r[col]):+d}")
            else:
                cells.append(render.fmt(r[col], digits or 3))
        rows.append(cells)
    if fmt == "md":
        aligns = ["l"] * len(ids) + ["l" if c == "alpha_map" else "r" for _, c, _ in shown]
        return render.markdown_table(titles, rows, aligns)
    if fmt == "html":
        return render.html_table(
            pd.DataFrame(rows, columns=titles),
            caption="Robustness per judge: label, ranking and value agreement, attack inflation, circularity",
        )
    raise ValueError(f"unknown table format {fmt!r} (md or html)")
