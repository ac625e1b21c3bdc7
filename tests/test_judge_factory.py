"""The one judge factory (judgelab.llm.judge.JudgeSection, the sections of
judgelab.project.judges) and the backends' declared capabilities: a judge is the config's values
(read here by hand from the config and the template file), every study naming a section gets the
same judge value, and what the embedded model does differently comes from the backend registry,
never from its name. Fast: no model, no Snakemake."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import yaml
from conftest import FIXTURES

from judgelab.errors import InputError
from judgelab.llm import backends
from judgelab.llm.backends import Capabilities, capabilities, register_backend
from judgelab.llm.judge import Coverage, Judge, JudgeSection, JudgeTemplate, resolve_answer
from judgelab.llm.pricing import judgment_cost
from judgelab.project.config import PACKAGE_ROOT
from judgelab.studies.perturbations.settings import OriginalJudge
from judgelab.wiring.facade import Project

GPT = {"backend": "openai", "model": "gpt-4o-mini", "prices": {"input": 0.15, "output": 0.60}}
TREC = FIXTURES / "trec"


def project(folder, **sections) -> Project:
    (folder / "m.gguf").write_bytes(b"GGUF")
    cfg = {
        "results": "results",
        "cache": "cache/requests.sqlite",
        "min_coverage": 0.4,
        "datasets": {
            "fx": {
                "source": "files",
                "format": "trec",
                "qrels": str(TREC / "qrels.txt"),
                "topics": str(TREC / "topics.txt"),
                "texts": str(TREC / "texts.tsv"),
            }
        },
        "models": {"gpt": GPT, "small": {"backend": "local", "model_path": "m.gguf"}},
        "judges": ["gpt", "small"],
        "personas": {"include": ["default"], "generation": {"enabled": False}, "placement": "system"},
        "peras": {
            "enabled": True,
            "answer": "auto",
            "classifier": {"dataset": None},
            "templates": {"wo_cot": {"template": "peras/wo_cot", "max_tokens": 8}},
        },
        **sections,
    }
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return Project.load([folder / "config.yaml"], folder)


def template_text(ref: str) -> str:
    """A shipped template's text, read from its YAML file here (not through judgelab.llm.prompts)."""
    path = PACKAGE_ROOT / "resources" / "prompts" / f"{ref}.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))["template"]


def test_a_peras_judge_is_the_config_s_values(tmp_path):
    section = project(tmp_path).judge_section("peras")
    judge = section.judge("gpt", "wo_cot", "default")
    assert judge == Judge(
        model="gpt",
        spec=GPT,
        template=template_text("peras/wo_cot"),
        labels=("0", "1", "2", "3"),
        persona="",  # the default persona has no instruction
        placement="system",
        max_tokens=8,
        answer="parse",  # auto: an API backend's answer text
        coverage=Coverage(0.4, "wo_cot (peras/wo_cot)", "peras.templates.wo_cot.max_tokens", "peras.answer"),
    )
    # auto reads the embedded model's logits: its backend says it can
    assert section.judge("small", "wo_cot", "default").answer == "logits"
    assert section.names == ("wo_cot",)


def test_an_overrating_judge_has_no_persona_and_parses(tmp_path):
    section = project(tmp_path).judge_section("overrating")
    judge = section.judge("small", "graded")
    assert (judge.template, judge.max_tokens, judge.answer) == (
        template_text("overrating/graded"),
        1,
        "parse",
    )
    assert (judge.persona, judge.placement, judge.labels) == ("", "user", ("0", "1", "2", "3"))
    assert judge.coverage == Coverage(
        0.4, "overrating/graded (overrating.pointwise.templates.graded)", "overrating.pointwise.max_tokens"
    )


def test_every_study_naming_a_section_gets_the_same_judge(tmp_path):
    p = project(
        tmp_path,
        overrating={"enabled": True, "pairwise": {"enabled": True}},
        perturbations={"enabled": True, "template": "wo_cot", "persona": "default", "rewriter": "gpt"},
        ranking={"enabled": False, "template": "wo_cot", "persona": "default"},
    )
    peras = p.judge_section("peras").judge("gpt", "wo_cot", "default")
    assert p.plan("peras").judge("gpt", "wo_cot", "default") == peras
    assert p.plan("ranking").judge("gpt") == peras
    assert p.plan("perturbations").judge("gpt") == OriginalJudge.of("peras", peras)
    graded = p.plan("overrating").pointwise_judge("small", "graded")
    assert graded == p.judge_section("overrating").judge("small", "graded")
    # the confidence follow-up: the same model and persona, its own template and bound, no check
    follow = p.plan("peras").confidence_judge("small", "default")
    assert (follow.coverage, follow.answer, follow.labels, follow.placement) == (None, "parse", (), "system")
    pairwise = p.plan("overrating").pairwise_judge("gpt")
    assert pairwise.template == template_text("overrating/pairwise") and pairwise.labels == ("1", "2")


def test_a_section_of_one_template_resolves_auto_by_the_backend():
    one = JudgeSection.one(
        JudgeTemplate("Q: {query} D: {document}", ("0", "1"), 3, "mine", "mine.max_tokens"),
        models={"a": {"backend": "local"}, "b": {"backend": "anthropic"}}.__getitem__,
        min_coverage=0.5,
        answer="auto",
    )
    assert [one.judge(m, "x").answer for m in ("a", "b")] == ["logits", "parse"]
    assert one.judge("a", "x").coverage == Coverage(0.5, "mine", "mine.max_tokens")


def test_a_backend_declares_what_it_can_do(monkeypatch):
    """A new backend registered as running here and reading logits is treated as the embedded one
    is everywhere (answer auto, cost without prices); an API backend's defaults otherwise."""
    monkeypatch.setattr(backends, "BACKENDS", dict(backends.BACKENDS))
    monkeypatch.setattr(backends, "CAPABILITIES", dict(backends.CAPABILITIES))
    register_backend("mine", "judgelab.llm.backends.local:LocalBackend", Capabilities(True, True, False))
    register_backend("served", "judgelab.llm.backends.openai_compat:OpenAIBackend")
    assert capabilities("mine") == capabilities("local") != capabilities("served")
    assert resolve_answer("auto", "mine") == "logits" and resolve_answer("auto", "served") == "parse"
    assert backends.api_backends() == ("openai", "anthropic", "bedrock", "served")
    table = {"prompt_tokens": [10], "completion_tokens": [2]}
    assert judgment_cost(pd.DataFrame(table), None, backend="mine")["usd"] == 0.0
    assert math.isnan(judgment_cost(pd.DataFrame(table), None, backend="served")["usd"])
    with pytest.raises(ValueError, match="module:Class"):
        register_backend("bad", "judgelab.llm.backends.local")


def test_a_section_names_its_templates_that_run_and_its_judges(tmp_path):
    """The judges a section's rule runs (its study's ``judges``, null: the top-level ones) and
    the names that run (the overrating study's ``pointwise.scales``): what a study naming the
    section checks its own choices against."""
    p = project(tmp_path, overrating={"pointwise": {"scales": ["graded"]}, "judges": ["small"]})
    peras, overrating = p.judge_section("peras"), p.judge_section("overrating")
    assert (peras.names, peras.judges) == (("wo_cot",), ("gpt", "small"))
    assert (overrating.names, overrating.judges) == (("graded",), ("small",))


def test_a_template_whose_labels_are_not_the_scale_names_its_key(tmp_path):
    (tmp_path / "three.yaml").write_text(
        "kind: judgment\nlabels: ['0', '1', '2']\ntemplate: 'Q: {query} D: {document}'\n", encoding="utf-8"
    )
    p = project(tmp_path, overrating={"pointwise": {"templates": {"graded": str(tmp_path / "three.yaml")}}})
    with pytest.raises(InputError, match="graded scale needs labels") as got:
        p.judge_section("overrating").judge("gpt", "graded")
    assert got.value.key == "overrating.pointwise.templates.graded"
