"""``judgelab estimate``: the requests the jobs would build, looked up in the cache (hits are free),
with token and cost estimates; datasets not downloaded yet are counted by their known size."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT

from judgelab import cli
from judgelab.cache.keys import request_key
from judgelab.cache.store import RequestCache
from judgelab.data.prepare import build_trec_table
from judgelab.data.tables import write_dataset
from judgelab.errors import InputError
from judgelab.llm.backends import make_backend
from judgelab.llm.backends.base import Completion
from judgelab.llm.client import cache_request
from judgelab.llm.judge import Judge
from judgelab.llm.judging import judgment_requests
from judgelab.llm.personas import load_persona_file
from judgelab.llm.prompts import load_template
from judgelab.studies.peras.confidence import confidence_requests
from judgelab.wiring.estimate import approx_tokens, estimate
from judgelab.wiring.facade import Project

SAMPLE = ROOT / "resources" / "sample" / "dl19"
GPT = {"backend": "openai", "model": "gpt-4o-mini", "prices": {"input": 0.15, "output": 0.60}}


def write_config(folder, **datasets):
    cfg = {
        "results": "results",
        "cache": "cache/requests.sqlite",
        "datasets": datasets or {"dl19": {"source": "sample", "format": "trec"}},
        "models": {"gpt": GPT},
        "judges": ["gpt"],
        "peras": {
            "templates": {"wo_cot": {"template": "peras/wo_cot", "max_tokens": 8}},
            "confidence": {"template": "peras/confidence", "max_tokens": 8},
        },
        "personas": {
            "file": "peras_table1",
            "source": "paper",
            "include": ["default", "LA"],
            "placement": "user",
            "generation": {
                "enabled": False,
                "model": "gpt",
                "keywords_template": "peras/persona_keywords",
                "instruction_template": "peras/persona_instruction",
                "max_tokens": 96,
            },
        },
    }
    (folder / "config").mkdir(exist_ok=True)
    (folder / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    return cfg


def test_estimate_counts_exactly_the_job_requests_and_cache_hits_are_free(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # an estimate needs no key
    write_config(tmp_path)
    project = Project.load([], tmp_path)
    pairs = build_trec_table("dl19", SAMPLE / "qrels.txt", SAMPLE / "topics.txt", SAMPLE / "texts.tsv")
    personas = load_persona_file()
    judge_tpl, conf_tpl = load_template("peras/wo_cot"), load_template("peras/confidence")
    la = personas["LA"].instruction
    judge_reqs = judgment_requests(
        pairs, Judge("judge", template=judge_tpl, max_tokens=8)
    ) + judgment_requests(pairs, Judge("judge", template=judge_tpl, persona=la, max_tokens=8))

    table, notes = estimate(project, directory=tmp_path)
    judge = table.set_index("stage").loc["peras_judge"]
    n = 2 * len(pairs)
    assert (judge.calls, judge.cached, judge.to_send) == (n, 0, n)
    assert judge.input_tokens == sum(approx_tokens(r) for r in judge_reqs)
    assert judge.output_tokens_max == 8 * n
    assert judge.cost_usd == pytest.approx((judge.input_tokens * 0.15 + 8 * n * 0.60) / 1e6)
    conf = table.set_index("stage").loc["peras_confidence"]
    assert conf.calls == n and conf.cached == 0  # upper bound: every label assumed to parse
    assert any("characters/4" in x for x in notes)
    assert any("OPENAI_API_KEY: NOT SET" in x for x in notes)

    # answers from an earlier run: a parsed label (its confidence answered too) and an unparsable one
    backend = make_backend(dict(GPT), "gpt", need_key=False)
    first = pairs.iloc[[0]]
    conf_req = confidence_requests(first, [2], Judge("gpt", template=conf_tpl, labels=(), max_tokens=8))[0]
    with RequestCache(tmp_path / "cache" / "requests.sqlite") as cache:
        for req, text in ((judge_reqs[0], "2"), (judge_reqs[1], "no idea"), (conf_req, "80")):
            cache.put(
                request_key(cache_request(backend, req)),
                cache_request(backend, req),
                Completion(text=text, prompt_tokens=100, completion_tokens=1).to_json(),
            )
    table, _ = estimate(project, directory=tmp_path)
    judge = table.set_index("stage").loc["peras_judge"]
    conf = table.set_index("stage").loc["peras_confidence"]
    assert (judge.calls, judge.cached) == (n, 2)
    assert judge.input_tokens == sum(approx_tokens(r) for r in judge_reqs[2:])
    assert (conf.calls, conf.cached) == (n - 1, 1)  # the unparsable answer asks no confidence


def test_datasets_not_downloaded_use_their_known_size_and_tables_can_be_given(tmp_path, capsys):
    write_config(
        tmp_path,
        dl19={"source": "download", "format": "trec"},
        llmjudge={"source": "download", "format": "llmjudge"},
    )
    table, notes = estimate(Project.load([], tmp_path), directory=tmp_path)
    rows = table.set_index(["dataset", "stage"])
    assert rows.loc[("dl19", "peras_judge"), "calls"] == 2 * 9260
    assert rows.loc[("llmjudge", "peras_judge"), "calls"] == 2 * 4423
    assert not rows["exact"].any()
    assert any("dl19: 9,260 pairs from not downloaded yet" in x for x in notes)

    small = tmp_path / "dl19.tsv"
    write_dataset(
        build_trec_table("dl19", SAMPLE / "qrels.txt", SAMPLE / "topics.txt", SAMPLE / "texts.tsv"), small
    )
    out = tmp_path / "estimate.tsv"
    assert cli.main(["estimate", "-d", str(tmp_path), "--table", f"dl19={small}", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "nothing is sent" in text and "gpt: " in text and "cost <= $" in text
    assert f"dl19: 24 pairs from table {small}" in text
    assert "llmjudge: 4,423 pairs from not downloaded yet" in text
    assert out.read_text().startswith("dataset\tmodel\tstage\tjobs\tcalls")


def test_configfiles_merge_like_snakemake_and_bad_keys_are_named(tmp_path, capsys):
    write_config(tmp_path)
    over = tmp_path / "more.yaml"
    over.write_text(
        yaml.safe_dump(
            {
                "models": {
                    "claude": {
                        "backend": "anthropic",
                        "model": "c",
                        "batch": True,
                        "prices": {"input": 1, "output": 5},
                    }
                },
                "judges": ["gpt", "claude"],
            }
        )
    )
    project = Project.load([over], tmp_path)
    assert list(project.config["models"]) == ["gpt", "claude"]  # merged over config/config.yaml
    table, _ = estimate(project, directory=tmp_path)
    claude = table[(table.model == "claude") & (table.stage == "peras_judge")].iloc[0]
    assert claude.batch and claude.cost_usd == pytest.approx(
        0.5 * (claude.input_tokens * 1 + claude.output_tokens_max * 5) / 1e6
    )

    over.write_text(yaml.safe_dump({"models": {"gpt": {"concurrency": 0}}}))
    with pytest.raises(InputError, match="models.gpt.concurrency"):
        Project.load([over], tmp_path)
    assert cli.main(["estimate", "-d", str(tmp_path), "--configfile", str(over)]) == 2
    assert "models.gpt.concurrency" in capsys.readouterr().err


def test_a_config_file_is_read_as_it_is_now_and_each_reader_gets_its_own_copy(tmp_path):
    """read_yaml keeps the parse of each text (the schema is parsed once per process): an edit of
    the same size, at once, is read; changing what one read returned changes no other read."""
    from judgelab.project.config import read_yaml

    f = tmp_path / "c.yaml"
    f.write_text("a: [1, 2]\nb: 3\n")
    first = read_yaml(f)
    first["a"].append(9)
    assert read_yaml(f) == {"a": [1, 2], "b": 3}
    f.write_text("a: [1, 5]\nb: 3\n")
    assert read_yaml(f) == {"a": [1, 5], "b": 3}
    f.write_text("a: [1, 5\nb: 3\n")
    with pytest.raises(InputError, match=r"c\.yaml:2: invalid YAML"):
        read_yaml(f)


# -- prepared tables made by another config ------------------------------------------------------


@pytest.fixture(scope="module")
def default_run_tables(tmp_path_factory):
    """A run folder of the default config where the workflow prepared its dataset tables (the
    bundled samples, 2 pairs per grade of DL19 and DL20, DL21 whole): Snakemake's records too."""
    from snakerun import output, snakemake

    wd = tmp_path_factory.mktemp("default-run")
    shutil.copytree(ROOT / "config", wd / "config")
    targets = [f"results/datasets/{d}.tsv" for d in ("dl19", "dl20", "dl21")]
    res = snakemake(wd, *targets, timeout=900)
    assert res.returncode == 0, output(res)[-3000:]
    return wd


def load_in(wd, monkeypatch, *configfiles):
    monkeypatch.chdir(wd)
    return Project.load([str(ROOT / "config" / f) for f in configfiles], ".", ROOT)


@pytest.mark.slow
def test_a_prepared_table_counts_only_for_the_config_that_made_it(default_run_tables, monkeypatch):
    wd = default_run_tables
    _, notes = estimate(load_in(wd, monkeypatch), directory=".")
    assert f"dl19: 8 pairs from prepared table {Path('results/datasets/dl19.tsv')}" in notes
    # config/sample-full.yaml judges all 24 pairs: counted from the raw files, saying why
    table, notes = estimate(load_in(wd, monkeypatch, "sample-full.yaml"), directory=".")
    assert table.set_index(["dataset", "stage"]).loc[("dl19", "peras_judge"), "calls"] == 24 * 11 * 2
    assert table["exact"].all()
    note = next(n for n in notes if n.startswith("dl19: "))
    assert note.startswith("dl19: 24 pairs from raw files (sample), prepared in memory (prepared table ")
    assert "not used: made with another selection (" in note and "per_grade 2 there, None here" in note


@pytest.mark.slow
def test_the_paper_config_is_not_estimated_on_the_default_runs_tables(
    default_run_tables, tmp_path, monkeypatch
):
    # the paper config on two personas and datasets (every model x template cell of them): quicker
    narrow = tmp_path / "narrow.yaml"
    narrow.write_text(
        yaml.safe_dump(
            {
                "personas": {"include": ["default", "LA"]},
                "peras": {"datasets": ["dl19", "dl21"], "cells": None},
            }
        )
    )

    def run(wd):
        monkeypatch.chdir(wd)
        project = Project.load([str(ROOT / "config" / "paper-peras.yaml"), str(narrow)], ".", ROOT)
        return estimate(project, directory=".")

    fresh = tmp_path / "fresh"
    shutil.copytree(ROOT / "config", fresh / "config")
    want, _ = run(fresh)
    got, notes = run(default_run_tables)
    assert got.drop(columns="exact").equals(want.drop(columns="exact"))
    assert not got["exact"].any()
    calls = got.set_index(["dataset", "model", "stage"])["calls"]
    assert calls[("dl19", "gpt-4o-mini", "peras_judge")] == 9260 * 2 * 2  # pairs x personas x templates
    note = next(n for n in notes if n.startswith("dl19: "))
    assert "dl19: 9,260 pairs from not downloaded yet" in note
    assert "not used: made with another selection (" in note and "per_grade 2 there, None here" in note


def test_a_table_without_a_record_of_its_making_is_not_trusted(tmp_path, monkeypatch):
    write_config(tmp_path)
    table = tmp_path / "results" / "datasets" / "dl19.tsv"
    table.parent.mkdir(parents=True)
    first = build_trec_table("dl19", SAMPLE / "qrels.txt", SAMPLE / "topics.txt", SAMPLE / "texts.tsv")
    write_dataset(first.iloc[:3], table)  # e.g. written by `judgelab prepare`, with another subset
    monkeypatch.chdir(tmp_path)
    result, notes = estimate(Project.load([], "."), directory=".")
    assert result.set_index("stage").loc["peras_judge", "calls"] == 2 * 24
    note = next(n for n in notes if n.startswith("dl19: "))
    assert "not used: no record of how it was made" in note


@pytest.mark.slow
def test_the_simulations_prepared_records_count_only_for_their_own_selection(tmp_path, monkeypatch):
    from snakerun import make_workdir, output, snakemake

    wd = make_workdir(tmp_path / "run", "simulation")
    res = snakemake(wd, "results/simulation/pandalm/records.jsonl", timeout=900)
    assert res.returncode == 0, output(res)[-3000:]
    monkeypatch.chdir(wd)
    _, notes = estimate(Project.load([], "."), directory=".")
    assert any(n.startswith("simulation pandalm: ") and "from prepared records" in n for n in notes)
    other = wd / "other.yaml"  # the same set with one evaluator more than the records were made for
    other.write_text(yaml.safe_dump({"simulation": {"datasets": {"pandalm": {"evaluators": []}}}}))
    _, notes = estimate(Project.load([str(other)], "."), directory=".")
    note = next(n for n in notes if n.startswith("simulation pandalm: "))
    assert "from sample file" in note and "prepared records" in note
    assert (
        "not used: made with another selection (evaluators ['annotator1', 'annotator2'] there, [] here)"
        in note
    )


def test_pairs_of_one_text_share_one_request_and_each_request_is_its_own_pairs():
    """The builders render each distinct query x passage (x label) once: a request per pair still,
    equal to the pair rendered on its own, the same object for the same text."""
    pairs = build_trec_table("dl19", SAMPLE / "qrels.txt", SAMPLE / "topics.txt", SAMPLE / "texts.tsv")
    twice = pd.concat([pairs, pairs.iloc[[0, 0, 1]]], ignore_index=True)
    judge = Judge("judge", template=load_template("peras/wo_cot"), max_tokens=8)
    reqs = judgment_requests(twice, judge)
    assert len(reqs) == len(twice)
    assert reqs == [judgment_requests(twice.iloc[[i]], judge)[0] for i in range(len(twice))]
    assert reqs[-3] is reqs[-2] is reqs[0] and reqs[-1] is reqs[1] and reqs[0] != reqs[1]
    conf = Judge("gpt", template=load_template("peras/confidence"), labels=(), max_tokens=8)
    labels = [2] * len(twice)
    labels[-2] = 3  # the same pair asked with another label: another request
    creqs = confidence_requests(twice, labels, conf)
    assert creqs == [confidence_requests(twice.iloc[[i]], [labels[i]], conf)[0] for i in range(len(twice))]
    assert creqs[-3] is creqs[0] and creqs[-2] != creqs[0]


def test_a_config_with_no_llm_job_says_0_requests_and_prints_no_empty_table():
    from judgelab.wiring.estimate import format_report

    empty = pd.DataFrame(columns=["dataset", "model", "stage", "jobs", "calls", "cost_usd"])
    text = format_report(empty, ["a note"])
    assert "(no LLM job in this configuration: 0 requests, 0 to send, cost 0)" in text
    assert "Empty DataFrame" not in text and "totals per model" not in text
    assert text.endswith("notes:\n  - a note")
