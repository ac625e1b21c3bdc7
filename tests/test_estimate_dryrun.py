"""`judgelab estimate` counts exactly the LLM jobs and requests that a dry run of the workflow
schedules: for the default config (every study), for a config with an API judge, and for the
simulation study's test config."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import ROOT
from snakerun import dry_run_jobs, make_workdir, output, snakemake

from judgelab.studies.overrating.pairwise import sample_pairs
from judgelab.wiring.estimate import dataset_pairs, estimate
from judgelab.wiring.facade import Project

pytestmark = pytest.mark.slow

LLM_RULES = {
    "peras_judge": "peras_judge",
    "peras_confidence": "peras_confidence",
    "generate_persona": "personas",
    "simulation_predict": "simulation",
    "overrating_pointwise": "overrating_pointwise",
    "overrating_pairwise": "overrating_pairwise",
}


def simulation_calls(project, dataset) -> int:
    """Requests of one simulation cell with nothing cached: round 1 for every validation item of
    the evaluators that are not direction-only, round 2 (the upper bound) for every one."""
    from judgelab.studies.simulation.data import load_records
    from judgelab.studies.simulation.splits import evaluator_summary, make_splits

    plan = project.plan("simulation")
    sel = plan.selection(dataset)
    records = load_records(project.local(plan.source_file(dataset)), sel.format)
    records = [r for r in records if not sel.evaluators or r.evaluator in sel.evaluators]
    splits = make_splits(
        records,
        pool=sel.pool,
        validation=sel.validation,
        seed=sel.seed,
        mode=sel.split,
        group_by=sel.group_by,
        balance_neutral=sel.balance_neutral,
    )
    summary = evaluator_summary(records, splits, sel.min_neutral)
    return int((summary["n_validation"] * (~summary["direction_only"])).sum() + summary["n_validation"].sum())


#: LLM rules whose jobs are compared here and whose requests their study's tests count
#: (tests/perturbations/test_perturbations_plan.py, tests/perturbations/test_perturbations_workflow.py,
#: tests/perturbations/test_attacks.py, tests/perturbations/test_attacks_workflow.py; ranking_judge:
#: tests/ranking/test_ranking_study.py, tests/ranking/test_ranking_workflow.py; the prompt-sensitivity
#: study's: tests/sensitivity/test_sensitivity.py, tests/sensitivity/test_sensitivity_pairwise.py)
STUDY_LLM_RULES = {
    "perturbation_rewrite",
    "perturbation_sem",
    "perturbation_rejudge",
    "perturbation_attack_judge",
    "ranking_judge",
    "sensitivity_judge",
    "sensitivity_pairwise",
}


def scheduled(workdir, env=None) -> list[tuple[str, dict]]:
    run = snakemake(workdir, "-n", "all", env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return [
        (rule, wc) for rule, wc in dry_run_jobs(output(run)) if rule in LLM_RULES or rule in STUDY_LLM_RULES
    ]


def check(workdir, env=None) -> None:
    project = Project.load([], workdir)
    jobs = scheduled(workdir, env)
    # the job set: Project.llm_jobs() is what the rules schedule
    want = sorted((j.rule, sorted(j.wc.items())) for j in project.llm_jobs())
    got = sorted((r, sorted(wc.items())) for r, wc in jobs)
    assert got == want
    # the estimate: jobs and requests per dataset x model x stage
    table, _ = estimate(project, directory=workdir)
    est = {
        (r.dataset, r.model, r.stage): (r.jobs, r.calls)
        for r in table.itertuples()
        if r.stage in LLM_RULES.values()
    }
    expected: dict[tuple[str, str, str], list[int]] = {}
    pairs = {}
    for rule, wc in jobs:
        if rule in STUDY_LLM_RULES:
            continue
        d = wc.get("dataset", "-")
        key = (d, wc["model"], LLM_RULES[rule])
        if rule == "generate_persona":
            n = 2  # keywords, then instruction
        elif rule == "simulation_predict":
            n = simulation_calls(project, d)
        else:
            if d not in pairs:
                pairs[d] = dataset_pairs(project, d, directory=workdir).pairs
            n = len(pairs[d])  # every pair (confidence: the upper bound, nothing is cached)
            if rule == "overrating_pairwise":  # both orders of every sampled pair
                n = 2 * len(sample_pairs(pairs[d], **project.plan("overrating").sampling.to_json()))
        acc = expected.setdefault(key, [0, 0])
        acc[0] += 1
        acc[1] += n
    assert est == {k: tuple(v) for k, v in expected.items()}


def test_default_config(tmp_path):
    wd = tmp_path / "default"
    (wd / "config").mkdir(parents=True)
    shutil.copy(ROOT / "config" / "config.yaml", wd / "config" / "config.yaml")
    check(wd)


def test_config_with_an_api_judge(tmp_path):
    wd = make_workdir(tmp_path / "api", "api")
    (wd / "config" / "config.yaml").write_text(
        (wd / "config" / "config.yaml").read_text().replace("judges: [gpt]", "judges: [gpt, smollm2]")
    )
    check(wd, env={**os.environ, "JL_WF_KEY": "not-a-real-key"})


def test_simulation_config(tmp_path, monkeypatch):
    wd = make_workdir(tmp_path / "simulation", "simulation")
    monkeypatch.chdir(wd)  # its prompt file is a path relative to the run folder
    check(wd)


def test_overrating_config(tmp_path):
    check(make_workdir(tmp_path / "overrating", "overrating"))
