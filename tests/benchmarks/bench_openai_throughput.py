"""Benchmark: throughput of the OpenAI-compatible backend against a local fake server.

Starts tests/fake_openai.py in a subprocess on 127.0.0.1 (every answer takes a fixed latency L),
sends N real judgment requests (bundled sample pairs x personas, with logprobs) through the real
``openai`` SDK client at concurrency C, and reports requests/s against the ideal C / L. The
target is >= 0.9 of the ideal. No cache is involved. Usage:

    python tests/benchmarks/bench_openai_throughput.py [--concurrency 16] [--latency 0.2]
        [--requests 480]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from judgelab.data.prepare import build_trec_table
from judgelab.llm.backends.openai_compat import OpenAIBackend
from judgelab.llm.judge import Judge
from judgelab.llm.judging import judgment_requests
from judgelab.llm.personas import load_persona_file
from judgelab.llm.prompts import load_template

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=1)
        except urllib.error.HTTPError:
            return  # the server answers (405 on GET is fine)
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("fake server did not start") from None
            time.sleep(0.1)
        else:
            return


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--requests", type=int, default=480)
    args = ap.parse_args()

    d = ROOT / "resources" / "sample" / "dl19"
    pairs = build_trec_table("dl19", d / "qrels.txt", d / "topics.txt", d / "texts.tsv")
    template = load_template("peras/wo_cot")
    requests = []
    for persona in load_persona_file().values():
        for _ in range(1 + args.requests // (len(pairs) * 11)):
            requests += judgment_requests(
                pairs, Judge("judge", template=template, persona=persona.instruction, max_tokens=8)
            )
    requests = requests[: args.requests]

    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "tests" / "fake_openai.py"),
            "--port",
            str(port),
            "--latency",
            str(args.latency),
        ],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        base = f"http://127.0.0.1:{port}/v1"
        wait_ready(f"{base}/chat/completions", server)
        backend = OpenAIBackend.from_spec(
            {
                "backend": "openai",
                "model": "fake",
                "base_url": base,
                "api_key_env": None,
                "concurrency": args.concurrency,
                "timeout": 30,
                "max_retries": 0,
            },
            "bench",
        )
        # warm-up: connections and imports, not timed
        list(backend.complete_many(requests[: args.concurrency]))
        t0 = time.perf_counter()
        answers = dict(backend.complete_many(requests))
        elapsed = time.perf_counter() - t0
    finally:
        server.terminate()
        server.wait(10)
    assert len(answers) == len(requests) and all(a.label_probs for a in answers.values())
    achieved = len(requests) / elapsed
    ideal = args.concurrency / args.latency
    print(
        json.dumps(
            {
                "requests": len(requests),
                "concurrency": args.concurrency,
                "latency_s": args.latency,
                "elapsed_s": round(elapsed, 3),
                "requests_per_s": round(achieved, 1),
                "ideal_C_over_L": round(ideal, 1),
                "fraction_of_ideal": round(achieved / ideal, 3),
                "load_average_1min": round(os.getloadavg()[0], 2),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
