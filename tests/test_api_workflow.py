"""API keys in the Snakemake workflow: declared with ``envvars:`` for exactly the API models a
config uses; a missing one stops the run before any job, naming the variable; a judge job against
a local OpenAI-compatible server sends the key and writes it nowhere (params, logs, results,
cache, Snakemake's metadata)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from fake_openai import FakeOpenAI, ServerThread

pytestmark = pytest.mark.slow

SECRET = "sk-judgelab-workflow-secret-7"


def workdir(tmp_path: Path, models: dict) -> Path:
    """A run folder whose config is the default one plus ``models`` and the fixture dataset."""
    (tmp_path / "config").mkdir(parents=True)
    (tmp_path / "resources").symlink_to(ROOT / "resources")
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    fx = ROOT / "tests" / "fixtures" / "trec"
    cfg["cache"] = str(tmp_path / "cache" / "requests.sqlite")
    cfg["datasets"]["fx"] = {"source": "files", "format": "trec", "qrels": str(fx / "qrels.txt"),
                             "topics": str(fx / "topics.txt"), "texts": str(fx / "texts.tsv")}
    cfg["models"].update(models)
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    return tmp_path


def snakemake(wd: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(wd),
           "--cores", "1", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)


def clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}


def test_local_only_config_needs_no_key_and_a_missing_key_stops_the_run_before_any_job(tmp_path):
    local = workdir(tmp_path / "local", {})
    run = snakemake(local, clean_env(), "-n", "all")
    assert run.returncode == 0, run.stderr[-3000:]

    api = workdir(tmp_path / "api", {"gpt": {"backend": "openai", "model": "gpt-4o-mini"}})
    run = snakemake(api, clean_env(), "results/judgments/fx/gpt/wo_cot/default.tsv")
    assert run.returncode != 0
    assert "OPENAI_API_KEY" in run.stderr and "undefined" in run.stderr
    assert not (api / "results").exists()  # nothing ran


def test_judge_job_through_the_workflow_never_writes_the_key(tmp_path):
    fake = FakeOpenAI()
    with ServerThread(fake.app()) as srv:
        wd = workdir(tmp_path, {"gpt": {"backend": "openai", "model": "gpt-4o-mini",
                                        "base_url": srv.base_url, "api_key_env": "JL_WF_KEY",
                                        "concurrency": 2, "prices": {"input": 0.15, "output": 0.6}}})
        env = {**clean_env(), "JL_WF_KEY": SECRET}
        target = "results/judgments/fx/gpt/wo_cot/default.tsv"
        run = snakemake(wd, env, target)
        assert run.returncode == 0, run.stderr[-4000:]
    assert fake.auth == {f"Bearer {SECRET}": 8}
    log = (wd / "results" / "logs" / "judge" / "fx" / "gpt" / "wo_cot" / "default.log").read_text()
    assert "8 new calls" in log and "cost $" in log
    leaked = [p for p in wd.rglob("*") if p.is_file() and not p.is_symlink()
              and SECRET.encode() in p.read_bytes()]
    assert leaked == []
    assert SECRET not in run.stdout + run.stderr
