"""A tiny end-to-end run of the perturbation jobs (When LLM Judges Inflate Scores, section 3) with
the embedded model as rewriter, meaning checker, SEM generator and judge: sample, rewrites with the
meaning check, SEM/LEX/QRY insertions, re-judging, transitions, distributions and figures; then a
rerun that the request cache answers entirely."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import FIXTURES, needs_model

from judgelab.data.prepare import build_trec_table
from judgelab.data.tables import write_dataset, write_tsv
from judgelab.llm.prompts import load_template
from judgelab.llm.session import JobContext
from judgelab.studies.perturbations import jobs as pj
from judgelab.studies.perturbations.insertions import (
    INSERTION_VARIANTS,
    lex_sentence,
    load_stopwords,
    sem_failure,
)
from judgelab.studies.perturbations.outcomes import VARIANTS
from judgelab.studies.perturbations.rewrites import (
    REASONS,
    REWRITE_VARIANTS,
    parse_meaning_verdict,
    read_variant_table,
)
from judgelab.studies.perturbations.settings import (
    Insertion,
    InsertionFigure,
    OriginalJudge,
    Sampling,
    Selection,
    SemWriter,
    TransitionFigure,
    Writer,
)

MODEL = {"backend": "local", "n_ctx": 2048, "threads": 1, "name": "smollm2"}
WORDS = load_stopwords("nltk_english", FIXTURES.parents[1] / "resources")


@pytest.mark.slow
@needs_model
def test_perturbation_jobs_end_to_end(tmp_path, tmp_cache):
    trec = FIXTURES / "trec"
    pairs = tmp_path / "pairs.tsv"
    table = build_trec_table("t", trec / "qrels.txt", trec / "topics.txt", trec / "texts.tsv")
    write_dataset(table, pairs)
    # The original judgment is input data here (constructed labels, so that every stage has
    # pairs: two grade-0 passages labelled 0 get the insertions); the model runs from the sample on.
    labels = {"d1": 3, "d4": 0, "d6": 0, "d8": 1}
    judged = pd.DataFrame(
        {
            "dataset": "t",
            "qid": table["qid"],
            "docid": table["docid"],
            "label": pd.array([labels.get(d) for d in table["docid"]], dtype="Int64"),
            "answer": "scripted",
        }
    )
    judged["parsed"] = judged["label"].notna()
    judgments = tmp_path / "judgments.tsv"
    write_tsv(judged, judgments)
    judge = OriginalJudge(
        "smollm2",
        spec=MODEL,
        template=load_template("peras/wo_cot"),
        labels=("0", "1", "2", "3"),
        persona="",
        placement="user",
        max_tokens=8,
        answer="logits",
        original="peras",
    )
    context = JobContext(str(tmp_cache))

    out = tmp_path / "perturbations"
    sample = out / "samples" / "smollm2.tsv"
    s = pj.sample_job(str(pairs), str(judgments), str(sample), "smollm2", Sampling(per_label=1, seed=1))
    assert sorted(s["docid"]) == ["d1", "d4", "d6", "d8"]  # one per query and label, parsed only

    check = Writer("smollm2", MODEL, load_template("perturbations/meaning_check"), max_tokens=2)
    rewrites = {}
    for v in REWRITE_VARIANTS:
        path = out / "rewrites" / f"{v.lower()}.tsv"
        rewriter = Writer("smollm2", MODEL, load_template(f"perturbations/{v.lower()}"), max_tokens=24)
        r = pj.rewrite_job([str(sample)], str(path), v, rewriter, check, context)
        assert len(r) == len(s) and (r["variant"] == v).all()
        assert (r["kept"] == (r["verdict"] == "preserved")).all()
        assert set(r["reason"]) <= {"", *REASONS}
        assert (r.loc[r["kept"], "text"].str.len() > 0).all()
        assert (r.loc[r["reason"] == "unparsable", "check_answer"].map(parse_meaning_verdict).isna()).all()
        assert (r["rewrite_completion_tokens"] <= 24).all()
        back = read_variant_table(str(path))
        assert back["kept"].tolist() == r["kept"].tolist()
        rewrites[v] = path

    insertions = {}
    lex = load_template("perturbations/lex")
    sem = SemWriter("smollm2", MODEL, load_template("perturbations/sem"), max_tokens=24, max_attempts=2)
    for v, kwargs in {
        "SEM": {"writer": sem, "context": context},
        "LEX": {},
        "QRY": {},
    }.items():
        path = out / "insertions" / f"{v.lower()}.tsv"
        sentences = out / "insertions" / f"{v.lower()}_sentences.tsv"
        insertion = Insertion(v, tuple(WORDS), lex if v == "LEX" else "")
        t = pj.insertion_job([str(sample)], str(path), str(sentences), insertion, **kwargs)
        assert list(t["docid"]) == ["d4", "d6"]  # grade 0 and label 0
        sent = pd.read_csv(sentences, sep="\t", dtype={"qid": str}, keep_default_na=False)
        for row in t.itertuples():
            if v == "LEX":
                assert row.text == lex_sentence(row.query, lex, WORDS) + " " + row.original
            elif v == "QRY":
                assert row.text == row.query + " " + row.original
            elif row.ok:
                assert sem_failure(row.sentence, row.query, WORDS) == "" and row.text.endswith(row.original)
            else:
                assert row.text == "" and row.reason
        if v == "SEM":
            assert (sent["attempts"] <= 2).all() and (sent["ok"] | (sent["attempts"] == 2)).all()
        insertions[v] = path

    rejudged = {}
    for v in VARIANTS:
        table = rewrites.get(v) or insertions[v]
        path = out / "rejudged" / v.lower() / "smollm2.tsv"
        rj = pj.rejudge_job(str(sample), str(table), str(path), judge, Selection(v), context)
        usable = read_variant_table(str(table))
        n_usable = int(usable["kept" if v in REWRITE_VARIANTS else "ok"].sum())
        assert len(rj) == n_usable and list(rj.columns) == pj.REJUDGE_COLUMNS
        if v in ("LEX", "QRY"):
            assert len(rj) == 2 and (rj["original_label"] == 0).all()
        orig = s.set_index("docid")["label"]
        assert (rj["original_label"].to_numpy() == orig.loc[rj["docid"]].to_numpy()).all()
        assert (rj["label"].isna() == ~rj["parsed"]).all()
        assert rj["parsed"].all() and (rj["completion_tokens"] == 1).all()  # read from the logits
        rejudged[v] = path

    tables = out / "tables"
    trans = pj.transitions_job(
        [str(rejudged[v]) for v in REWRITE_VARIANTS],
        [str(rewrites[v]) for v in REWRITE_VARIANTS],
        str(tables / "transitions.tsv"),
        str(tables / "shifts.tsv"),
        str(tables / "kept.tsv"),
        "per_variant",
    )
    kept = pd.read_csv(tables / "kept.tsv", sep="\t").set_index("variant")
    for v in REWRITE_VARIANTS:
        r = read_variant_table(str(rewrites[v]))
        assert kept.loc[v, "kept"] == r["kept"].sum() and kept.loc[v, "n"] == len(r)
        rj = pj.read_rejudged(str(rejudged[v]))
        assert trans.loc[trans["variant"] == v, "count"].sum() == rj["label"].notna().sum()
    dist = pj.distributions_job(
        [str(rejudged[v]) for v in INSERTION_VARIANTS],
        [str(insertions[v]) for v in INSERTION_VARIANTS],
        str(tables / "distributions.tsv"),
        str(tables / "insertions.tsv"),
    )
    for v in INSERTION_VARIANTS:
        rj = pj.read_rejudged(str(rejudged[v]))
        assert dist.loc[dist["variant"] == v, "count"].sum() == rj["label"].notna().sum()

    figs = out / "figures"
    pj.transition_figure_job(
        str(tables / "transitions.tsv"),
        str(figs / "t.png"),
        str(figs / "t.pdf"),
        TransitionFigure("t", "smollm2", "smollm2", REWRITE_VARIANTS),
    )
    pj.insertion_figure_job(
        str(tables / "distributions.tsv"),
        str(figs / "i.png"),
        str(figs / "i.pdf"),
        InsertionFigure("t", INSERTION_VARIANTS),
    )
    assert all((figs / f).stat().st_size > 1000 for f in ("t.png", "t.pdf", "i.png", "i.pdf"))

    # a rerun is answered by the cache and writes the same table
    rewriter = Writer("smollm2", MODEL, load_template("perturbations/sum"), max_tokens=24)
    again = pj.rewrite_job([str(sample)], str(tmp_path / "again.tsv"), "SUM", rewriter, check, context)
    assert again["rewrite_cache_hit"].all()
    assert again["check_cache_hit"].dropna().astype(bool).all()
    first = read_variant_table(str(rewrites["SUM"]))
    assert again["text"].tolist() == first["text"].tolist()
    assert again["kept"].tolist() == first["kept"].tolist()
