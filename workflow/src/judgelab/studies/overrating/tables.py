"""Seed 004 Tables 1 (pointwise) and 2 (pairwise) from the pooled metrics, and their rendering."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from ... import render

#: the formats every table of the study is written in
TABLE_FORMATS = ("tsv", "md", "tex", "html")


#: (group title, column title, source scale, metric, digits) of Table 1
TABLE1_COLUMNS = [
    ("Overrated (%)", "Bin.", "binary", "overrate_pct", 2),
    ("Overrated (%)", "Grad.", "graded", "overrate_pct", 2),
    ("Overrated (%)", "Grad.→Bin.", "graded", "bin_overrate_pct", 2),
    ("Underrated (%)", "Bin.", "binary", "underrate_pct", 2),
    ("Underrated (%)", "Grad.", "graded", "underrate_pct", 2),
    ("Underrated (%)", "Grad.→Bin.", "graded", "bin_underrate_pct", 2),
    ("Mean Bias", "Bin.", "binary", "mean_bias", 3),
    ("Mean Bias", "Grad.", "graded", "mean_bias", 3),
    ("Mean Bias", "Grad.→Bin.", "graded", "bin_mean_bias", 3),
    ("Cohen's κ", "Bin.", "binary", "kappa", 3),
    ("Cohen's κ", "Grad.", "graded", "kappa", 3),
    ("Cohen's κ", "Grad.→Bin.", "graded", "bin_kappa", 3),
    ("Avg Confidence", "TP", "confidence", "conf_TP", 3),
    ("Avg Confidence", "FP", "confidence", "conf_FP", 3),
    ("Avg Confidence", "TN", "confidence", "conf_TN", 3),
    ("Avg Confidence", "FN", "confidence", "conf_FN", 3),
    ("Coverage", "Bin.", "binary", "coverage", 3),
    ("Coverage", "Grad.", "graded", "coverage", 3),
]


#: (column title, metric, digits) of Table 2
TABLE2_COLUMNS = [
    ("Acc.", "accuracy_pct", 2),
    ("Acc. (No Ties)", "accuracy_no_ties_pct", 2),
    ("Tie Rate", "tie_rate_pct", 2),
    ("Wrong Wins", "wrong_win_pct", 2),
    ("Corr.", "conf_correct", 3),
    ("Incorr.", "conf_incorrect", 3),
    ("Ties conf. > 0.95 (%)", "ties_confident_pct", 2),
    ("Pairs judged", "n_judged", 0),
    ("Coverage", "coverage", 3),
]


def table1(pointwise: pd.DataFrame) -> pd.DataFrame:
    """Seed 004 Table 1 from the pointwise metrics (rows dataset, model, scale, metrics): one row
    per dataset x model; ``Bin.`` from the binary run, ``Grad.`` from the graded run,
    ``Grad.→Bin.`` the graded run binarised; the confidence columns from the graded run (as the
    seed), or from the binary run when there is no graded one (``confidence_scale`` says which).
    Columns are (group, column) tuples, plus dataset, model, confidence_scale."""
    rows = []
    for (d, m), g in pointwise.groupby(["dataset", "model"], sort=False):
        by = {r["scale"]: r for _, r in g.iterrows()}
        conf_scale = "graded" if "graded" in by else "binary"
        row = {"dataset": d, "model": m, "confidence_scale": conf_scale}
        for group, col, src, metric, _ in TABLE1_COLUMNS:
            src = conf_scale if src == "confidence" else src
            row[(group, col)] = by[src][metric] if src in by else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def table2(pairwise: pd.DataFrame, setting: str = "overall") -> pd.DataFrame:
    """Seed 004 Table 2 from the pairwise metrics (rows dataset, model, setting, metrics): one row
    per dataset x model, for ``setting`` (``overall`` = all pairs pooled)."""
    sel = pairwise[pairwise["setting"] == setting]
    return sel[["dataset", "model", "setting"] + [m for _, m, _ in TABLE2_COLUMNS]].reset_index(drop=True)


def render_table1(wide: pd.DataFrame, fmt: str) -> str:
    """Table 1 as ``md``, ``tex`` or ``html``."""
    cols = [(g, c, digits) for g, c, _, _, digits in TABLE1_COLUMNS]
    return _render(wide, ["dataset", "model"], ["Dataset", "Model"], cols, fmt, lambda r, g, c: r[(g, c)])


def render_table2(wide: pd.DataFrame, fmt: str, ids: Sequence[str] = ("dataset", "model")) -> str:
    """Table 2 (or its per-setting variant, ``ids`` with ``setting``) as ``md``, ``tex`` or
    ``html``."""
    cols = (
        [("Pairwise Metrics (%)", t, d) for t, m, d in TABLE2_COLUMNS[:4]]
        + [("Avg Confidence", t, d) for t, m, d in TABLE2_COLUMNS[4:6]]
        + [("", t, d) for t, m, d in TABLE2_COLUMNS[6:]]
    )
    metric = {t: m for t, m, _ in TABLE2_COLUMNS}
    return _render(wide, list(ids), [i.capitalize() for i in ids], cols, fmt, lambda r, g, c: r[metric[c]])


def _render(
    wide: pd.DataFrame,
    ids: list[str],
    id_titles: list[str],
    cols: list[tuple[str, str, int]],
    fmt: str,
    value,
) -> str:
    rows = [
        (shown, [render.fmt(value(r, g, c), d) for g, c, d in cols])
        for shown, r in render.id_cells(wide, ids)
    ]
    titles = id_titles + [f"{g} {c}".strip() for g, c, _ in cols]
    if fmt == "md":
        return render.markdown_table(titles, [s + v for s, v in rows], ["l"] * len(ids) + ["r"] * len(cols))
    if fmt == "tex":
        groups = list(dict.fromkeys(g for g, _, _ in cols))
        spans = [(g, sum(1 for gg, _, _ in cols if gg == g)) for g in groups]
        esc = render.tex_escape
        head = [
            " & ".join([""] * len(ids) + [render.multicolumn(n, esc(g)) for g, n in spans]),
            " & ".join([esc(t) for t in id_titles] + [esc(c) for _, c, _ in cols]),
        ]
        body = [[esc(x) for x in s] + v for s, v in rows]
        return render.latex_table("l" * len(ids) + "r" * len(cols), head, body)
    if fmt == "html":
        return render.html_table(pd.DataFrame([s + v for s, v in rows], columns=titles))
    raise ValueError(f"unknown table format {fmt!r} (md, tex or html)")


def flat_table1(wide: pd.DataFrame) -> pd.DataFrame:
    """Table 1 with flat column names (``Overrated (%) Bin.``), for the tsv file."""
    return wide.rename(columns={k: f"{k[0]} {k[1]}" for k in wide.columns if isinstance(k, tuple)})
