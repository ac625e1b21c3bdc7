"""Every paper config (config/paper-*.yaml) merged over the default, as `--configfile` does:
it runs its one study, and no job of it calls the embedded model or any local model."""

from __future__ import annotations

import pytest
from conftest import ROOT

from judgelab.project.facade import Project

PAPER = {
    "paper-scale": "peras",
    "paper-overrating": "overrating",
    "paper-perturbations": "perturbations",
    "paper-simulation": "simulation",
    "paper-ranking": "ranking",
}


@pytest.mark.parametrize("name", sorted(PAPER))
def test_paper_config_runs_its_study_with_no_local_model(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    project = Project.load([f"config/{name}.yaml"], ROOT)
    assert project.studies == [PAPER[name]]
    jobs = project.llm_jobs()
    assert jobs, "a paper config that calls no model"
    backends = {project.config["models"][j.model]["backend"] for j in jobs}
    assert "local" not in backends, sorted({j.model for j in jobs})


def test_every_paper_config_is_covered():
    assert {p.stem for p in (ROOT / "config").glob("paper-*.yaml")} == set(PAPER)
