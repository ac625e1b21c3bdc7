"""API keys in the Snakemake workflow: declared with ``envvars:`` for exactly the API models a
config uses; a missing one stops the run before any job, naming the variable; a judge job against
a local OpenAI-compatible server sends the key and writes it nowhere (params, logs, results,
cache, Snakemake's metadata)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from fake_openai import FakeOpenAI, ServerThread
from snakerun import make_workdir, snakemake

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
    res = run(api, clean_env(), "results/judgments/fx/gpt/wo_cot/default.tsv")
    assert res.returncode != 0
    assert "JL_WF_KEY" in res.stderr and "undefined" in res.stderr
    assert not (api / "results").exists()  # nothing ran


def test_judge_job_through_the_workflow_never_writes_the_key(tmp_path):
    fake = FakeOpenAI()
    with ServerThread(fake.app()) as srv:
        wd = workdir(tmp_path, srv.base_url)
        env = {**clean_env(), "JL_WF_KEY": SECRET}
        res = run(wd, env, "results/judgments/fx/gpt/wo_cot/default.tsv")
        assert res.returncode == 0, res.stderr[-4000:]
    assert fake.auth == {f"Bearer {SECRET}": 8}
    log = (wd / "results" / "logs" / "judge" / "fx" / "gpt" / "wo_cot" / "default.log").read_text()
    assert "8 new calls" in log and "cost $" in log
    leaked = [
        p for p in wd.rglob("*") if p.is_file() and not p.is_symlink() and SECRET.encode() in p.read_bytes()
    ]
    assert leaked == []
    assert SECRET not in res.stdout + res.stderr
