"""The perturbation study's plan (judgelab.studies.perturbations): its config checks name the key,
its LLM jobs (the PERAS judge job only where PERAS does not run it; a separate meaning checker
as a second model of the rewrite job), its targets, and the estimate's requests - exact where
the answers they depend on are cached, an upper bound where not. Fast: no model, no Snakemake."""

from __future__ import annotations

import pytest
import yaml
from conftest import FIXTURES

from judgelab.cache.keys import request_key
from judgelab.cache.store import RequestCache
from judgelab.errors import InputError
from judgelab.llm.backends import make_backend
from judgelab.llm.backends.base import Completion
from judgelab.llm.client import cache_request
from judgelab.llm.judge import Judge
from judgelab.llm.judging import judgment_requests
from judgelab.llm.prompts import load_template
from judgelab.studies.perturbations.insertions import sem_request
from judgelab.studies.perturbations.originals import variant_requests
from judgelab.studies.perturbations.rewrites import meaning_check_requests, rewrite_requests
from judgelab.studies.perturbations.settings import OriginalJudge, Selection
from judgelab.wiring.estimate import dataset_pairs, estimate
from judgelab.wiring.facade import Project

GPT = {"backend": "openai", "model": "gpt-4o-mini", "prices": {"input": 0.15, "output": 0.60}}
TREC = FIXTURES / "trec"


def write_config(folder, peras=None, **pert):
    cfg = {
        "results": "results",
        "cache": "cache/requests.sqlite",
        "datasets": {
            "fx": {
                "source": "files",
                "format": "trec",
                "qrels": str(TREC / "qrels.txt"),
                "topics": str(TREC / "topics.txt"),
                "texts": str(TREC / "texts.tsv"),
            }
        },
        "models": {"gpt": GPT, "other": {**GPT, "model": "gpt-4o"}},
        "judges": ["gpt"],
        "personas": {"include": ["default"], "generation": {"enabled": False}},
        "peras": {
            "enabled": False,
            "classifier": {"dataset": None},
            "templates": {"wo_cot": {"template": "peras/wo_cot", "max_tokens": 8}},
            **(peras or {}),
        },
        "perturbations": {
            "enabled": True,
            "template": "wo_cot",
            "persona": "default",
            "per_label": 2,
            "seed": 1,
            "rewriter": "gpt",
            "variants": ["PSV", "SUM"],
            "rewrite_max_tokens": 16,
            "sem_max_tokens": 16,
            "sem_max_attempts": 3,
            **pert,
        },
    }
    (folder / "config").mkdir(exist_ok=True)
    (folder / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    return cfg


# -- checks -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pert, key",
    [
        ({"template": "nope"}, "perturbations.template"),
        ({"persona": "LA"}, "perturbations.persona"),
        ({"judges": ["other"]}, r"perturbations.judges\[0\]"),
        ({"datasets": ["dl99"]}, r"perturbations.datasets\[0\]"),
        ({"rewriter": "nobody"}, "perturbations.rewriter"),
        ({"rewriter": None}, "perturbations.rewriter"),
        ({"checker": "nobody"}, "perturbations.checker"),
        ({"variants": ["PSV", "XYZ"]}, r"perturbations.variants\[1\]"),
        ({"per_label": 0}, "perturbations.per_label"),
    ],
)
def test_bad_section_names_the_key(tmp_path, pert, key):
    write_config(tmp_path, **pert)
    with pytest.raises(InputError, match=key):
        Project.load([], tmp_path)


def test_a_prompt_without_its_placeholder_names_the_key(tmp_path):
    bad = tmp_path / "sum.yaml"
    bad.write_text("template: Summarise the passage.\n")
    write_config(tmp_path, prompts={"SUM": str(bad)})
    with pytest.raises(
        InputError, match=r"perturbations.prompts.SUM.*\{passage\}|\{passage\}.*perturbations.prompts.SUM"
    ):
        Project.load([], tmp_path)


def test_a_disabled_study_is_not_checked_and_schedules_nothing(tmp_path):
    write_config(tmp_path, enabled=False, template="nope")
    project = Project.load([], tmp_path)
    assert project.llm_jobs() == [] and project.targets("perturbations") == []


def test_checker_only_needed_with_rewrites_and_rewriter_only_with_rewrites_or_sem(tmp_path):
    write_config(tmp_path, variants=[], insertions=["LEX", "QRY"], rewriter=None, checker="nobody")
    plan = Project.load([], tmp_path).plan("perturbations")
    assert plan.models() == ["gpt"]
    assert {j.rule for j in plan.llm_jobs()} == {"peras_judge", "perturbation_rejudge"}


# -- jobs and targets ---------------------------------------------------------------------------


def test_llm_jobs_and_targets(tmp_path):
    write_config(tmp_path)
    plan = Project.load([], tmp_path).plan("perturbations")
    fx = ("dataset", "fx")
    jobs = [(j.rule, j.model, j.wildcards) for j in plan.llm_jobs()]
    assert jobs == [
        ("peras_judge", "gpt", (fx, ("model", "gpt"), ("template", "wo_cot"), ("persona", "default"))),
        ("perturbation_rewrite", "gpt", (fx, ("variant", "psv"))),
        ("perturbation_rewrite", "gpt", (fx, ("variant", "sum"))),
        ("perturbation_sem", "gpt", (fx,)),
        *(
            ("perturbation_rejudge", "gpt", (fx, ("variant", v), ("model", "gpt")))
            for v in ("psv", "sum", "sem", "lex", "qry")
        ),
    ]
    assert plan.judgments("fx", "gpt") == "results/peras/judgments/fx/gpt/wo_cot/default.tsv"
    assert plan.targets() == [
        "results/perturbations/fx/transitions.tsv",
        "results/perturbations/fx/shifts.tsv",
        "results/perturbations/fx/kept.tsv",
        "results/perturbations/fx/figures/transitions/gpt.png",
        "results/perturbations/fx/figures/transitions/gpt.pdf",
        "results/perturbations/fx/distributions.tsv",
        "results/perturbations/fx/insertion_counts.tsv",
        "results/perturbations/fx/figures/insertions.png",
        "results/perturbations/fx/figures/insertions.pdf",
    ]


def test_peras_judge_job_not_repeated_when_peras_runs_it(tmp_path):
    write_config(tmp_path, peras={"enabled": True})
    project = Project.load([], tmp_path)
    assert not [j for j in project.plan("perturbations").llm_jobs() if j.rule == "peras_judge"]
    assert [j.study for j in project.llm_jobs() if j.rule == "peras_judge"] == ["peras"]


def test_a_separate_checker_is_a_second_model_of_each_rewrite_job(tmp_path):
    write_config(tmp_path, checker="other", insertions=[])
    plan = Project.load([], tmp_path).plan("perturbations")
    rewrite = [(j.model, j.wc["variant"]) for j in plan.llm_jobs() if j.rule == "perturbation_rewrite"]
    assert rewrite == [("gpt", "psv"), ("other", "psv"), ("gpt", "sum"), ("other", "sum")]
    assert plan.models() == ["gpt", "other"]
    table, _ = estimate(plan.project, directory=tmp_path)
    by = table.set_index(["model", "stage"])["calls"]
    assert set(by.index) == {
        ("gpt", "peras_judge"),
        ("gpt", "rewrite"),
        ("other", "meaning_check"),
        ("gpt", "rejudge"),
    }


def test_the_rejudging_judge_is_the_peras_judge_job_s_and_every_setting_travels_as_its_param(tmp_path):
    write_config(tmp_path)
    project = Project.load([], tmp_path)
    plan = project.plan("perturbations")
    peras = project.plan("peras").judge("gpt", "wo_cot", "default")
    judge = plan.judge("gpt")
    assert judge == OriginalJudge.of("peras", peras) and judge.original == "peras"
    pairs = dataset_pairs(project, "fx", directory=tmp_path).pairs
    # an unchanged passage's re-judging request IS the PERAS judge job's (a cache hit)
    assert variant_requests(pairs, judge) == judgment_requests(pairs, peras)
    assert plan.judge_requests(pairs, "gpt", "") == judgment_requests(pairs, peras)
    rewrite = plan.rewrite_writer("sum")
    assert rewrite.template == plan.prompt("SUM") and rewrite.max_tokens == 16
    assert rewrite.spec == project.model_entry("gpt")
    assert plan.insertion("lex").template == plan.prompt("LEX") and plan.insertion("qry").template == ""
    assert plan.insertion("sem").words == plan.stopwords
    assert plan.selection("psv") == Selection("PSV", "per_variant")
    settings = [
        judge,
        rewrite,
        plan.check_writer(),
        plan.sem_writer(),
        plan.sampling_settings(),
        plan.insertion("lex"),
        plan.selection("sem"),
        plan.transition_figure("gpt", "fx"),
        plan.insertion_figure(),
    ]
    for value in settings:
        assert type(value).from_param(value.param()) == value, value


# -- the estimate -------------------------------------------------------------------------------


def stages(table) -> dict[str, tuple[int, int]]:
    return {r.stage: (r.calls, r.cached) for r in table.itertuples()}


def test_estimate_upper_bound_then_exact_from_cached_answers(tmp_path):
    write_config(tmp_path)
    project = Project.load([], tmp_path)
    # nothing cached: per query up to per_label (2) grade-0 pairs (101: d4; 102: d6, d7) plus
    # other pairs up to 4 x 2 (101: d1-d3; 102: d5, d8): 8 pairs, 2 queries with candidates
    table, _ = estimate(project, directory=tmp_path)
    assert stages(table) == {
        "peras_judge": (8, 0),
        "rewrite": (2 * 8, 0),
        "meaning_check": (2 * 8, 0),
        "sem": (2 * 3, 0),  # every attempt of both queries
        "rejudge": (8 + 8 + 3 + 3 + 3, 0),
    }

    backend = make_backend(dict(GPT), "gpt", need_key=False)
    src = dataset_pairs(project, "fx", directory=tmp_path)
    pairs = src.pairs.set_index("docid", drop=False)
    cache = RequestCache(tmp_path / "cache" / "requests.sqlite")

    def put(req, text):
        cache.put(
            request_key(cache_request(backend, req)),
            cache_request(backend, req),
            Completion(text=text, prompt_tokens=10, completion_tokens=3).to_json(),
        )

    judge_tpl = load_template("peras/wo_cot")
    labels = {"d1": "3", "d2": "2", "d3": "0", "d4": "0", "d5": "3", "d6": "0", "d7": "no idea", "d8": "1"}
    for req, docid in zip(
        judgment_requests(src.pairs, Judge("judge", template=judge_tpl, max_tokens=8)), src.pairs["docid"]
    ):
        put(req, labels[docid])
    # the sample: 101 labels 0 {d3, d4}, 2 {d2}, 3 {d1}; 102: 0 {d6}, 1 {d8}, 3 {d5}; d7 unparsed
    pool = pairs.loc[["d1", "d2", "d3", "d4", "d5", "d6", "d8"]]
    psv = rewrite_requests(pool, load_template("perturbations/psv"), max_tokens=16)
    rewrites = {"d1": "", **{d: f"Rewritten {d}." for d in ("d2", "d3", "d4", "d5", "d6", "d8")}}
    verdicts = {"d2": "Yes", "d3": "Yes", "d4": "yes.", "d5": "No", "d6": "No", "d8": "Maybe"}
    check = load_template("perturbations/meaning_check")
    for req, docid in zip(psv, pool["docid"]):
        put(req, rewrites[docid])
        if docid in verdicts:
            put(
                meaning_check_requests([pairs.at[docid, "passage"]], [rewrites[docid]], check, max_tokens=2)[
                    0
                ],
                verdicts[docid],
            )
    # one re-judgment of a kept PSV rewrite already answered
    d2 = pairs.loc[["d2"]].assign(passage="Rewritten d2.")
    put(judgment_requests(d2, Judge("judge", template=judge_tpl, max_tokens=8))[0], "2")
    # SEM for query 101: attempt 1 uses a query term, attempt 2 passes the check
    sem = load_template("perturbations/sem")
    words = project.plan("perturbations").stopwords
    put(sem_request("do goldfish grow", sem, 1, max_tokens=16, stopwords=words), "Goldfish get bigger.")
    put(
        sem_request("do goldfish grow", sem, 2, max_tokens=16, stopwords=words),
        "They do get bigger over the years.",
    )
    cache.close()

    table, _ = estimate(project, directory=tmp_path)
    assert stages(table) == {
        "peras_judge": (8, 8),
        "rewrite": (7 + 7, 7),  # PSV cached, SUM not
        "meaning_check": (6 + 7, 6),  # PSV: d1's empty rewrite is not checked; SUM: stand-ins
        "sem": (2 + 3, 2),  # 101: two cached attempts; 102 (d6): all 3 counted
        "rejudge": (3 + 7 + 2 + 2 + 2, 1),
    }  # PSV: the 3 kept (d2 cached); SUM: 7; SEM/LEX/QRY: d4, d6
