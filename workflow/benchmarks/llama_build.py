"""Prompt tokens per second of the embedded model, per llama.cpp build and load: is the local
backend's load (AMX kept out on a build with AMX kernels, judgelab.llm.backends.native) as fast as
the build CI used to make?

    python workflow/benchmarks/llama_build.py                      # the installed build
    python workflow/benchmarks/llama_build.py --build fallback=/tmp/lcp-fallback --runs 5

Each variant runs in a fresh process: the installed llama-cpp-python (``installed``) or one
installed elsewhere with ``pip install --target DIR`` (``--build NAME=DIR``, put first on
``PYTHONPATH``), loaded as

* ``defaults``: ``llama_cpp.Llama`` with llama.cpp's own model defaults (what jobs did before);
* ``backend``: as the local backend loads it (:func:`judgelab.llm.backends.native.load_fields`
  with ``amx: false``: no extra buffer types if the build has AMX kernels, else the defaults);
* ``no-extra-buffers``: extra buffer types off whatever the build (what an AMX build runs).

A run: load the model (outside the timing), then evaluate the judgment prompts of the first
``--pairs`` pairs of the bundled DL19 sample (PERAS's ``w_cot`` template, persona LA; each prompt from an empty KV state, no prefix
reuse) with one thread, as a default-config job does; prompt tokens per CPU second and per wall
second. ``--runs`` runs per variant (default 5), taken in turns (run 1 of every variant, then run 2,
...); the median is reported, with the build's
``llama_print_system_info()`` and the buffer types llama.cpp reported loading the weights.
Writes ``results/benchmarks/llama_build.tsv``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from benchlib import ROOT, SRC, default_out, markdown, write_tsv

COLUMNS = [
    "build",
    "load",
    "runs",
    "prompts",
    "prompt_tokens",
    "tokens_per_cpu_s",
    "tokens_per_wall_s",
    "min_tokens_per_cpu_s",
    "max_tokens_per_cpu_s",
    "vs_first",
    "weights_in",
    "system_info",
]

CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, os.environ["JL_SRC"])
import llama_cpp
from judgelab.data.prepare import build_trec_table
from judgelab.llm.backends import native
from judgelab.llm.backends.local import default_model_path
from judgelab.llm.judge import Judge
from judgelab.llm.judging import judgment_requests
from judgelab.llm.personas import load_persona_file
from judgelab.llm.prompts import load_template
from llama_cpp.llama_chat_format import Jinja2ChatFormatter

load, threads, n_pairs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fields = {"defaults": {}, "backend": native.load_fields(False), "no-extra-buffers": {"use_extra_bufts": False}}[load]
sample = os.path.join(os.environ["JL_ROOT"], "resources", "sample", "dl19")
pairs = build_trec_table("dl19", *(os.path.join(sample, f) for f in ("qrels.txt", "topics.txt", "texts.tsv")))
judge = Judge("m", template=load_template("peras/w_cot"), persona=load_persona_file()["LA"].instruction, max_tokens=1)
requests = judgment_requests(pairs.sort_values(["qid", "docid"]).head(n_pairs), judge)

with native.model_params(fields):
    llm = llama_cpp.Llama(model_path=str(default_model_path()), n_ctx=2048, n_threads=threads,
                          n_threads_batch=threads, verbose=True)
template = llm.metadata["tokenizer.chat_template"]
fmt = Jinja2ChatFormatter(template=template, eos_token="", bos_token="", add_generation_prompt=True)
prompts = [llm.tokenize(fmt(messages=r.message_dicts()).prompt.encode(), add_bos=False, special=True) for r in requests]
llm.n_tokens = 0
llm.eval(prompts[0])  # warm up, outside the timing
r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
for toks in prompts:
    llm.n_tokens = 0
    llm.eval(toks)
wall = time.perf_counter() - t0
r1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
print(json.dumps({"tokens": sum(map(len, prompts)), "prompts": len(prompts), "cpu": cpu, "wall": wall,
                  "use_extra_bufts": bool(llm.model_params.use_extra_bufts),
                  "system_info": llama_cpp.llama_print_system_info().decode().strip()}))
"""


def measure(build: str | None, load: str, threads: int, pairs: int) -> dict:
    env = {**os.environ, "JL_SRC": str(SRC), "JL_ROOT": str(ROOT)}
    if build:
        env["PYTHONPATH"] = os.pathsep.join([build, *filter(None, [env.get("PYTHONPATH", "")])])
    out = subprocess.run(
        [sys.executable, "-c", CHILD, load, str(threads), str(pairs)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    # llama.cpp's load log (verbose, on stderr): "load_tensors:   CPU_Mapped model buffer size = ..."
    got["weights_in"] = "+".join(
        sorted(
            {
                line.split("model buffer")[0].split(":")[-1].strip()
                for line in out.stderr.splitlines()
                if "model buffer size" in line
            }
        )
    )
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="append", default=[], help="NAME=DIR of another llama-cpp-python")
    ap.add_argument("--load", action="append", default=None, help="defaults | backend | no-extra-buffers")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--pairs", type=int, default=8, help="the first N pairs of the sample (8: about 3,600 tokens)"
    )
    ap.add_argument("--out", default=str(default_out("llama_build")))
    args = ap.parse_args()

    builds = [("installed", None)] + [tuple(b.split("=", 1)) for b in args.build]
    loads = args.load or ["defaults", "backend", "no-extra-buffers"]
    variants = [(name, folder, load) for name, folder in builds for load in loads]
    # round robin (run 1 of every variant, then run 2, ...): a drift of the machine's speed over
    # the minutes of the benchmark falls on every variant alike, not on the last ones
    measured: dict[tuple[str, str], list[dict]] = {(n, ld): [] for n, _, ld in variants}
    for _ in range(args.runs):
        for name, folder, load in variants:
            measured[(name, load)].append(measure(folder, load, args.threads, args.pairs))
    rows = []
    for name, _, load in variants:
        runs = measured[(name, load)]
        per_cpu = [r["tokens"] / r["cpu"] for r in runs]
        per_wall = [r["tokens"] / r["wall"] for r in runs]
        rows.append(
            {
                "build": name,
                "load": load + (" (extra buffers off)" if not runs[0]["use_extra_bufts"] else ""),
                "runs": len(runs),
                "prompts": runs[0]["prompts"],
                "prompt_tokens": runs[0]["tokens"],
                "tokens_per_cpu_s": statistics.median(per_cpu),
                "tokens_per_wall_s": statistics.median(per_wall),
                "min_tokens_per_cpu_s": min(per_cpu),
                "max_tokens_per_cpu_s": max(per_cpu),
                "weights_in": runs[0]["weights_in"],
                "system_info": runs[0]["system_info"],
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    for r in rows:
        r["vs_first"] = r["tokens_per_cpu_s"] / rows[0]["tokens_per_cpu_s"]
    path = write_tsv(rows, COLUMNS, args.out)
    print(markdown(rows, [c for c in COLUMNS if c != "system_info"]))
    print(f"\nwritten: {path}")


if __name__ == "__main__":
    main()
