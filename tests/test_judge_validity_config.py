"""config/judge-validity.yaml (issue 27: can the judge be gamed, at the published scale) merged over
the default: it runs the perturbation study's attacks only (no rewrite, no insertion, so no
original judgment) and the ranking study with the circularity test, its one live judge is the API
judge (no local model), its imported judge is ranked beside it, and the estimate counts every
attack job's requests before anything is downloaded."""

from __future__ import annotations

from conftest import ROOT

from judgelab.wiring.estimate import estimate
from judgelab.wiring.facade import Project


def test_judge_validity_config_runs_the_attacks_and_the_circularity_test_with_the_api_judge(monkeypatch):
    monkeypatch.chdir(ROOT)
    project = Project.load(["config/judge-validity.yaml"], ROOT)
    assert project.studies == ["perturbations", "ranking"]
    jobs = project.llm_jobs()
    assert {j.rule for j in jobs} == {"perturbation_attack_judge", "ranking_judge"}
    assert {project.config["models"][j.model]["backend"] for j in jobs} == {"openai"}
    pert = project.plan("perturbations")
    assert list(pert.attacks) == [
        "stuff",
        "inject_paper_perfectly_relevant",
        "inject_perfectly_relevant",
        "inject_ignore_answer_3",
    ]
    assert pert.defenses == ["plain", "defended"] and pert.attack_sampling().per_label == 20
    ranking = project.plan("ranking")
    assert ranking.circularity_enabled and "umbrela" in ranking.imported
    assert any(t.endswith("robustness.md") for t in ranking.targets())


def test_judge_validity_estimate_before_any_download(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    project = Project.load(["config/judge-validity.yaml"], ROOT)
    table, _ = estimate(project, directory=ROOT, cache_path=tmp_path / "none.sqlite")
    attack = table[table["stage"] == "attack"]
    # 2 templates x (clean + 4 attacks) = 10 jobs, every request to send; before the download an
    # upper bound: per judged query (53) 20 graded-0 passages and 20 of other topics, judged clean
    # and under 4 attacks x 2 positions, with both templates
    assert attack["jobs"].sum() == 10 and (attack["cached"] == 0).all()
    assert attack["calls"].sum() == 53 * 20 * 2 * (1 + 4 * 2) * 2
