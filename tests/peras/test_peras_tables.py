"""The PERAS paper's Table 4 and the wide Tables 7 and 8 (judgelab.studies.peras.tables), on hand-made
inputs whose every cell is known, and Table 4 of the paper's LLMJudge set on the shared qrels."""

from __future__ import annotations

import math

import pandas as pd

from judgelab.data.readers import read_qrels
from judgelab.data.selection import select
from judgelab.data.tables import read_ids_table
from judgelab.studies.peras import tables as tb


def metrics_row(
    dataset, model, template, persona, kappa, qwk, f1, ro, ru, hmr, n_pairs=10, n_parsed=8, n_conf=6
):
    return {
        "dataset": dataset,
        "model": model,
        "template": template,
        "persona": persona,
        "n_pairs": n_pairs,
        "n_parsed": n_parsed,
        "coverage": n_parsed / n_pairs,
        "kappa": kappa,
        "qwk": qwk,
        "macro_f1": f1,
        "n_confidence": n_conf,
        "confidence_coverage": n_conf / n_parsed if n_parsed else math.nan,
        "RO": ro,
        "RU": ru,
        "HMR": hmr,
        "mean_confidence": 80.0,
    }


def metrics() -> pd.DataFrame:
    """Model a runs both templates on LLMJudge, model b only wo_cot (as GPT-4o in PERAS); LA
    beats default on a's kappa; b's LA has an undefined kappa."""
    rows = [
        metrics_row("llmjudge", "a", "wo_cot", "default", 0.30, 0.50, 0.40, 0.2, 0.9, 0.33),
        metrics_row("llmjudge", "a", "wo_cot", "LA", 0.35, 0.45, 0.40, 0.3, 0.8, 0.44, n_parsed=5, n_conf=5),
        metrics_row("llmjudge", "a", "w_cot", "default", 0.20, 0.40, 0.30, 0.1, 0.95, 0.18),
        metrics_row("llmjudge", "a", "w_cot", "LA", 0.10, 0.30, 0.35, 0.1, 0.90, 0.18),
        metrics_row("llmjudge", "b", "wo_cot", "default", 0.25, 0.55, 0.45, 0.2, 0.9, 0.33),
        metrics_row(
            "llmjudge", "b", "wo_cot", "LA", math.nan, 0.60, 0.40, 0.2, 0.9, 0.33, n_parsed=0, n_conf=0
        ),
        metrics_row("dl19", "a", "wo_cot", "default", 0.5, 0.5, 0.5, 0.5, 0.5, 0.5),
        metrics_row("dl19", "a", "wo_cot", "LA", 0.5, 0.5, 0.5, 0.5, 0.5, 0.5),
    ]
    return pd.DataFrame(rows)


def test_table7_cells_order_marks_and_empty_cells():
    w = tb.wide_table(metrics(), "table7")
    assert w.rows == [("a", "default"), ("a", "LA"), ("b", "default"), ("b", "LA")]
    cols = [(d, t, c) for d, t, c in w.columns]
    assert cols[:4] == [("llmjudge", "wo_cot", m) for m in ("kappa", "qwk", "macro_f1", "coverage")]
    assert ("dl19", "w_cot", "kappa") not in cols  # no model ran w_cot on dl19
    assert w.cell(("a", "LA"), ("llmjudge", "wo_cot", "kappa")) == "0.350↑"
    assert w.cell(("a", "LA"), ("llmjudge", "wo_cot", "qwk")) == "0.450"  # below default
    assert w.cell(("a", "LA"), ("llmjudge", "wo_cot", "macro_f1")) == "0.400"  # equal: no mark
    assert w.cell(("a", "LA"), ("llmjudge", "wo_cot", "coverage")) == "0.500"  # never marked
    assert w.cell(("a", "LA"), ("llmjudge", "w_cot", "macro_f1")) == "0.350↑"
    assert w.cell(("b", "LA"), ("llmjudge", "wo_cot", "kappa")) == "n/a"  # undefined
    assert w.cell(("b", "LA"), ("llmjudge", "wo_cot", "coverage")) == "0.000"
    assert w.cell(("b", "default"), ("llmjudge", "w_cot", "kappa")) == ""  # not run
    assert w.cell(("b", "default"), ("dl19", "wo_cot", "kappa")) == ""


def test_table8_coverage_is_pairs_with_a_confidence_over_all_pairs():
    w = tb.wide_table(metrics(), "table8")
    assert [c for d, t, c in w.columns[:4]] == ["RO", "RU", "HMR", "calibration_coverage"]
    assert w.cell(("a", "default"), ("llmjudge", "wo_cot", "calibration_coverage")) == "0.600"  # 6 / 10
    assert w.cell(("a", "LA"), ("llmjudge", "wo_cot", "HMR")) == "0.440↑"
    assert w.cell(("a", "LA"), ("llmjudge", "wo_cot", "RU")) == "0.800"


def test_wide_tables_render_in_every_format_and_flatten_for_tsv():
    w = tb.wide_table(metrics(), "table7")
    md = tb.render_wide(w, "md")
    lines = md.splitlines()
    assert lines[0].startswith("| Model | P. | LLMJudge w/o CoT κ | LLMJudge w/o CoT QWK |")
    assert "| a | Df. | 0.300 |" in md and "|  | LA | 0.350↑ |" in md
    assert "| b | Df. |" in md
    tex = tb.render_wide(w, "tex")
    assert r"\multicolumn{8}{c}{LLMJudge}" in tex and r"\multicolumn{4}{c}{w/o CoT}" in tex
    assert r"0.350$\uparrow$" in tex and r"Model & P. & $\kappa$ & QWK & F1 & Cov." in tex
    html = tb.render_wide(w, "html", "cap")
    assert "<p>cap</p>" in html and "0.350↑" in html
    flat = tb.flat_wide(w)
    assert list(flat.columns[:4]) == ["model", "persona", "llmjudge/wo_cot/kappa", "llmjudge/wo_cot/qwk"]
    b = flat.set_index(["model", "persona"])
    assert math.isclose(b.loc[("a", "LA"), "llmjudge/wo_cot/kappa"], 0.35)
    assert pd.isna(b.loc[("b", "default"), "llmjudge/w_cot/kappa"])


def test_wide_tables_job_reads_the_long_table(tmp_path):
    from judgelab.data.tables import write_tsv
    from judgelab.studies.peras.jobs import wide_tables_job

    write_tsv(metrics(), tmp_path / "metrics.tsv")
    out = {
        f"{t}_{e}": str(tmp_path / f"{t}.{e}")
        for e in ("tsv", "md", "tex", "html")
        for t in ("table7", "table8")
    }
    wide_tables_job(str(tmp_path / "metrics.tsv"), "default", out, "parsed")
    t7 = read_ids_table(tmp_path / "table7.tsv")
    assert list(t7["persona"]) == ["default", "LA", "default", "LA"]
    assert "0.440↑" in (tmp_path / "table8.md").read_text()


def test_table4_counts_and_the_seed_layout():
    t = pd.DataFrame(
        {
            "dataset": "x",
            "qid": ["q2", "q2", "q10", "q10", "q10"],
            "docid": ["a", "b", "c", "d", "e"],
            "grade": [0, 3, 0, 0, 1],
        }
    )
    t4 = tb.table4({"x": t})
    assert t4.iloc[0].to_dict() == {
        "dataset": "x",
        "topics": 2,
        "pairs": 5,
        "qrel_0": 3,
        "qrel_1": 1,
        "qrel_2": 0,
        "qrel_3": 1,
        "topic_ids": "q10 q2",
    }
    md = tb.render_table4(t4, "md")
    assert md.splitlines()[0] == "| Dataset | #topics | #docs | #qrel=0 | #qrel=1 | #qrel=2 | #qrel=3 |"
    assert "| x | 2 | 5 | 3 | 1 | 0 | 1 |" in md
    tex = tb.render_table4(t4, "tex")
    assert r"Dataset & \#topics & \#docs & \#qrel=0" in tex


def test_table4_of_the_seed_llmjudge_set(shared_data):
    """The shared dev qrels without q20, q21, q42, q48 print as the paper's Table 4 row."""
    q = read_qrels(shared_data / "llmjudge" / "llm4eval_dev_qrel_2024.txt")
    t = pd.DataFrame([(x.qid, x.docid, x.grade) for x in q], columns=["qid", "docid", "grade"])
    t = select(t, exclude_queries=["q20", "q21", "q42", "q48"])
    md = tb.render_table4(tb.table4({"llmjudge": t}), "md")
    assert "| LLMJudge | 21 | 6,169 | 3,834 | 1,277 | 588 | 470 |" in md
