"""A local run given more --cores than the machine has CPUs does not start more llama.cpp jobs
than CPUs / threads: a local model's job reserves its share of the excess (common.smk,
``reserved_threads``), and the job still runs the model's own threads (``LLMSession``)."""

from __future__ import annotations

import re

from snakerun import make_workdir, output, snakemake

from judgelab.llm.session import LLMSession
from judgelab.wiring.facade import usable_cpus


def judge_threads(workdir, cores: int, *args: str) -> set[int]:
    """The threads of every judge job a dry run with ``--cores cores`` lists."""
    run = snakemake(workdir, "-n", *args, cores=cores)
    text = output(run)
    assert run.returncode == 0, text[-3000:]
    blocks = re.split(r"\n(?=(?:local)?rule \w+:)", text)
    threads = set()
    for block in blocks:
        if block.startswith("rule peras_judge:"):
            m = re.search(r"^\s+threads: (\d+)$", block, re.MULTILINE)
            threads.add(int(m.group(1)) if m else 1)  # Snakemake prints threads only when > 1
    assert threads, text[-3000:]
    return threads


def test_more_cores_than_cpus_reserve_the_excess_for_local_model_jobs(tmp_path):
    workdir = make_workdir(tmp_path / "run", "peras")
    cpus = usable_cpus()
    assert judge_threads(workdir, cpus) == {1}
    many = 4 * cpus
    reserved = judge_threads(workdir, many)
    # at most `cpus` of these 1-thread jobs fit into --cores `many` at once
    assert reserved == {many // cpus}
    assert many // reserved.pop() <= cpus


def test_a_job_runs_the_models_threads_capped_by_the_grant(tmp_path):
    cache = tmp_path / "cache.sqlite"
    spec = {"backend": "local", "model_path": None, "n_ctx": 512, "threads": 1}
    with LLMSession(spec, cache, threads=4, desc="t") as client:
        assert client.backend.n_threads == 1  # granted 4 (reserved), runs the model's 1
    with LLMSession({**spec, "threads": 2}, cache, threads=1, desc="t") as client:
        assert client.backend.n_threads == 1  # Snakemake granted fewer than the model asks
    with LLMSession({k: v for k, v in spec.items() if k != "threads"}, cache, threads=3, desc="t") as client:
        assert client.backend.n_threads == 1  # no `threads` in the entry: the default 1


def test_job_threads_arithmetic(tmp_path, monkeypatch):
    """Project.job_threads on a pretend 2-CPU machine: a local model's 1-thread job reserves
    --cores // 2 when --cores exceeds the CPUs, never less than its threads; API models and
    cluster runs (no local --cores) reserve their threads."""
    import shutil

    from conftest import ROOT

    import judgelab.wiring.facade as config

    (tmp_path / "config").mkdir()
    shutil.copy(ROOT / "config" / "config.yaml", tmp_path / "config" / "config.yaml")
    over = tmp_path / "over.yaml"
    over.write_text(
        "models:\n  api: {backend: openai, model: m, base_url: 'http://localhost:1/v1', api_key_env: null}\n"
        "  two: {backend: local, model_path: null, threads: 2}\n"
    )
    project = config.Project.load([str(over)], tmp_path)
    monkeypatch.setattr(config, "usable_cpus", lambda: 2)
    assert [project.job_threads(["smollm2"], c) for c in (None, 1, 2, 3, 4, 8)] == [1, 1, 1, 1, 2, 4]
    assert [project.job_threads(["two"], c) for c in (None, 2, 4, 8)] == [2, 2, 4, 8]
    assert project.job_threads(["api"], 8) == 1
    assert project.job_threads(["api", "smollm2"], 8) == 4  # a job calling both holds the local share
