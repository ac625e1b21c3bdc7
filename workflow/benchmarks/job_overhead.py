"""Where a default LLM job's time goes: per-job overhead vs model compute.

Measured components (CPU = user + system seconds, beside wall seconds):

a. interpreter start (``python -c pass``); parts a and b run every snippet in a fresh interpreter,
   in rounds, and report the median of the round-by-round differences;
b. imports: Snakemake's script-job preamble, the imports of a judge job script
   (``judgelab.llm.session``, ``judgelab.studies.peras.jobs``), the same with ``jobs/peras.py`` as it was at
   765f5c1 (before the analysis imports became lazy), what each analysis library (sklearn,
   xgboost, lightgbm, matplotlib, statsmodels) would add if a judge job imported it eagerly,
   and what the API backends' modules add to a judge job of an API model;
c. Snakemake: one real judge job of ``.test/peras`` (8 pairs), its whole ``snakemake``
   invocation beside a dry run of the same target and beside the job's own compute line
   ("N new calls, M cache hits, tokens ..., X s"); with an empty cache, with only the model hash
   memo, and with every answer cached (medians of ``--repeat-snakemake`` runs);
d. model load: the GGUF SHA-256 (cold, then from the ``file-hashes.json`` memo beside the
   cache), ``import llama_cpp``, loading the model, the first call;
e. compute per call: the other calls of the default config's dl19 judge job (persona LA,
   peras/wo_cot, prefix reuse), prompt tokens evaluated per CPU second;
sum. the default judge job composed from these parts (overhead vs compute), and an openai judge
   job's overhead.

``--run-dir`` (repeatable) also parses a finished (or running) run's logs: the job starts and
ends in ``.snakemake/log/*.snakemake.log`` and each LLM job's usage line in its log under
``results/logs`` give per-job wall vs compute per rule (wall only: the logs hold no CPU time).

    python workflow/benchmarks/job_overhead.py [--repeat 7] [--repeat-snakemake 3]
        [--run-dir /path/to/run ...] [--skip-snakemake] [--skip-model]
        [--out results/benchmarks/job_overhead.tsv]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from benchlib import (
    ROOT,
    TESTS,
    Clock,
    Timing,
    default_out,
    markdown,
    median,
    on_path,
    run,
    snakemake_cmd,
    write_tsv,
)

COLUMNS = ["section", "component", "cpu_s", "wall_s", "unit", "n", "note"]

#: The commit whose jobs/peras.py imported the analysis modules at the top (the "before").
BEFORE_COMMIT = "765f5c1"
BEFORE_FILE = "workflow/src/judgelab/jobs/peras.py"

#: What a judge job script imports (workflow/scripts/peras/judge.py).
JUDGE_IMPORTS = "import judgelab.llm.session, judgelab.studies.peras.jobs"
#: What Snakemake's preamble of a script job imports to unpickle its `snakemake` object.
PREAMBLE_IMPORTS = "import pickle, snakemake.io, snakemake.iocontainers, snakemake.logging"
#: The analysis libraries, as the judgelab modules import them.
HEAVY = {
    "sklearn": "import sklearn.metrics, sklearn.ensemble",
    "xgboost": "import xgboost",
    "lightgbm": "import lightgbm",
    "matplotlib": "import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot",
    "statsmodels": "import statsmodels.miscmodels.ordinal_model",
}

#: The API backends' modules (a job imports its model's backend when it builds it).
API_BACKENDS = {
    "openai": "judgelab.llm.backends.openai_compat",
    "anthropic": "judgelab.llm.backends.anthropic_api",
    "bedrock": "judgelab.llm.backends.bedrock",
}


def row(
    section: str, component: str, t: Timing | None, unit: str, n: int | None = None, note: str = ""
) -> dict:
    return {
        "section": section,
        "component": component,
        "cpu_s": t.cpu if t else None,
        "wall_s": t.wall if t else None,
        "unit": unit,
        "n": n,
        "note": note,
    }


# -- a, b: interpreter and imports ------------------------------------------------------------


def time_snippets(codes: dict[str, str], repeat: int) -> dict[str, list[Timing]]:
    """Each snippet in a fresh interpreter, ``repeat`` rounds, the snippets in turn within a round
    (so that the machine's changing load falls on all of them alike)."""
    out: dict[str, list[Timing]] = {k: [] for k in codes}
    for _ in range(repeat):
        for k, code in codes.items():
            out[k].append(run([sys.executable, "-c", code])[0])
    return out


def paired(a: list[Timing], b: list[Timing]) -> Timing:
    """Median of the round-by-round differences ``a - b``."""
    return median([x - y for x, y in zip(a, b)])


def before_module_code(tmp: Path) -> str:
    """Code that imports jobs/peras.py of :data:`BEFORE_COMMIT` as ``judgelab.jobs.peras`` (its
    module name then, so its relative imports resolve)."""
    src = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{BEFORE_COMMIT}:{BEFORE_FILE}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    old = tmp / "peras_before.py"
    old.write_text(src, encoding="utf-8")
    return (
        "import importlib.util, sys, judgelab.llm.session; "
        f"s = importlib.util.spec_from_file_location('judgelab.jobs.peras', {str(old)!r}); "
        "m = importlib.util.module_from_spec(s); sys.modules['judgelab.jobs.peras'] = m; "
        "s.loader.exec_module(m); assert hasattr(m, 'clf') and hasattr(m, 'fg')"
    )


def interpreter_and_imports(repeat: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        codes = {
            "pass": "pass",
            "preamble": PREAMBLE_IMPORTS,
            "now": JUDGE_IMPORTS,
            "before": before_module_code(Path(tmp)),
            **{name: f"{JUDGE_IMPORTS}; {code}" for name, code in HEAVY.items()},
            "all five": f"{JUDGE_IMPORTS}; " + "; ".join(HEAVY.values()),
            **{kind: f"{JUDGE_IMPORTS}; import {module}" for kind, module in API_BACKENDS.items()},
        }
        t = time_snippets(codes, repeat)
    rows = [
        row("a", "interpreter start (python -c pass)", median(t["pass"]), "per job", repeat),
        row(
            "b",
            "Snakemake script preamble imports",
            paired(t["preamble"], t["pass"]),
            "per job",
            repeat,
            PREAMBLE_IMPORTS,
        ),
        row(
            "b",
            "judge job imports, now (lazy analysis imports)",
            paired(t["now"], t["pass"]),
            "per job",
            repeat,
            JUDGE_IMPORTS,
        ),
        row(
            "b",
            f"judge job imports, before ({BEFORE_COMMIT} jobs/peras.py)",
            paired(t["before"], t["pass"]),
            "per job",
            repeat,
            "imported classifiers, figures, significance, metrics at the top: "
            "sklearn.metrics and matplotlib.pyplot",
        ),
        row("b", "  saved by the lazy imports", paired(t["before"], t["now"]), "per job", repeat),
    ]
    rows += [
        row("b", f"  + {name} if imported eagerly", paired(t[name], t["now"]), "per job", repeat, code)
        for name, code in HEAVY.items()
    ]
    rows.append(
        row("b", "  + all five if imported eagerly", paired(t["all five"], t["now"]), "per job", repeat)
    )
    rows += [
        row(
            "b",
            f"  + the {kind} backend (a judge job of an API model)",
            paired(t[kind], t["now"]),
            "per job",
            repeat,
            f"import {module} (imported when the job builds its backend)",
        )
        for kind, module in API_BACKENDS.items()
    ]
    return rows


# -- d, e: model load and compute (in a fresh process: --probe) ---------------------------------


def probe() -> None:
    """Runs in a fresh interpreter: the default config's dl19 judge job (persona LA, wo_cot) on
    the embedded model, each phase timed in this process; prints JSON."""
    from judgelab.cache import filehash as cache_mod
    from judgelab.data.prepare import prepare_table
    from judgelab.llm.backends.local import LocalBackend
    from judgelab.llm.judge import Judge
    from judgelab.llm.judging import judgment_requests
    from judgelab.wiring.facade import Project

    project = Project.load(directory=ROOT, root=ROOT)
    plan = project.plan("peras")
    files = project.raw_files("dl19")
    _, pairs = prepare_table(
        "dl19", project.selection("dl19"), files["qrels"], files["topics"], files["texts"]
    )
    template = plan.templates[0]
    reqs = judgment_requests(
        pairs,
        Judge(
            "judge",
            template=plan.template_texts[template],
            persona=project.persona_text("LA"),
            max_tokens=plan.max_tokens(template),
            placement=project.placement,
        ),
    )
    spec = project.config["models"][project.judges[0]]
    out: dict = {
        "pairs": len(reqs),
        "template": template,
        "max_tokens": plan.max_tokens(template),
        "threads": int(spec.get("threads", 1)),
    }
    backend = LocalBackend.from_spec(spec)
    with tempfile.TemporaryDirectory() as memo:
        with Clock() as c:
            cache_mod.file_sha256(backend.model_path, memo_dir=memo)
        out["sha256_cold"] = c.timing
        cache_mod._HASHES.clear()  # as a new process: the memo file only
        with Clock() as c:
            cache_mod.file_sha256(backend.model_path, memo_dir=memo)
        out["sha256_memo"] = c.timing
    out["gguf_bytes"] = backend.model_path.stat().st_size
    with Clock() as c:
        import llama_cpp  # noqa: F401
    out["import_llama_cpp"] = c.timing
    with Clock() as c:
        backend.llm  # noqa: B018 - loads the model
    out["model_load"] = c.timing
    with Clock() as c:
        first = backend.complete(reqs[0])
    out["first_call"] = c.timing
    out["first_call_tokens"] = first.prompt_tokens - first.extra["reused_tokens"]
    with Clock() as c:
        rest = [backend.complete(r) for r in reqs[1:]]
    out["other_calls"] = c.timing
    out["other_calls_n"] = len(rest)
    out["other_prompt_tokens"] = sum(x.prompt_tokens for x in rest)
    out["other_evaluated_tokens"] = sum(x.prompt_tokens - x.extra["reused_tokens"] for x in rest)
    out["other_completion_tokens"] = sum(x.completion_tokens for x in rest)
    backend.close()
    print(json.dumps({k: (vars(v) if isinstance(v, Timing) else v) for k, v in out.items()}))


def model_and_compute() -> tuple[list[dict], dict]:
    total, proc = run([sys.executable, str(Path(__file__).resolve()), "--probe"], timeout=1800)
    p = json.loads(proc.stdout.strip().splitlines()[-1])
    t = {k: Timing(**v) for k, v in p.items() if isinstance(v, dict)}
    n = p["other_calls_n"]
    per_call = t["other_calls"].scaled(1 / n)
    job = (
        f"dl19 judge job of the default config (LA, {p['template']}, max_tokens {p['max_tokens']}, "
        f"{p['threads']} thread)"
    )
    rows = [
        row(
            "d",
            "GGUF SHA-256, cold (no memo)",
            t["sha256_cold"],
            "per run",
            note=f"{p['gguf_bytes'] / 1e6:.0f} MB; paid once per cache folder",
        ),
        row("d", "GGUF SHA-256 from file-hashes.json", t["sha256_memo"], "per job"),
        row("d", "import llama_cpp", t["import_llama_cpp"], "per job"),
        row("d", "model load (Llama(), chat formatter)", t["model_load"], "per job"),
        row(
            "d",
            "first call (whole prompt evaluated)",
            t["first_call"],
            "per job",
            1,
            f"{p['first_call_tokens']} prompt tokens",
        ),
        row(
            "e",
            "compute per call (prefix reused)",
            per_call,
            "per call",
            n,
            f"{p['other_evaluated_tokens'] / n:.0f} of {p['other_prompt_tokens'] / n:.0f} prompt "
            f"tokens evaluated, {p['other_completion_tokens'] / n:.1f} answer tokens; "
            f"{p['other_evaluated_tokens'] / t['other_calls'].cpu:.0f} tokens per CPU s, "
            f"{p['other_evaluated_tokens'] / t['other_calls'].wall:.0f} per wall s",
        ),
        row("d", "whole probe process (imports, data, all of d and e)", total, "per run", note=job),
    ]
    return rows, {
        "pairs": p["pairs"],
        "per_call": per_call,
        "first_call": t["first_call"],
        "load": t["sha256_memo"] + t["import_llama_cpp"] + t["model_load"],
    }


# -- c: one real Snakemake job ------------------------------------------------------------------

USAGE = re.compile(
    r"(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) \w+ [\w.]+: (?P<desc>.+?): "
    r"(?P<calls>\d+) new calls, (?P<hits>\d+) cache hits, tokens sent (?P<prompt>\d+) "
    r"prompt \+ (?P<completion>\d+) completion(?:, cost \$(?P<cost>[\d.]+))?, "
    r"(?P<seconds>[\d.]+) s"
)
LOG_TS = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) ")


def usage_lines(text: str) -> list[dict]:
    """The usage lines of an LLM job's log (one per LLM session of the job)."""
    return [
        {**m.groupdict(), "seconds": float(m["seconds"]), "calls": int(m["calls"]), "hits": int(m["hits"])}
        for m in USAGE.finditer(text)
    ]


def snakemake_job(repeat: int) -> list[dict]:
    """One judge job of `.test/peras` (8 pairs, smollm2, 1 thread) through ``snakemake``: the
    whole invocation with an empty cache, with only the model-hash memo kept, and with every
    answer cached, beside a dry run of the same target (Snakemake's start, parse and DAG); each
    ``repeat`` times, medians."""
    with on_path(TESTS):
        from snakerun import make_workdir
    target = "results/peras/judgments/fx/smollm2/wo_cot/default.tsv"
    log = "results/logs/peras/judge/fx/smollm2/wo_cot/default.log"
    cases = {
        "cold": "empty cache, no hash memo",
        "memo": "empty cache, hash memo kept",
        "warm": "every answer cached",
    }
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        wd = make_workdir(Path(tmp) / "run", "peras")

        def sm(*args: str) -> Timing:
            return run(snakemake_cmd(wd, *args, cores=1), timeout=1800)[0]

        rows.append(
            row(
                "c",
                "snakemake: prepare_dataset job (whole invocation)",
                sm("results/datasets/fx.tsv"),
                "per invocation",
            )
        )
        dry, totals, lines = [], defaultdict(list), defaultdict(list)
        for i in range(repeat):
            dry.append(sm("-n", target))
            for case in cases:
                if case == "cold":
                    shutil.rmtree(wd / "cache", ignore_errors=True)  # answers and file-hashes.json
                elif case == "memo":
                    for f in (wd / "cache").glob("requests.sqlite*"):
                        f.unlink()  # the answers go, file-hashes.json stays
                totals[case].append(
                    sm(target, *(("--forcerun", "peras_judge") if i or case != "cold" else ()))
                )
                lines[case].append(usage_lines((wd / log).read_text(encoding="utf-8"))[-1])
        rows.append(
            row("c", "snakemake -n <judge target> (start, parse, DAG)", median(dry), "per invocation", repeat)
        )
        for case, label in cases.items():
            computes = [Timing(u["seconds"], 0, 0) for u in lines[case]]
            u = lines[case][-1]
            rows.append(
                row(
                    "c",
                    f"snakemake <judge target>, {label} (whole invocation)",
                    median(totals[case]),
                    "per invocation",
                    repeat,
                    f"{u['calls']} new calls, {u['hits']} cache hits",
                )
            )
            rows.append(
                row(
                    "c",
                    f"  job's compute line ({case})",
                    median(computes),
                    "per job",
                    repeat,
                    "wall only: the log line times the LLM session (backend, cache, calls)",
                )
                | {"cpu_s": None}
            )
            rest = median([t - d - c for t, d, c in zip(totals[case], dry, computes)])
            rows.append(
                row(
                    "c",
                    f"  total - dry run - compute line ({case})",
                    rest,
                    "per job",
                    repeat,
                    "wall only: the compute line has no CPU figure",
                )
                | {"cpu_s": None}
            )
        rows.append(
            row(
                "c",
                "judge job with nothing to compute: total - dry run (warm)",
                paired(totals["warm"], dry),
                "per job",
                repeat,
                "interpreter, preamble, imports, data, cache look-ups, outputs, "
                "Snakemake's bookkeeping of one job",
            )
        )
    return rows


# -- run-dir: a finished run's logs ------------------------------------------------------------

SM_TS = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
SM_RULE = re.compile(r"^(?:local)?rule (\w+):$")
SM_FINISHED = re.compile(r"^Finished (?:jobid: (\d+)|job (\d+)\.)")


@dataclass
class JobRecord:
    rule: str
    jobid: int
    logs: list[str]
    start: datetime
    end: datetime | None = None
    source: str = ""  # the Snakemake log it comes from
    usage: list[dict] = field(default_factory=list)
    first_log: datetime | None = None
    last_log: datetime | None = None

    @property
    def wall(self) -> float | None:
        return (self.end - self.start).total_seconds() if self.end else None

    @property
    def compute(self) -> float | None:
        return sum(u["seconds"] for u in self.usage) if self.usage else None


def parse_snakemake_log(path: Path) -> list[JobRecord]:
    """Every job a Snakemake log started, with its end where the log has it."""
    jobs: dict[int, JobRecord] = {}
    ts = None
    current: JobRecord | None = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = SM_TS.match(line.strip())
        if m:
            ts = datetime.strptime(" ".join(m.group(1).split()), "%a %b %d %H:%M:%S %Y")
            current = None
            continue
        m = SM_RULE.match(line)
        if m and ts is not None:
            current = JobRecord(m.group(1), -1, [], ts, source=path.name)
            continue
        if current is not None and line.startswith("    "):
            key, _, value = line.strip().partition(": ")
            if key == "jobid":
                current.jobid = int(value)
                jobs[current.jobid] = current
            elif key == "log":
                current.logs = [v.strip() for v in value.split(",") if v.strip()]
            continue
        m = SM_FINISHED.match(line)
        if m and ts is not None:
            jid = int(m.group(1) or m.group(2))
            if jid in jobs:
                jobs[jid].end = ts
        current = None if not line.startswith("    ") else current
    return list(jobs.values())


def parse_run(run_dir: str | Path) -> list[JobRecord]:
    """The finished jobs of a run folder, each with the usage lines and first/last timestamps of
    its log; a job that ran in several invocations counts with its latest run (its log holds
    that one)."""
    run_dir = Path(run_dir)
    latest: dict[tuple, JobRecord] = {}
    for path in sorted((run_dir / ".snakemake" / "log").glob("*.snakemake.log")):
        for job in parse_snakemake_log(path):
            if job.end is None:
                continue
            key = (job.rule, tuple(job.logs)) if job.logs else (job.rule, path.name, job.jobid)
            if key not in latest or latest[key].start <= job.start:
                latest[key] = job
    for job in latest.values():
        for name in job.logs:
            f = run_dir / name
            if not f.is_file():
                continue
            text = f.read_text(encoding="utf-8", errors="replace")
            job.usage += usage_lines(text)
            stamps = [datetime.strptime(s, "%Y-%m-%d %H:%M:%S,%f") for s in LOG_TS.findall(text)]
            if stamps:
                job.first_log = min(stamps + ([job.first_log] if job.first_log else []))
                job.last_log = max(stamps + ([job.last_log] if job.last_log else []))
    return sorted(latest.values(), key=lambda j: (j.start, j.jobid))


def summarize_run(jobs: list[JobRecord]) -> list[dict]:
    """Per rule: jobs, wall per job; for LLM jobs (those with a usage line) the compute line per
    job, the rest of the wall per job, and compute per call. Then the run's totals. Snakemake's
    timestamps have 1 s resolution, so a single job's wall is +-1 s; the means are not biased."""
    by_rule: dict[str, list[JobRecord]] = defaultdict(list)
    for j in jobs:
        by_rule[j.rule].append(j)
    rows = []

    def wall_row(comp: str, seconds: float, unit: str, n: int, note: str = "") -> dict:
        return row("run", comp, Timing(seconds, 0, 0), unit, n, note) | {"cpu_s": None}

    for rule, js in sorted(by_rule.items(), key=lambda kv: -sum(j.wall for j in kv[1])):
        walls = [j.wall for j in js]
        rows.append(
            wall_row(f"{rule}: wall", sum(walls) / len(js), "per job", len(js), f"sum {sum(walls):.0f} s")
        )
        llm = [j for j in js if j.compute is not None]
        if not llm:
            continue
        compute = sum(j.compute for j in llm)
        calls = sum(u["calls"] for j in llm for u in j.usage)
        hits = sum(u["hits"] for j in llm for u in j.usage)
        wall_llm = sum(j.wall for j in llm)
        rows.append(
            wall_row(
                f"{rule}: compute line",
                compute / len(llm),
                "per job",
                len(llm),
                f"sum {compute:.0f} s; {calls} new calls, {hits} cache hits",
            )
        )
        rows.append(
            wall_row(
                f"{rule}: wall - compute line (overhead)",
                (wall_llm - compute) / len(llm),
                "per job",
                len(llm),
                f"{100 * (wall_llm - compute) / wall_llm:.0f}% of the rule's job wall" if wall_llm else "",
            )
        )
        pre = [(j.first_log - j.start).total_seconds() for j in llm if j.first_log]
        if pre:
            rows.append(
                wall_row(
                    f"{rule}: job start -> first log line",
                    sum(pre) / len(pre),
                    "per job",
                    len(pre),
                    "interpreter, preamble, imports, reading inputs",
                )
            )
        if calls:
            rows.append(wall_row(f"{rule}: compute per new call", compute / calls, "per call", calls))
    total_wall = sum(j.wall for j in jobs)
    llm_jobs = [j for j in jobs if j.compute is not None]
    total_compute = sum(j.compute for j in llm_jobs)
    start, end = min(j.start for j in jobs), max(j.end for j in jobs)
    rows.append(wall_row("all jobs: wall (sum over jobs)", total_wall, "per run", len(jobs)))
    rows.append(
        wall_row(
            "LLM jobs: compute lines (sum)",
            total_compute,
            "per run",
            len(llm_jobs),
            f"{100 * total_compute / total_wall:.0f}% of the jobs' wall" if total_wall else "",
        )
    )
    rows.append(
        wall_row(
            "run: first job start -> last job end",
            (end - start).total_seconds(),
            "per run",
            len(jobs),
            "jobs run in parallel: less than the sum",
        )
    )
    return rows


# -- main --------------------------------------------------------------------------------------


def summary(a_b: list[dict], model: dict, c_rows: list[dict]) -> list[dict]:
    """The default judge job composed from the parts: overhead vs compute."""

    def t(component: str) -> Timing:
        r = next(r for r in a_b if r["component"] == component)
        return Timing(r["wall_s"], r["cpu_s"], 0)

    base = Timing(0, 0, 0)
    for comp in (
        "interpreter start (python -c pass)",
        "Snakemake script preamble imports",
        "judge job imports, now (lazy analysis imports)",
    ):
        base = base + t(comp)
    overhead = base + model["load"]
    n = model["pairs"]
    compute = model["first_call"] + model["per_call"].scaled(n - 1)
    share = overhead.cpu / (overhead.cpu + compute.cpu)
    rows = [
        row(
            "sum",
            "default judge job: overhead (a + b + hash memo, llama_cpp import, model load)",
            overhead,
            "per job",
            note=f"{100 * share:.0f}% of the job's CPU",
        ),
        row("sum", f"default judge job: compute ({n} calls: first + {n - 1} x per call)", compute, "per job"),
    ]
    api = base + t("  + the openai backend (a judge job of an API model)")
    rows.append(
        row(
            "sum",
            "an openai judge job: overhead (a + b + openai backend import)",
            api,
            "per job",
            note="beside the requests' latency; the same for every API judge job of a paper config",
        )
    )
    warm = next((r for r in c_rows if r["component"].startswith("judge job with nothing")), None)
    if warm:
        rows.append(
            row(
                "sum",
                "measured by Snakemake (c): judge job with nothing to compute",
                Timing(warm["wall_s"], warm["cpu_s"], 0),
                "per job",
                note="no model load: every answer came from the cache",
            )
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7, help="rounds of fresh interpreters for parts a and b")
    ap.add_argument(
        "--run-dir",
        action="append",
        default=[],
        help="a run folder (with .snakemake/log and results/logs) to parse; repeatable",
    )
    ap.add_argument("--repeat-snakemake", type=int, default=3, help="repetitions of each case of part c")
    ap.add_argument("--skip-snakemake", action="store_true", help="leave out part c")
    ap.add_argument("--skip-model", action="store_true", help="leave out parts d and e")
    ap.add_argument("--out", default=str(default_out("job_overhead")))
    ap.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        probe()
        return
    rows = interpreter_and_imports(args.repeat)
    c_rows = [] if args.skip_snakemake else snakemake_job(args.repeat_snakemake)
    model_rows, model = ([], None) if args.skip_model else model_and_compute()
    rows += c_rows + model_rows
    if model:
        rows += summary(rows, model, c_rows)
    order = {s: i for i, s in enumerate(["a", "b", "c", "d", "e", "sum"])}
    rows.sort(key=lambda r: order[r["section"]])
    for run_dir in args.run_dir:
        rows += [r | {"section": f"run {Path(run_dir).name}"} for r in summarize_run(parse_run(run_dir))]
    out = write_tsv(rows, COLUMNS, args.out)
    print(markdown(rows, COLUMNS))
    print(f"\nwritten: {out}")


if __name__ == "__main__":
    main()
