"""Every job that calls a model gets the model-job resources from its rule (workflow/rules/
common.smk: `threads: model_threads()`, `**model_job(minutes)`), whichever study it belongs to:
a dry run with the SLURM profile (no cluster needed) lists each job's resources. A rule that
forgot them would get the profile's default-resources (2000 MB, 30 min), which is what the
overrating study's judge jobs got before the resources moved into the rules."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil

import pytest
from snakerun import ROOT, output, snakemake

from judgelab.wiring.facade import Project

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("snakemake_executor_plugin_slurm") is None,
        reason="snakemake-executor-plugin-slurm is not installed (.ci/slurm-up.sh installs it)",
    ),
]

# an API model judging beside the embedded one (its jobs hold no model in memory)
OVERRIDE = """\
models:
  api: {backend: openai, model: gpt-test, base_url: "http://127.0.0.1:9/v1", api_key_env: JL_SLURM_KEY}
judges: [smollm2, api]
"""


def dry_run_resources(text: str) -> list[tuple[str, dict[str, str], dict[str, str]]]:
    """(rule, wildcards, resources) of every job a dry run lists."""
    jobs, rule, wc = [], None, {}
    for line in text.splitlines():
        m = re.match(r"^(?:local)?rule (\w+):", line)
        if m:
            rule, wc = m.group(1), {}
            continue
        m = re.match(r"^\s+wildcards: (.*)$", line)
        if m and rule:
            wc = dict(kv.split("=", 1) for kv in m.group(1).split(", "))
        m = re.match(r"^\s+resources: (.*)$", line)
        if m and rule:
            jobs.append((rule, wc, dict(kv.split("=", 1) for kv in m.group(1).split(", "))))
            rule = None
    return jobs


def test_every_model_job_gets_the_model_job_resources(tmp_path):
    (tmp_path / "config").mkdir()
    shutil.copy(ROOT / "config" / "config.yaml", tmp_path / "config" / "config.yaml")
    (tmp_path / "api.yaml").write_text(OVERRIDE, encoding="utf-8")
    project = Project.load([str(tmp_path / "api.yaml")], tmp_path)
    llm_rules = {j.rule for j in project.llm_jobs()}
    studies = {j.study for j in project.llm_jobs()}
    assert {"peras", "overrating", "perturbations", "simulation"} <= studies
    env = {**os.environ, "JL_SLURM_KEY": "dry-run"}
    run = snakemake(
        tmp_path,
        "-n",
        "--profile",
        str(ROOT / "profiles" / "slurm"),
        "--configfile",
        str(tmp_path / "api.yaml"),
        env=env,
    )
    text = output(run)
    assert run.returncode == 0, text[-3000:]
    jobs = [j for j in dry_run_resources(text) if j[0] in llm_rules]
    assert {rule for rule, _, _ in jobs} == llm_rules, "a rule that calls a model was not scheduled"
    minutes = {rule: set() for rule in llm_rules}
    for rule, wc, res in jobs:
        models = [wc["model"]] if "model" in wc else project.plan("perturbations").rewrite_models
        local = project.uses_backend(models, "local")
        assert int(res["mem_mb"]) == (8000 if local else 2000), (rule, wc, res)
        assert int(res["cpus_per_task"]) >= 1 and "openai_jobs" in res, (rule, wc, res)
        assert int(res["openai_jobs"]) == int(project.uses_backend(models, "openai")), (rule, wc, res)
        minutes[rule].add(int(res["runtime"]))
    # each rule's own runtime, never the profile's default of 30 minutes but for the persona
    # generation (two short requests)
    assert {r: m for r, m in minutes.items() if m != {30}} == {
        r: m for r, m in minutes.items() if r != "generate_persona"
    }
    assert minutes["overrating_pointwise"] == {720} and minutes["peras_confidence"] == {240}
    # the profile holds site settings only: no per-rule resources
    profile = (ROOT / "profiles" / "slurm" / "config.yaml").read_text(encoding="utf-8")
    assert not re.search(r"^set-resources:", profile, re.M)
