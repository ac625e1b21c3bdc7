"""The PERAS paper's Table 4 (dataset statistics) and Tables 7 and 8 (Appendix B: agreement and
calibration of every model x persona, in the paper's wide layout), from the prepared dataset
tables and the long metrics table (``peras/metrics/metrics.tsv``), rendered with :mod:`judgelab.analysis.render`.

* Table 4: per dataset the topics, the judged pairs (the paper's ``#docs``) and the pairs of each
  grade; the tsv also lists the topic ids, so a subset drawn by ``datasets.<name>.match_counts``
  is on record.
* Tables 7 and 8: one row per model x persona, one column group per dataset, in it one per task
  template, in it the metrics (Table 7: kappa, QWK, macro F1; Table 8: RO, RU, HMR) and the
  coverage the row's values rest on (Table 7: pairs whose label parsed; Table 8: pairs with a
  parsed label and a parsed confidence, over all pairs). A value above the reference persona's
  (the paper's default; same model, dataset, template) is marked ``↑`` (the paper colours it); a
  value that is undefined is ``n/a``; a cell the configuration does not run (e.g. GPT-4o with CoT
  in PERAS) is empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from judgelab.analysis import render
from judgelab.data.labels import GRADES

#: The PERAS paper's names of its datasets and templates (anything else is shown by its config name).
DATASET_NAMES = {"llmjudge": "LLMJudge", "dl19": "TRDL19", "dl20": "TRDL20", "dl21": "TRDL21"}
TEMPLATE_NAMES = {"w_cot": "w/CoT", "wo_cot": "w/o CoT"}
PERSONA_NAMES = {"default": "Df."}

#: (metrics column, shown name, TeX name) of each wide table; ``coverage`` columns last.
TABLE7 = [("kappa", "κ", r"$\kappa$"), ("qwk", "QWK", "QWK"), ("macro_f1", "F1", "F1")]
TABLE8 = [("RO", "RO", "RO"), ("RU", "RU", "RU"), ("HMR", "HMR", "HMR")]
COVERAGE = {"table7": "coverage", "table8": "calibration_coverage"}
COVERAGE_NAME = "Cov."
BETTER = "↑"

TABLE4_COLUMNS = ["dataset", "topics", "pairs"] + [f"qrel_{g}" for g in GRADES] + ["topic_ids"]


def _name(names: Mapping[str, str], key: str) -> str:
    return names.get(key, key)


# -- Table 4 ------------------------------------------------------------------------------------


def table4(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per dataset (in the order given): topics, pairs, pairs per grade, topic ids
    (string order, space separated)."""
    rows = []
    for name, t in tables.items():
        grades = t["grade"].astype(int).value_counts()
        qids = sorted({str(q) for q in t["qid"]})
        rows.append(
            {
                "dataset": name,
                "topics": len(qids),
                "pairs": len(t),
                **{f"qrel_{g}": int(grades.get(g, 0)) for g in GRADES},
                "topic_ids": " ".join(qids),
            }
        )
    return pd.DataFrame(rows, columns=TABLE4_COLUMNS)


def render_table4(t4: pd.DataFrame, fmt: str) -> str:
    """Table 4 as ``md``, ``tex`` or ``html`` (the paper's columns; counts with thousands commas)."""
    titles = ["Dataset", "#topics", "#docs"] + [f"#qrel={g}" for g in GRADES]
    rows = [
        [_name(DATASET_NAMES, r["dataset"])] + [f"{int(r[c]):,}" for c in TABLE4_COLUMNS[1:-1]]
        for _, r in t4.iterrows()
    ]
    if fmt == "md":
        return render.markdown_table(titles, rows, ["l"] + ["r"] * (len(titles) - 1))
    if fmt == "tex":
        esc = render.tex_escape
        head = [" & ".join(esc(t) for t in titles)]
        return render.latex_table("l" + "r" * (len(titles) - 1), head, [[esc(c) for c in r] for r in rows])
    if fmt == "html":
        return render.html_table(
            pd.DataFrame(rows, columns=titles), "Statistics of the datasets judged (PERAS Table 4)."
        )
    raise ValueError(f"unknown table format {fmt!r} (md, tex or html)")


# -- Tables 7 and 8 -----------------------------------------------------------------------------


@dataclass
class WideTable:
    """A wide table: ``rows`` (model, persona) in order, ``columns`` (dataset, template, metric)
    in order; ``values`` and ``better`` indexed by (model, persona, dataset, template, metric);
    ``run`` the (model, persona, dataset, template) the metrics table has."""

    rows: list[tuple[str, str]]
    columns: list[tuple[str, str, str]]
    metrics: list[tuple[str, str, str]]  # (column, shown, TeX) incl. the coverage column
    values: dict[tuple[str, str, str, str, str], float]
    better: set[tuple[str, str, str, str, str]]
    run: set[tuple[str, str, str, str]]

    def cell(self, row: tuple[str, str], col: tuple[str, str, str], *, mark: str = BETTER) -> str:
        """The shown cell: empty where not run, n/a where undefined, the mark where better."""
        model, persona = row
        dataset, template, metric = col
        if (model, persona, dataset, template) not in self.run:
            return ""
        key = (model, persona, dataset, template, metric)
        return render.fmt(self.values.get(key)) + (mark if key in self.better else "")


def wide_table(metrics: pd.DataFrame, table: str, reference: str = "default") -> WideTable:
    """Table 7 (``table``: ``table7``) or 8 (``table8``) from the long metrics table (one row per
    dataset x model x template x persona; its row order gives the orders of datasets, templates,
    models and personas). ``reference``: the persona whose values the ``↑`` marks compare with
    (none where the reference was not run)."""
    spec = TABLE7 if table == "table7" else TABLE8
    cov = COVERAGE[table]
    m = metrics.copy()
    m["calibration_coverage"] = np.where(
        m["n_pairs"] > 0, m["n_confidence"] / m["n_pairs"].where(m["n_pairs"] > 0, 1), np.nan
    )
    cols = [c for c, _, _ in spec]
    datasets = list(dict.fromkeys(m["dataset"]))
    templates = list(dict.fromkeys(m["template"]))
    rows = list(dict.fromkeys(zip(m["model"], m["persona"])))
    run = set(zip(m["model"], m["persona"], m["dataset"], m["template"]))
    pairs = {(d, t) for _, _, d, t in run}
    columns = [(d, t, c) for d in datasets for t in templates if (d, t) in pairs for c in [*cols, cov]]
    values: dict = {}
    for r in m.itertuples(index=False):
        for c in [*cols, cov]:
            values[(r.model, r.persona, r.dataset, r.template, c)] = getattr(r, c)
    better = set()
    for (model, persona, d, t, c), v in values.items():
        ref = values.get((model, reference, d, t, c))
        if c != cov and persona != reference and not render.is_missing(v) and not render.is_missing(ref):
            assert ref is not None  # render.is_missing(None) is True
            if float(v) > float(ref):
                better.add((model, persona, d, t, c))
    shown = [*spec, (cov, COVERAGE_NAME, COVERAGE_NAME)]
    return WideTable(rows, columns, shown, values, better, run)


def flat_wide(w: WideTable) -> pd.DataFrame:
    """The wide table for the tsv: columns model, persona, then ``<dataset>/<template>/<metric>``
    (names cannot hold ``/``), full precision, empty where not run."""
    out = []
    for model, persona in w.rows:
        row: dict[str, object] = {"model": model, "persona": persona}
        for d, t, c in w.columns:
            ran = (model, persona, d, t) in w.run
            row[f"{d}/{t}/{c}"] = w.values.get((model, persona, d, t, c)) if ran else None
        out.append(row)
    return pd.DataFrame(out, columns=["model", "persona"] + [f"{d}/{t}/{c}" for d, t, c in w.columns])


def render_wide(w: WideTable, fmt: str, caption: str = "") -> str:
    """Table 7 or 8 as ``md``, ``tex`` or ``html``: the model shown on the first row of its
    personas, column groups dataset > template > metric."""
    ids = pd.DataFrame(w.rows, columns=["model", "persona"])
    body = [
        ([shown[0], _name(PERSONA_NAMES, r["persona"])], r) for shown, r in render.id_cells(ids, ["model"])
    ]
    shown_name = {c: (s, tex) for c, s, tex in w.metrics}
    if fmt in ("md", "html"):
        titles = ["Model", "P."] + [
            f"{_name(DATASET_NAMES, d)} {_name(TEMPLATE_NAMES, t)} {shown_name[c][0]}"
            for d, t, c in w.columns
        ]
        rows = [idc + [w.cell((r["model"], r["persona"]), col) for col in w.columns] for idc, r in body]
        if fmt == "md":
            return render.markdown_table(titles, rows, ["l", "l"] + ["r"] * len(w.columns))
        return render.html_table(pd.DataFrame(rows, columns=titles), caption)
    if fmt == "tex":
        esc = render.tex_escape
        spans_d = cast("list[tuple[str, int]]", render.spans([d for d, _, _ in w.columns]))
        spans_t = cast("list[tuple[tuple[str, str], int]]", render.spans([(d, t) for d, t, _ in w.columns]))
        head = [
            " & ".join(["", ""] + [render.multicolumn(n, esc(_name(DATASET_NAMES, d))) for d, n in spans_d]),
            " & ".join(
                ["", ""] + [render.multicolumn(n, esc(_name(TEMPLATE_NAMES, t[1]))) for t, n in spans_t]
            ),
            " & ".join(["Model", "P."] + [shown_name[c][1] for _, _, c in w.columns]),
        ]
        rows = [
            [esc(x) for x in idc] + [esc(w.cell((r["model"], r["persona"]), col)) for col in w.columns]
            for idc, r in body
        ]
        return render.latex_table("ll" + "r" * len(w.columns), head, rows)
    raise ValueError(f"unknown table format {fmt!r} (md, tex or html)")


CAPTIONS = {
    "table7": (
        "Agreement with the human grades of every model x persona (PERAS Table 7): Cohen's κ, "
        "QWK and macro F1 over the pairs whose label parsed; Cov. = that share of the pairs. "
        "↑: above the reference persona (the paper's default) of the same model, dataset and "
        "template; n/a: undefined; empty: not run."
    ),
    "table8": (
        "Calibration of the self-reported confidence of every model x persona (PERAS Table 8): "
        "Sakai's RO, RU and HMR over the pairs with a parsed label and a parsed confidence; Cov. = "
        "that share of the pairs. ↑: above the reference persona of the same model, dataset and "
        "template; n/a: undefined; empty: not run."
    ),
}
