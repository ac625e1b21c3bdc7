"""Throughput of the OpenAI-compatible backend through the request cache, as a judge job sends:
real judgment requests (the bundled DL19 sample's pairs x the 11 PERAS personas x both
templates, with logprobs), a job's model session (:meth:`judgelab.llm.session.JobContext.session`:
the cached client, claims, an answer stored the moment it arrives) over the real ``openai`` SDK,
against ``tests/fake_openai.py`` in a subprocess on 127.0.0.1 whose every answer takes ``L``
seconds. Every request is distinct and the cache starts empty, so each is a miss that is sent.

By Little's law a client keeping ``C`` requests in flight achieves at most ``C / L`` requests per
second; the figure reported is the achieved rate over that bound (1.0: the client adds nothing).
``--rounds`` sets how many times ``C`` requests are sent (at least 20, so the ramp at the start and
the tail at the end weigh little). Each setting runs ``--repeat`` times; the table gives each run.

    python3 workflow/benchmarks/openai_throughput.py                       # C16/L0.2 and C64/L1.0
    python3 workflow/benchmarks/openai_throughput.py --setting 16:0.2 --rounds 30 --repeat 3

Writes ``results/benchmarks/openai_throughput.tsv``.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from benchlib import ROOT, TESTS, default_out, markdown, write_tsv

from judgelab.data.prepare import build_trec_table
from judgelab.llm.backends.base import Request
from judgelab.llm.judge import Judge
from judgelab.llm.judging import judgment_requests
from judgelab.llm.personas import load_persona_file
from judgelab.llm.prompts import load_template
from judgelab.llm.session import JobContext

COLUMNS = [
    "concurrency",
    "latency_s",
    "requests",
    "rounds",
    "elapsed_s",
    "requests_per_s",
    "little_C_over_L",
    "fraction",
    "client_cpu_s",
    "server_cpu_s",
    "cached_after",
    "load_1min",
]


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


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (``/proc/<pid>/stat``; Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def distinct_requests(n: int) -> list[Request]:
    """``n`` distinct judgment requests: the DL19 sample's pairs x personas x templates, then the
    same with the query numbered (``query (2)``) as often as needed."""
    d = ROOT / "resources" / "sample" / "dl19"
    pairs = build_trec_table("dl19", d / "qrels.txt", d / "topics.txt", d / "texts.tsv")
    templates = [load_template("peras/wo_cot"), load_template("peras/w_cot")]
    personas = [p.instruction for p in load_persona_file().values()]
    out: list[Request] = []
    k = 0
    while len(out) < n:
        k += 1
        table = pairs if k == 1 else pairs.assign(query=pairs["query"] + f" ({k})")
        for template in templates:
            for persona in personas:
                out += judgment_requests(
                    table, Judge("judge", template=template, persona=persona, max_tokens=8)
                )
    return out[:n]


def one_run(concurrency: int, latency: float, rounds: int) -> dict:
    n = concurrency * rounds
    requests = distinct_requests(n + concurrency)
    warm, timed = requests[:concurrency], requests[concurrency:]
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(TESTS / "fake_openai.py"), "--port", str(port), "--latency", str(latency)],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    spec = {
        "backend": "openai",
        "model": "fake",
        "base_url": f"http://127.0.0.1:{port}/v1",
        "api_key_env": None,
        "concurrency": concurrency,
        "timeout": 30 + latency,
        "max_retries": 0,
    }
    try:
        wait_ready(f"{spec['base_url']}/chat/completions", server)
        with tempfile.TemporaryDirectory() as tmp:
            context = JobContext(str(Path(tmp) / "requests.sqlite"), desc="throughput")
            with context.session(spec, "fake") as client:
                client.run(warm, desc="warm-up", progress=False)  # connections, imports: not timed
                cpu0, server0 = resource.getrusage(resource.RUSAGE_SELF), process_cpu_s(server.pid)
                t0 = time.perf_counter()
                answers = client.run(timed, desc="throughput", progress=False)
                elapsed = time.perf_counter() - t0
                cpu1, server1 = resource.getrusage(resource.RUSAGE_SELF), process_cpu_s(server.pid)
                sent = client.calls
            with context.session(spec, "fake") as again:
                cached = sum(hit for _, hit in again.run(timed, desc="reread", progress=False))
    finally:
        server.terminate()
        server.wait(10)
    if len(answers) != len(timed) or not all(c.label_probs for c, _ in answers):
        raise SystemExit("not every request was answered with its label distribution")
    if sent != len(timed) + len(warm):
        raise SystemExit(f"{sent} calls sent for {len(timed) + len(warm)} distinct requests")
    rate = len(timed) / elapsed
    return {
        "concurrency": concurrency,
        "latency_s": latency,
        "requests": len(timed),
        "rounds": rounds,
        "elapsed_s": elapsed,
        "requests_per_s": rate,
        "little_C_over_L": concurrency / latency,
        "fraction": rate / (concurrency / latency),
        "client_cpu_s": (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime),
        # the fake server's own work: it serialises each burst of C requests (C x its CPU per
        # request is added to every round), a bound of the harness, not of the client
        "server_cpu_s": server1 - server0,
        "cached_after": cached,
        "load_1min": os.getloadavg()[0],
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--setting", action="append", help="C:L (concurrency:latency seconds); default 16:0.2 and 64:1.0"
    )
    ap.add_argument("--rounds", type=int, default=25, help="rounds of C requests (at least 20)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", type=Path, default=default_out("openai_throughput"))
    args = ap.parse_args(argv)
    if args.rounds < 20:
        ap.error("--rounds must be at least 20 (the ramp and the tail of a shorter run weigh in)")
    settings = [
        (int(c), float(lat)) for c, lat in (s.split(":") for s in (args.setting or ["16:0.2", "64:1.0"]))
    ]
    rows = []
    for c, lat in settings:
        for _ in range(args.repeat):
            rows.append(one_run(c, lat, args.rounds))
            print(markdown(rows[-1:], COLUMNS).splitlines()[-1], flush=True)
    write_tsv(rows, COLUMNS, args.out)
    print(markdown(rows, COLUMNS))
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
