"""An interrupt pays nothing twice (issue 26, case 4): a job interrupted with requests in flight
(Ctrl-C: SIGINT; a cluster's cancel: SIGTERM) starts no new request, waits up to
``interrupt_grace`` seconds for the ones in flight and stores their answers before it exits, so
the rerun sends only what was never sent. The job is a real process (the OpenAI-compatible
backend through the real SDK, the request cache) against a slow counting server; the signal is
sent to it, as a terminal or a scheduler does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import ROOT
from fake_openai import FakeOpenAI, ServerThread
from snakerun import make_workdir, output, snakemake, snakemake_cmd

from judgelab.cache.store import RequestCache

JOB = """
import sys
from judgelab.llm.backends.base import Request
from judgelab.llm.session import JobContext

url, cache, grace = sys.argv[1], sys.argv[2], float(sys.argv[3])
spec = {"backend": "openai", "model": "fake", "base_url": url, "api_key_env": None,
        "concurrency": 2, "timeout": 30, "max_retries": 0}
requests = [Request.from_messages([{"role": "user", "content": f"question {i}"}], 4) for i in range(8)]
with JobContext(cache, desc="interrupted job", interrupt_grace=grace).session(spec, "fake") as client:
    client.run(requests, progress=False)
"""


def interrupted_job(tmp_path: Path, sig: int, grace: float, latency: float = 1.0):
    """Run the job, send ``sig`` once two requests are in flight; (the server, the job's exit
    status, its stderr, the answers in its cache)."""
    fake = FakeOpenAI(latency=latency)
    cache = tmp_path / "requests.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "workflow" / "src")}
    with ServerThread(fake.app()) as srv:
        job = subprocess.Popen(
            [sys.executable, "-c", JOB, srv.base_url, str(cache), str(grace)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while fake.arrivals < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # in flight: the server answers after `latency`
        job.send_signal(sig)
        _, err = job.communicate(timeout=60)
    with RequestCache(cache) as c:
        stored = len(c)
    return fake, job.returncode, err, stored


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, -signal.SIGINT), (signal.SIGTERM, 143)])
def test_the_requests_in_flight_when_interrupted_are_answered_and_stored(tmp_path, sig, status):
    fake, rc, err, stored = interrupted_job(tmp_path, sig, grace=5)
    assert rc == status, err[-2000:]
    assert fake.arrivals == 2, "no new request after the interrupt"
    assert stored == 2, "both answers in flight reached the cache"
    assert f"interrupted ({signal.Signals(sig).name}): no new request; waiting up to 5 s for the 2" in err
    if sig == signal.SIGINT:
        assert "KeyboardInterrupt" in err


def test_without_a_grace_the_interrupt_stops_at_once_and_loses_the_answers_in_flight(tmp_path):
    fake, rc, err, stored = interrupted_job(tmp_path, signal.SIGINT, grace=0)
    assert rc == -signal.SIGINT and "KeyboardInterrupt" in err
    assert fake.arrivals == 2 and stored == 0  # what every interrupt cost before the grace


def test_answers_that_do_not_come_within_the_grace_are_left_for_the_rerun(tmp_path):
    fake, rc, err, stored = interrupted_job(tmp_path, signal.SIGINT, grace=0.3, latency=3.0)
    assert rc == -signal.SIGINT and stored == 0
    assert "2 requests in flight did not answer within the 0.3 s grace after the interrupt" in err


@pytest.mark.slow
def test_ctrl_c_of_a_workflow_run_with_requests_in_flight_pays_nothing_twice(tmp_path):
    """Ctrl-C in a terminal: SIGINT to Snakemake and its jobs (one process group), after 6
    requests arrived (two judge jobs of `.test/api`, two requests in flight each); the rerun."""
    wd = make_workdir(tmp_path / "run", "api")
    fake = FakeOpenAI(latency=1.0)
    env = {**os.environ, "JL_WF_KEY": "sk-interrupt-test"}
    with ServerThread(fake.app()) as srv:
        (wd / "server.yaml").write_text(yaml.safe_dump({"models": {"gpt": {"base_url": srv.base_url}}}))
        config = ["--configfile", str(wd / "server.yaml")]
        run = subprocess.Popen(
            snakemake_cmd(wd, "all", *config),
            env=env,
            start_new_session=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 300
        while fake.arrivals < 6 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.01)
        os.killpg(run.pid, signal.SIGINT)
        run.communicate(timeout=300)
        assert run.returncode != 0
        # the rerun of the jobs that pay (the tables above them send nothing)
        paying = [f"results/peras/confidence/fx/gpt/wo_cot/{p}.tsv" for p in ("default", "LA")]
        again = snakemake(wd, *paying, *config, env=env, timeout=600)
        assert again.returncode == 0, output(again)[-3000:]
    assert len(fake.served) == 32
    twice = {prompt[:60]: n for prompt, n in fake.served.items() if n > 1}
    assert twice == {}, f"paid more than once: {twice}"
