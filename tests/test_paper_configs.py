"""Every paper config (config/paper-*.yaml) merged over the default, as `--configfile` does:
it runs its one study, and no job of it calls the embedded model or any local model."""

from __future__ import annotations

import re

import pytest
import yaml
from conftest import ROOT, paper_config_files

from judgelab.llm.prompts import load_template
from judgelab.wiring.facade import Project

PAPER = {
    "paper-peras": "peras",
    "paper-overrating": "overrating",
    "paper-perturbations": "perturbations",
    "paper-simulation": "simulation",
    "paper-ranking": "ranking",
    "paper-sensitivity": "sensitivity",
}


@pytest.mark.parametrize("name", sorted(PAPER))
def test_paper_config_runs_its_study_with_no_local_model(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    project = Project.load(paper_config_files(name), ROOT)
    assert project.studies == [PAPER[name]]
    jobs = project.llm_jobs()
    assert jobs, "a paper config that calls no model"
    backends = {project.config["models"][j.model]["backend"] for j in jobs}
    assert "local" not in backends, sorted({j.model for j in jobs})


def test_every_paper_config_is_covered():
    assert {p.stem for p in (ROOT / "config").glob("paper-*.yaml")} == set(PAPER)


# the providers' moving aliases and the dated snapshots they offer (issue 25, item 4): a paper
# config names the snapshot, so a later run calls the same model
ALIASES = {"gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet-latest", "claude-3-7-sonnet-latest"}
ALIAS_ONLY = {"deepseek-chat"}  # no dated name exists: the config says so in a comment


@pytest.mark.parametrize("name", sorted(PAPER))
def test_paper_configs_pin_dated_models_where_the_provider_offers_them(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    project = Project.load(paper_config_files(name), ROOT)
    text = (ROOT / "config" / f"{name}.yaml").read_text(encoding="utf-8")
    for key in {j.model for j in project.llm_jobs()}:
        served = str(project.config["models"][key].get("model") or "")
        assert served not in ALIASES, f"{name}: models.{key}.model {served!r} is an alias; name its snapshot"
        if served in ALIAS_ONLY:
            line = next(x for x in text.splitlines() if f"model: {served}" in x)
            assert "alias" in line, f"{name}: say in a comment that {served} is an alias only"


# a template that asks for the label alone may keep a short bound; one that does not (the model
# may reason, or write a tagged judgment after its reasons) gets at least a few hundred tokens
# (issue 25, item 2; docs/answers.md lists each config's bounds and why)
LABEL_ONLY = re.compile(
    r"without providing any reasoning|integer value only|must be the integer|no explanation|just a number",
    re.I,
)
REASONING_BOUND = 256


def judge_bounds(project: Project) -> list[tuple[str, str, int]]:
    """(config key of the bound, the template's text, the bound) of every judging template of the
    config's enabled studies."""
    cfg, out = project.config, []
    resources = ROOT / "resources" / "prompts"
    # the ranking study judges with one of PERAS's templates (ranking.template), at its bound
    keys = list(cfg["peras"]["templates"]) if "peras" in project.studies else []
    if "ranking" in project.studies:
        keys.append(cfg["ranking"]["template"])
    for key in dict.fromkeys(keys):
        t = cfg["peras"]["templates"][key]
        out.append((f"peras.templates.{key}.max_tokens", load_template(t["template"]), int(t["max_tokens"])))
    for study in ("overrating", "perturbations"):
        if study in project.studies or (
            study == "overrating" and cfg["perturbations"].get("original") == "overrating"
        ):
            pw = cfg["overrating"]["pointwise"]
            for name in pw["templates"].values():
                out.append(("overrating.pointwise.max_tokens", load_template(name), int(pw["max_tokens"])))
    if "overrating" in project.studies and cfg["overrating"]["pairwise"].get("enabled", True):
        pair = cfg["overrating"]["pairwise"]
        out.append(
            ("overrating.pairwise.max_tokens", load_template(pair["template"]), int(pair["max_tokens"]))
        )
    if "sensitivity" in project.studies:
        plan = project.plan("sensitivity")
        for pid, prompt in plan.live_prompts.items():
            for kind, (text, system, _) in prompt.texts.items():
                key = f"sensitivity.max_tokens ({pid} {kind})"
                out.append((key, f"{system}\n{text}", int(cfg["sensitivity"]["max_tokens"])))
    if "simulation" in project.studies:
        spec = yaml.safe_load((resources / f"{cfg['simulation']['prompt']}.yaml").read_text(encoding="utf-8"))
        text = "\n".join(v for v in spec.values() if isinstance(v, str))
        out.append(("simulation.max_tokens", text, int(cfg["simulation"]["max_tokens"])))
    return out


@pytest.mark.parametrize("name", sorted(PAPER))
def test_paper_config_bounds_fit_what_their_templates_ask(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    project = Project.load(paper_config_files(name), ROOT)
    bounds = judge_bounds(project)
    assert bounds, f"{name}: no judging template found"
    for key, text, bound in bounds:
        if not LABEL_ONLY.search(text):
            assert bound >= REASONING_BOUND, (
                f"{name}: {key} is {bound}, but the template does not ask for the label alone"
            )


def test_the_bound_check_tells_the_two_kinds_of_template_apart():
    assert LABEL_ONLY.search(load_template("overrating/graded")) and LABEL_ONLY.search(
        load_template("peras/w_cot")
    )
    spec = yaml.safe_load(
        (ROOT / "resources" / "prompts" / "simulation" / "personajudge.yaml").read_text(encoding="utf-8")
    )
    assert not LABEL_ONLY.search("\n".join(v for v in spec.values() if isinstance(v, str)))
