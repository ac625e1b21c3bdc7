"""The interpretations When LLM Judges Inflate Scores leaves open in section 3, each a config key
(issue 18): where the original labels come from (``perturbations.original``: PERAS, or the
overrating study's graded run as in the paper), the rewrite filter, the stopword list and reviewed
SEM sentences; and the tables of Figures 1 and 3 pooled over the datasets. Fast: no model."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from test_perturbations_plan import write_config

from judgelab.cache.keys import request_key
from judgelab.cache.store import RequestCache
from judgelab.errors import InputError
from judgelab.llm.backends import make_backend
from judgelab.llm.backends.base import Completion
from judgelab.llm.client import cache_request
from judgelab.llm.readings import pointwise_requests
from judgelab.studies.perturbations.insertions import generate_sem, load_stopwords, read_reviewed_sem
from judgelab.studies.perturbations.originals import variant_requests
from judgelab.studies.perturbations.outcomes import pool_distributions, pool_transitions
from judgelab.studies.perturbations.settings import OriginalJudge, SemWriter
from judgelab.wiring.estimate import dataset_pairs, estimate
from judgelab.wiring.facade import Project

GPT = {"backend": "openai", "model": "gpt-4o-mini", "prices": {"input": 0.15, "output": 0.60}}


def overrating_config(tmp_path, overrating=None, **pert):
    cfg = write_config(tmp_path, original="overrating", **pert)
    cfg["overrating"] = {"enabled": False, "pointwise": {"max_tokens": 16}, **(overrating or {})}
    import yaml

    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    return Project.load([], tmp_path)


# -- original: overrating ---------------------------------------------------------------------------


def test_original_overrating_uses_the_graded_run_its_prompt_bound_and_no_persona(tmp_path):
    project = overrating_config(tmp_path)
    plan = project.plan("perturbations")
    fx = ("dataset", "fx")
    jobs = [(j.rule, j.model, j.wildcards) for j in plan.llm_jobs()]
    assert jobs[0] == ("overrating_pointwise", "gpt", (fx, ("model", "gpt"), ("scale", "graded")))
    assert not any(r == "peras_judge" for r, _, _ in jobs)
    assert plan.judgments("fx", "gpt") == "results/overrating/pointwise/fx/gpt/graded.tsv"
    ovr = project.plan("overrating")
    assert plan.judge_template_text == ovr.prompts["graded"].template
    assert plan.judge_max_tokens == 16 and plan.judge_persona is None and plan.judge_answer("gpt") == "parse"
    assert plan.coverage().bound_key == "overrating.pointwise.max_tokens"
    pairs = pd.DataFrame({"query": ["q"], "passage": ["p"]})
    assert plan.judge_requests(pairs, "gpt", "") == pointwise_requests(
        pairs, ovr.prompts["graded"], max_tokens=16
    )
    # the re-judge jobs' judge (one param): the graded prompt, its bound, no persona, parsed
    judge = plan.judge("gpt")
    assert judge.original == "overrating" and judge.persona == "" and judge.answer == "parse"
    assert judge.coverage == plan.coverage() and judge.spec == project.model_entry("gpt")
    assert OriginalJudge.from_param(judge.param()) == judge
    assert variant_requests(pairs, judge) == plan.judge_requests(pairs, "gpt", "")


def test_original_overrating_job_not_repeated_when_the_overrating_study_runs_it(tmp_path):
    project = overrating_config(tmp_path, overrating={"enabled": True, "pairwise": {"enabled": False}})
    assert not [j for j in project.plan("perturbations").llm_jobs() if j.rule == "overrating_pointwise"]
    assert sorted(
        (j.study, j.wc["scale"]) for j in project.llm_jobs() if j.rule == "overrating_pointwise"
    ) == [
        ("overrating", "binary"),
        ("overrating", "graded"),
    ]


def test_original_overrating_needs_the_graded_scale_and_the_judges(tmp_path):
    with pytest.raises(InputError, match="perturbations.original.*overrating.pointwise.scales"):
        overrating_config(tmp_path, overrating={"pointwise": {"scales": ["binary"]}})
    with pytest.raises(InputError, match=r"perturbations.judges\[0\].*overrating.judges"):
        overrating_config(tmp_path, overrating={"judges": ["other"]}, judges=["gpt"])


def test_the_estimate_reads_the_original_graded_labels_from_the_cache(tmp_path):
    project = overrating_config(tmp_path, variants=[], insertions=["QRY"])
    table, _ = estimate(project, directory=tmp_path)
    before = {r.stage: (r.calls, r.cached) for r in table.itertuples()}
    assert before["overrating_pointwise"] == (8, 0)
    # cache the graded answers (human grades 101: d1 3, d2 2, d3 1, d4 0; 102: d5 3, d6 0, d7 0, d8 1)
    backend = make_backend(dict(GPT), "gpt", need_key=False)
    src = dataset_pairs(project, "fx", directory=tmp_path)
    answers = {"d1": "3", "d2": "1", "d3": "0", "d4": "0", "d5": "2", "d6": "0", "d7": "0", "d8": "maybe"}
    prompt = project.plan("overrating").prompts["graded"]
    cache = RequestCache(tmp_path / "cache" / "requests.sqlite")
    for (_, row), req in zip(src.pairs.iterrows(), pointwise_requests(src.pairs, prompt, max_tokens=16)):
        cache.put(
            request_key(cache_request(backend, req)),
            cache_request(backend, req),
            Completion(text=answers[row["docid"]], prompt_tokens=10, completion_tokens=1).to_json(),
        )
    cache.close()
    table, _ = estimate(Project.load([], tmp_path), directory=tmp_path)
    after = {r.stage: (r.calls, r.cached) for r in table.itertuples()}
    assert after["overrating_pointwise"] == (8, 8)
    # QRY is re-judged on the passages with grade 0 and label 0: d4 (101), d6, d7 (102); d3 is grade 1
    assert after["rejudge"] == (3, 0)


# -- stopwords and reviewed SEM sentences -----------------------------------------------------------


def test_the_stopword_list_is_a_tracked_param_and_checked_before_any_job(tmp_path):
    write_config(tmp_path, stopwords="sklearn")
    sk = Project.load([], tmp_path).plan("perturbations")
    write_config(tmp_path)
    nl = Project.load([], tmp_path).plan("perturbations")
    assert nl.section["stopwords"] == "nltk_english"  # the schema's default
    assert "us" in sk.stopwords_param.split("\n") and "us" not in nl.stopwords_param.split("\n")
    write_config(tmp_path, stopwords="nosuch")
    with pytest.raises(InputError, match="perturbations.stopwords"):
        Project.load([], tmp_path)


REVIEWED = "qid\tsentence\tdataset\n101\tThese orange pet carp keep getting bigger.\t\n102\tIt is about wifi.\tother\n"


def test_reviewed_sem_sentences_replace_generation_where_given(tmp_path):
    words = load_stopwords("sklearn")
    f = tmp_path / "sem.tsv"
    f.write_text(REVIEWED, encoding="utf-8")
    queries = {"101": "do goldfish grow", "102": "wifi range"}
    given = read_reviewed_sem(f, queries, words, dataset="fx")
    assert given == {
        "101": ("These orange pet carp keep getting bigger.", f"{f}:2")
    }  # 102: another dataset's
    writer = SemWriter("", template="{query} {terms} {attempt}", max_tokens=8, max_attempts=2)
    out = generate_sem(queries, writer, None, stopwords=words, reviewed=given)
    by = out.set_index("qid")
    assert (
        by.loc["101", "source"] == "reviewed" and bool(by.loc["101", "ok"]) and by.loc["101", "attempts"] == 0
    )
    assert json.loads(by.loc["101", "tries"]) == [{"reviewed": f"{f}:2"}]
    assert not bool(by.loc["102", "ok"]) and "no reviewed sentence" in by.loc["102", "reason"]


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "qid\tsentence\n101\tGoldfish get bigger over time.\n",
            r"sem.tsv:2: .*fails the SEM check: query terms: goldfish",
        ),
        ("qid\tsentence\n101\tSure!\n", r"sem.tsv:2: .*too short"),
        (
            "qid\tsentence\n101\tA carp keeps getting bigger.\n101\tAnother one.\n",
            r"sem.tsv:3: qid 101 given twice",
        ),
        ("qid\ttext\n101\tx\n", r"sem.tsv:1: the header must name the columns qid and sentence"),
        ("qid\tsentence\n101\n", r"sem.tsv:2: 1 fields"),
    ],
)
def test_a_bad_reviewed_file_names_the_file_and_line(tmp_path, text, message):
    f = tmp_path / "sem.tsv"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_reviewed_sem(f, {"101": "do goldfish grow"}, load_stopwords("sklearn"), dataset="fx")


def test_with_reviewed_sentences_sem_needs_no_rewriter_and_asks_nothing_for_them(tmp_path):
    f = tmp_path / "sem.tsv"
    f.write_text(REVIEWED, encoding="utf-8")
    write_config(tmp_path, variants=[], rewriter=None, sem_sentences=str(f))
    project = Project.load([], tmp_path)
    plan = project.plan("perturbations")
    assert "perturbation_sem" not in {j.rule for j in plan.llm_jobs()}
    write_config(tmp_path, variants=[], sem_sentences=str(tmp_path / "missing.tsv"))
    with pytest.raises(InputError, match="perturbations.sem_sentences"):
        Project.load([], tmp_path)
    write_config(tmp_path, variants=[], sem_sentences=str(f))
    table, _ = estimate(Project.load([], tmp_path), directory=tmp_path)
    stages = {r.stage: r.calls for r in table.itertuples()}
    # nothing cached: both queries may have candidates; 101 has its reviewed sentence (no
    # request), 102 is generated: every attempt counted
    assert stages["sem"] == 3


# -- pooled over the datasets ------------------------------------------------------------------------


def test_transitions_and_distributions_pool_counts_and_recompute_shares():
    def trans(counts, missing):
        rows = []
        for o in range(4):
            parsed = sum(counts.get((o, n), 0) for n in range(4))
            for n in range(4):
                c = counts.get((o, n), 0)
                rows.append(
                    {
                        "judge": "m",
                        "variant": "SUM",
                        "original_label": o,
                        "new_label": n,
                        "count": c,
                        "share": c / parsed if parsed else float("nan"),
                        "row_parsed": parsed,
                        "row_missing": missing.get(o, 0),
                    }
                )
        return pd.DataFrame(rows)

    a = trans({(1, 1): 1, (1, 0): 1, (3, 2): 2}, {1: 1})
    b = trans({(1, 0): 2}, {})
    pooled = pool_transitions([a, b]).set_index(["original_label", "new_label"])
    # row 1: 1 + 0 kept, 1 + 2 lowered to 0 -> shares 3/4 and 1/4; one missing answer
    assert pooled.loc[(1, 0), "count"] == 3 and pooled.loc[(1, 0), "share"] == pytest.approx(0.75)
    assert pooled.loc[(1, 1), "share"] == pytest.approx(0.25) and pooled.loc[(1, 0), "row_missing"] == 1
    assert pooled.loc[(3, 2), "share"] == 1.0 and pd.isna(pooled.loc[(0, 0), "share"])
    d1 = pd.DataFrame(
        {
            "judge": "m",
            "variant": "QRY",
            "label": [0, 1, 2, 3],
            "count": [1, 0, 0, 1],
            "n_parsed": 2,
            "n_missing": 1,
        }
    )
    d2 = d1.assign(count=[0, 0, 2, 0], n_parsed=2, n_missing=0)
    dist = pool_distributions([d1, d2]).set_index("label")
    assert dist["share"].tolist() == pytest.approx([0.25, 0.0, 0.5, 0.25])
    assert dist["coverage"].tolist() == pytest.approx([0.8] * 4)  # 4 parsed of 5


def test_pooled_targets_only_with_several_datasets(tmp_path):
    write_config(tmp_path)
    assert not any(
        "perturbations-pooled" in t for t in Project.load([], tmp_path).plan("perturbations").targets()
    )


@pytest.mark.slow
def test_a_workflow_with_reviewed_sentences_and_no_rewriter_schedules_sem_without_a_model(tmp_path):
    import yaml
    from snakerun import dry_run_jobs, make_workdir, output, snakemake

    wd = make_workdir(tmp_path / "wf", "perturbations")
    (wd / "sem.tsv").write_text("qid\tsentence\n101\tThese orange pet carp keep getting bigger.\n")
    extra = {"perturbations": {"variants": [], "rewriter": None, "sem_sentences": "sem.tsv"}}
    (wd / "extra.yaml").write_text(yaml.safe_dump(extra))
    dry = snakemake(wd, "-n", "perturbations", "--configfile", str(wd / "extra.yaml"), cores=1, timeout=600)
    assert dry.returncode == 0, output(dry)[-3000:]
    rules = [rule for rule, _ in dry_run_jobs(output(dry))]
    assert "perturbation_sem" in rules and "perturbation_rewrite" not in rules
