"""Tables 1 (pointwise) and 2 (pairwise) of When LLM Judges Inflate Scores from the pooled
metrics, and their rendering.

Both tables are shaped like the paper's: a row per dataset x judge (the judge shown by its display
name, ``models.<name>.display_name``), the paper's columns first, in its order, then the columns
the paper does not print (the graded run binarised, the other token-confidence definition, the
coverage). Which token confidence is the paper's "Avg Confidence" is a choice
(``overrating.confidence``): ``full`` (the label token's probability in the full distribution,
the paper's softmax probability; the default) or ``renormalised`` (over the label tokens); the
other definition follows as extra columns, so both are always shown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from judgelab.analysis import render
from judgelab.studies.overrating.pointwise import OUTCOMES

#: the formats every table of the study is written in
TABLE_FORMATS = render.TABLE_FORMATS

#: the token-confidence definitions (``overrating.confidence``): the metric-name suffix of each
#: and its title in the tables
CONFIDENCE_SUFFIX = {"full": "", "renormalised": "_renorm"}
CONFIDENCE_TITLE = {"full": "full distribution", "renormalised": "renormalised"}


def _other(confidence: str) -> str:
    return "renormalised" if confidence == "full" else "full"


def table1_columns(confidence: str) -> list[tuple[str, str, str, str, int]]:
    """(group title, column title, source scale, metric, digits) of Table 1: the paper's columns
    (Overrated, Underrated, Mean Bias, Cohen's kappa on Bin. and Grad.; Avg Confidence TP FP TN
    FN of ``confidence``), then the graded run binarised (Grad.→Bin.), Krippendorff's ordinal
    alpha of each run (LLMJudge reports it beside kappa), the other confidence definition, and the
    coverage of each run."""
    main = CONFIDENCE_SUFFIX[confidence]
    other = _other(confidence)
    metrics = [
        ("Overrated (%)", "overrate_pct", 2),
        ("Underrated (%)", "underrate_pct", 2),
        ("Mean Bias", "mean_bias", 3),
        ("Cohen's κ", "kappa", 3),
    ]
    cols = []
    for group, metric, digits in metrics:
        cols += [(group, "Bin.", "binary", metric, digits), (group, "Grad.", "graded", metric, digits)]
    cols += [("Avg Confidence", o, "confidence", f"conf{main}_{o}", 3) for o in OUTCOMES]
    cols += [(group, "Grad.→Bin.", "graded", f"bin_{metric}", digits) for group, metric, digits in metrics]
    cols += [
        ("Krippendorff's α", "Bin.", "binary", "alpha", 3),
        ("Krippendorff's α", "Grad.", "graded", "alpha", 3),
        ("Krippendorff's α", "Grad.→Bin.", "graded", "bin_alpha", 3),
    ]
    cols += [
        (
            f"Avg Confidence ({CONFIDENCE_TITLE[other]})",
            o,
            "confidence",
            f"conf{CONFIDENCE_SUFFIX[other]}_{o}",
            3,
        )
        for o in OUTCOMES
    ]
    cols += [("Coverage", "Bin.", "binary", "coverage", 3), ("Coverage", "Grad.", "graded", "coverage", 3)]
    return cols


#: Table 1's columns with the paper's definition (full distribution)
TABLE1_COLUMNS = table1_columns("full")

#: how many of Table 1's columns are the paper's own (the rest follow them)
TABLE1_SEED_COLUMNS = 12


def table2_columns(confidence: str) -> list[tuple[str, str, str, int]]:
    """(group title, column title, metric, digits) of Table 2: the paper's columns (Acc., Acc. (No
    Ties), Tie Rate, Wrong Wins; Avg Confidence Corr., Incorr. of ``confidence``), then the shares
    of the judged pairs decided by position alone (Passage 1 wins in both orders, Passage 2 wins
    in both: together the tie rate), the share of ties confident in both orders, the same three of the other definition, the pairs judged
    and the coverage."""
    main = CONFIDENCE_SUFFIX[confidence]
    other = _other(confidence)
    osfx = CONFIDENCE_SUFFIX[other]
    return [
        ("Pairwise Metrics (%)", "Acc.", "accuracy_pct", 2),
        ("Pairwise Metrics (%)", "Acc. (No Ties)", "accuracy_no_ties_pct", 2),
        ("Pairwise Metrics (%)", "Tie Rate", "tie_rate_pct", 2),
        ("Pairwise Metrics (%)", "Wrong Wins", "wrong_win_pct", 2),
        ("Avg Confidence", "Corr.", f"conf_correct{main}", 3),
        ("Avg Confidence", "Incorr.", f"conf_incorrect{main}", 3),
        ("Decided by position (%)", "1st wins both", "first_both_pct", 2),
        ("Decided by position (%)", "2nd wins both", "second_both_pct", 2),
        ("", "Ties conf. > 0.95 (%)", f"ties_confident{main}_pct", 2),
        (f"Avg Confidence ({CONFIDENCE_TITLE[other]})", "Corr.", f"conf_correct{osfx}", 3),
        (f"Avg Confidence ({CONFIDENCE_TITLE[other]})", "Incorr.", f"conf_incorrect{osfx}", 3),
        (
            f"Avg Confidence ({CONFIDENCE_TITLE[other]})",
            "Ties conf. > 0.95 (%)",
            f"ties_confident{osfx}_pct",
            2,
        ),
        ("", "Pairs judged", "n_judged", 0),
        ("", "Coverage", "coverage", 3),
    ]


#: Table 2's columns with the paper's definition (full distribution)
TABLE2_COLUMNS = table2_columns("full")


def _display(models: pd.Series, names: Mapping[str, str] | None) -> pd.Series:
    names = dict(names or {})
    return models.map(lambda m: names.get(m, m))


def table1(pointwise: pd.DataFrame, confidence: str, names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The paper's Table 1 from the pointwise metrics (rows dataset, model, scale, metrics): one row
    per dataset x model; ``Bin.`` from the binary run, ``Grad.`` from the graded run,
    ``Grad.→Bin.`` the graded run binarised; the confidence columns from the graded run (as the
    paper), or from the binary run when there is no graded one (``confidence_scale`` says which).
    Columns: dataset, model (the display name of ``names``, default the key), the (group, column)
    tuples of :func:`table1_columns` in order, then confidence (the definition of "Avg
    Confidence"), confidence_scale and model_key."""
    rows = []
    cols = table1_columns(confidence)
    for (d, m), g in pointwise.groupby(["dataset", "model"], sort=False):
        by = {r["scale"]: r for _, r in g.iterrows()}
        conf_scale = "graded" if "graded" in by else "binary"
        row: dict[str | tuple[str, str], Any] = {"dataset": d, "model": m}
        for group, col, src, metric, _ in cols:
            src = conf_scale if src == "confidence" else src
            row[(group, col)] = by[src].get(metric, math.nan) if src in by else math.nan
        row |= {"confidence": confidence, "confidence_scale": conf_scale, "model_key": m}
        rows.append(row)
    columns = (
        ["dataset", "model"] + [(g, c) for g, c, *_ in cols] + ["confidence", "confidence_scale", "model_key"]
    )
    out = pd.DataFrame(rows, columns=columns)
    out["model"] = _display(out["model_key"], names)
    return out


def table2(
    pairwise: pd.DataFrame,
    setting: str | None = "overall",
    *,
    confidence: str,
    names: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The paper's Table 2 from the pairwise metrics (rows dataset, model, setting, metrics): one row
    per dataset x model for ``setting`` (``overall`` = all pairs pooled; None: every row, the
    per-setting table). Columns: dataset, model (display name), setting, the metrics of
    :func:`table2_columns` in order, then confidence and model_key."""
    sel = pairwise if setting is None else pairwise[pairwise["setting"] == setting]
    metrics = [m for _, _, m, _ in table2_columns(confidence)]
    out = sel.reindex(columns=["dataset", "model", "setting"] + metrics).reset_index(drop=True)
    out["confidence"] = confidence
    out["model_key"] = out["model"]
    out["model"] = _display(out["model_key"], names)
    return out


def render_table1(wide: pd.DataFrame, fmt: str, confidence: str) -> str:
    """Table 1 as ``md``, ``tex`` or ``html``."""
    cols = [(g, c, digits) for g, c, _, _, digits in table1_columns(confidence)]
    return _render(wide, ["dataset", "model"], ["Dataset", "Model"], cols, fmt, lambda r, g, c: r[(g, c)])


def render_table2(
    wide: pd.DataFrame, fmt: str, ids: Sequence[str] = ("dataset", "model"), *, confidence: str
) -> str:
    """Table 2 (or its per-setting variant, ``ids`` with ``setting``) as ``md``, ``tex`` or
    ``html``."""
    spec = table2_columns(confidence)
    cols = [(g, t, d) for g, t, _, d in spec]
    metric = {(g, t): m for g, t, m, _ in spec}
    return _render(
        wide, list(ids), [i.capitalize() for i in ids], cols, fmt, lambda r, g, c: r[metric[(g, c)]]
    )


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
        spans = render.spans([g for g, _, _ in cols])
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
