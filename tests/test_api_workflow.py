"""API keys in the Snakemake workflow: a dry run needs none (of a config with API models, of the
paper configs); a real run with a key missing stops before any job, naming the variable (and with
--no-hooks the job itself stops before its first call, naming it); a judge job against a local
OpenAI-compatible server sends the key and writes it nowhere (params, logs, results, cache,
Snakemake's metadata)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT
from fake_openai import FakeOpenAI, ServerThread
from snakerun import dry_run_jobs, make_workdir, output, snakemake

pytestmark = pytest.mark.slow

SECRET = "sk-judgelab-workflow-secret-7"


def workdir(tmp_path: Path, base_url: str | None = None) -> Path:
    """A run folder of `.test/api` (judge `gpt`, key variable JL_WF_KEY), its server at ``base_url``."""
    wd = make_workdir(tmp_path, "api")
    if base_url:
        (wd / "server.yaml").write_text(yaml.safe_dump({"models": {"gpt": {"base_url": base_url}}}))
    return wd


def run(wd: Path, env: dict, *args: str):
    extra = ["--configfile", str(wd / "server.yaml")] if (wd / "server.yaml").exists() else []
    return snakemake(wd, *args, *extra, cores=1, env=env, timeout=600)


def clean_env() -> dict:
    return {
        k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "JL_WF_KEY")
    }


def test_local_only_config_needs_no_key_and_a_missing_key_stops_the_run_before_any_job(tmp_path):
    # the same folder with the local model as the judge: the API model is configured but not
    # called, so its key is not needed
    local = workdir(tmp_path / "local")
    (local / "local.yaml").write_text(yaml.safe_dump({"judges": ["smollm2"]}))
    res = snakemake(
        local, "-n", "all", "--configfile", str(local / "local.yaml"), cores=1, env=clean_env(), timeout=600
    )
    assert res.returncode == 0, res.stderr[-3000:]

    api = workdir(tmp_path / "api")
    res = run(api, clean_env(), "results/peras/judgments/fx/gpt/wo_cot/default.tsv")
    assert res.returncode != 0
    assert "config key 'models.gpt.api_key_env': the environment variable JL_WF_KEY is not set" in res.stderr
    assert not (api / "results").exists()  # nothing ran


def test_a_dry_run_needs_no_key_and_a_real_run_stops_before_any_call(tmp_path):
    fake = FakeOpenAI()
    with ServerThread(fake.app()) as srv:
        wd = workdir(tmp_path, srv.base_url)
        target = "results/peras/judgments/fx/gpt/wo_cot/default.tsv"
        res = run(wd, clean_env(), "-n", target)
        assert res.returncode == 0, res.stderr[-3000:]
        assert [r for r, _ in dry_run_jobs(output(res))] == ["prepare_dataset", "peras_judge"]
        # the onstart check is skipped with --no-hooks: the job checks its own model's key
        # before its first call, naming the variable
        res = run(wd, clean_env(), "--no-hooks", target)
        assert res.returncode != 0
        log = (
            wd / "results" / "logs" / "peras" / "judge" / "fx" / "gpt" / "wo_cot" / "default.log"
        ).read_text()
        assert "config key 'models.gpt.api_key_env': the environment variable JL_WF_KEY is not set" in log
    assert fake.arrivals == 0 and not (wd / target).exists()


@pytest.mark.parametrize("paper", ["paper-peras", "paper-simulation"])
def test_a_paper_config_dry_runs_without_keys_or_aws_credentials(tmp_path, paper):
    env = {k: v for k, v in clean_env().items() if not k.startswith("AWS_")}
    env["AWS_CONFIG_FILE"] = env["AWS_SHARED_CREDENTIALS_FILE"] = str(tmp_path / "none")
    shutil.copytree(ROOT / "config", tmp_path / "config")  # a run folder with the default config
    res = snakemake(tmp_path, "-n", "--configfile", f"config/{paper}.yaml", cores=1, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    llm = {"peras_judge", "peras_confidence", "simulation_predict"}
    assert any(rule in llm for rule, _ in dry_run_jobs(output(res)))


def test_judge_job_through_the_workflow_never_writes_the_key(tmp_path):
    fake = FakeOpenAI()
    with ServerThread(fake.app()) as srv:
        wd = workdir(tmp_path, srv.base_url)
        env = {**clean_env(), "JL_WF_KEY": SECRET}
        res = run(wd, env, "results/peras/judgments/fx/gpt/wo_cot/default.tsv")
        assert res.returncode == 0, res.stderr[-4000:]
    assert fake.auth == {f"Bearer {SECRET}": 8}
    log = (wd / "results" / "logs" / "peras" / "judge" / "fx" / "gpt" / "wo_cot" / "default.log").read_text()
    assert "8 new calls" in log and "cost $" in log
    leaked = [
        p for p in wd.rglob("*") if p.is_file() and not p.is_symlink() and SECRET.encode() in p.read_bytes()
    ]
    assert leaked == []
    assert SECRET not in res.stdout + res.stderr


def test_the_provenance_table_names_who_answered_every_job(tmp_path):
    """A served model other than the configured one (gpt-4o-mini), a fingerprint and answers cut
    by the bound (``finish_reason: length``), through the workflow: the study's provenance table
    has one row per model-calling job with what the responses said, and each job's log warns."""
    fake = FakeOpenAI(served_model="gpt-4o-2024-08-06", fingerprint="fp_wf42", truncate_labels=frozenset({3}))
    with ServerThread(fake.app()) as srv:
        wd = workdir(tmp_path, srv.base_url)
        (wd / "floor.yaml").write_text(yaml.safe_dump({"min_coverage": 0.0}))
        env = {**clean_env(), "JL_WF_KEY": SECRET}
        res = run(wd, env, "results/provenance/peras.tsv", "--configfile", str(wd / "floor.yaml"))
        assert res.returncode == 0, res.stderr[-4000:]
    table = pd.read_csv(
        wd / "results" / "provenance" / "peras.tsv", sep="\t", dtype=str, keep_default_na=False
    )
    assert sorted(zip(table["rule"], table["job"])) == sorted(
        (rule, f"dataset=fx,model=gpt,template=wo_cot,persona={p}")
        for rule in ("peras_judge", "peras_confidence")
        for p in ("default", "LA")
    )
    assert set(table["served_models"]) == {"gpt-4o-2024-08-06"} and set(table["same_model"]) == {"False"}
    assert set(table["configured_model"]) == {"gpt-4o-mini"} and set(table["backend"]) == {"openai"}
    assert set(table["system_fingerprints"]) == {"fp_wf42"}
    judged = table[table["rule"] == "peras_judge"]
    judgments = pd.read_csv(
        wd / "results" / "peras" / "judgments" / "fx" / "gpt" / "wo_cot" / "default.tsv", sep="\t"
    )
    cut = int((judgments["finish_reason"] == "length").sum())
    assert cut > 0
    row = judged[judged["job"].str.endswith("persona=default")].iloc[0]
    assert int(row["answers"]) == len(judgments) == 8 and int(row["truncated"]) == cut
    assert row["finish_reasons"] == f"length {cut}; stop {8 - cut}"
    assert row["decoding"] == "max_tokens=4 temperature=0.0 top_logprobs=20 top_p=1.0"
    log = (wd / "results" / "logs" / "peras" / "judge" / "fx" / "gpt" / "wo_cot" / "default.log").read_text()
    assert "answered by gpt-4o-2024-08-06, not the configured models.gpt.model 'gpt-4o-mini'" in log
