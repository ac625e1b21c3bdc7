"""`peras.cells`: which dataset x judge x template cells PERAS runs (the PERAS paper ran GPT-4o and
Llama-3-70B without CoT only, and three of its five models on DL21), and the paper config's
cells and job counts."""

from __future__ import annotations

import os
from collections import Counter

import pytest
import yaml
from conftest import ROOT

from judgelab.errors import InputError
from judgelab.wiring.facade import Project

#: PERAS section 5.2: (datasets, models, templates) blocks of Experiments 1 and 2
SEED_CELLS = {
    (d, m, t)
    for d in ("llmjudge", "dl19", "dl20")
    for m, ts in (
        ("gpt-4o", ["wo_cot"]),
        ("llama-3-70b", ["wo_cot"]),
        ("gpt-4o-mini", ["wo_cot", "w_cot"]),
        ("llama-3-8b", ["wo_cot", "w_cot"]),
        ("deepseek-v3", ["wo_cot", "w_cot"]),
    )
    for t in ts
} | {
    (d, m, t)
    for d in ("dl21",)
    for m in ("gpt-4o-mini", "llama-3-8b", "deepseek-v3")
    for t in ("wo_cot", "w_cot")
}


def load(tmp_path, monkeypatch, peras: dict) -> Project:
    monkeypatch.chdir(ROOT)
    cfg = {
        "models": {m: {"backend": "openai", "model": m, "api_key_env": None} for m in ("a", "b", "c")},
        "judges": ["a", "b", "c"],
        "personas": {"include": ["default", "LA"], "generation": {"enabled": False}},
        "peras": {
            "datasets": ["dl19", "dl20", "dl21"],  # the three TREC DL years (the default is DL19, DL21)
            "classifier": {"dataset": "dl21"},
            "figures": {"confidence_personas": ["LA"]},
            **peras,
        },
        "overrating": {"enabled": False},
        "perturbations": {"enabled": False},
        "simulation": {"enabled": False},
        "ranking": {"enabled": False},
        "sensitivity": {"enabled": False},
    }
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(cfg))
    return Project.load([f], ROOT)


def test_no_cells_is_every_combination(tmp_path, monkeypatch):
    plan = load(tmp_path, monkeypatch, {}).plan("peras")
    assert plan.cells == [
        (d, m, t) for d in ("dl19", "dl20", "dl21") for m in "abc" for t in ("wo_cot", "w_cot")
    ]
    assert len(plan.project.llm_jobs()) == 18 * 2 * 2


def test_cells_are_the_union_of_blocks_in_the_study_order(tmp_path, monkeypatch):
    blocks = [
        {"datasets": ["dl19", "dl20"], "judges": ["b"], "templates": ["wo_cot"]},
        {"datasets": None, "judges": ["c", "a"]},  # templates left out: all
        {"judges": ["c"], "templates": ["wo_cot"]},  # overlaps the block above
    ]
    project = load(tmp_path, monkeypatch, {"cells": blocks})
    plan = project.plan("peras")
    want = [
        (d, m, t)
        for d in ("dl19", "dl20", "dl21")
        for m in "abc"
        for t in ("wo_cot", "w_cot")
        if m in "ac" or (m == "b" and d != "dl21" and t == "wo_cot")
    ]
    assert plan.cells == want
    assert list(plan.groups) == want and all(ps == ["default", "LA"] for ps in plan.groups.values())
    jobs = project.llm_jobs()
    assert Counter(j.model for j in jobs) == {"a": 24, "c": 24, "b": 8}
    assert {(j.wc["dataset"], j.model, j.wc["template"]) for j in jobs} == set(want)
    assert plan.classifier_groups() == [g for g in want if g[0] == "dl21"]


def test_a_judge_in_no_cell_calls_nothing(tmp_path, monkeypatch):
    project = load(tmp_path, monkeypatch, {"cells": [{"judges": ["a"]}]})
    assert project.plan("peras").models() == ["a"] and project.used_models == ["a"]


@pytest.mark.parametrize(
    "block, key",
    [
        ({"judges": ["a", "zz"]}, "peras.cells[0].judges[1]"),
        ({"datasets": ["llmjudge"]}, "peras.cells[0].datasets[0]"),
        ({"templates": ["cot"]}, "peras.cells[0].templates[0]"),
    ],
)
def test_a_name_no_cell_can_run_names_its_key(tmp_path, monkeypatch, block, key):
    with pytest.raises(InputError, match=key.replace(".", r"\.").replace("[", r"\[").replace("]", r"\]")):
        load(tmp_path, monkeypatch, {"cells": [block]})


def test_paper_config_runs_the_seed_cells(monkeypatch):
    monkeypatch.chdir(ROOT)
    project = Project.load(["config/paper-peras.yaml"], ROOT)
    plan = project.plan("peras")
    assert set(plan.cells) == SEED_CELLS and len(plan.cells) == 30
    jobs = project.llm_jobs()
    # judge + confidence job per cell and persona (11)
    assert Counter(j.model for j in jobs) == {
        "gpt-4o": 66,
        "llama-3-70b": 66,
        "gpt-4o-mini": 176,
        "llama-3-8b": 176,
        "deepseek-v3": 176,
    }
    assert {g[1:] for g in plan.classifier_groups()} == {
        (m, t) for m in ("gpt-4o-mini", "llama-3-8b", "deepseek-v3") for t in ("wo_cot", "w_cot")
    }
    models = project.config["models"]
    assert models["gpt-4o"]["model"] == "gpt-4o-2024-08-06"
    assert models["gpt-4o-mini"]["model"] == "gpt-4o-mini-2024-07-18"
    assert models["deepseek-v3"]["base_url"] == "https://api.deepseek.com"
    assert sorted(project.api_key_envvars()) == ["DEEPSEEK_API_KEY", "OPENAI_API_KEY"]
    assert plan.max_tokens("wo_cot") == plan.max_tokens("w_cot") == 1024
    assert project.plan("peras").section["confidence"]["max_tokens"] == 1024


@pytest.mark.slow
def test_paper_config_dry_run_lists_the_seed_cells(tmp_path):
    """`snakemake -n peras --configfile config/paper-peras.yaml` with dummy keys (nothing is
    sent): the judge and confidence jobs are the paper's cells x 11 personas, and the paper's
    tables are targets."""
    import shutil

    from snakerun import dry_run_jobs, output, snakemake

    shutil.copytree(ROOT / "config", tmp_path / "config")
    env = {**os.environ, "OPENAI_API_KEY": "dummy", "DEEPSEEK_API_KEY": "dummy"}
    run = snakemake(tmp_path, "-n", "peras", "--configfile", "config/paper-peras.yaml", env=env, timeout=900)
    assert run.returncode == 0, output(run)[-3000:]
    jobs = dry_run_jobs(output(run))
    llm = [(r, wc) for r, wc in jobs if r in ("peras_judge", "peras_confidence")]
    assert {(wc["dataset"], wc["model"], wc["template"]) for _, wc in llm} == SEED_CELLS
    assert Counter((wc["model"], r) for r, wc in llm) == {
        (m, r): n
        for m, n in (
            ("gpt-4o", 33),
            ("llama-3-70b", 33),
            ("gpt-4o-mini", 88),
            ("llama-3-8b", 88),
            ("deepseek-v3", 88),
        )
        for r in ("peras_judge", "peras_confidence")
    }
    rules = Counter(r for r, _ in jobs)
    assert rules["download_dataset"] == rules["prepare_dataset"] == 4
    assert rules["peras_table4"] == rules["peras_wide_tables"] == rules["peras_classifier_table"] == 1
    assert rules["peras_classifier"] == 6 and rules["peras_figures"] == 30
