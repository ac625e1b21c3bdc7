"""The default `all` (or another target) of one or more commits, each run from scratch: wall and
CPU seconds of the whole `snakemake` invocation, how busy the machine was with other work
meanwhile, and where the jobs' wall time went (per rule and per study, from Snakemake's log).

    python3 workflow/benchmarks/default_run.py --run head=HEAD
    python3 workflow/benchmarks/default_run.py \\
        --run before=765f5c1:workflow/benchmarks/peras-default-cells.yaml \\
        --run after=a6e5310:workflow/benchmarks/peras-default-cells.yaml

Each ``--run LABEL=REF[:CONFIGFILE]`` exports the commit's tree (``git archive``) into a fresh
folder, so results, the request cache and the model-hash memo start empty, and runs
``python -m snakemake --cores N TARGET [--configfile CONFIGFILE]`` there with the exported
``workflow/src`` first on ``PYTHONPATH``. A CONFIGFILE path is read from this checkout, so the
same override can be given to an old commit. ``--keep DIR`` keeps the run folders under DIR (for
``compare_runs.py`` or ``job_overhead.py --run-dir``); ``--rows-from TSV --keep DIR`` summarizes
kept folders again (the runs' timing from the earlier TSV) without running anything.

The other load: the machine's busy CPU seconds (``/proc/stat``) during the run minus the run's own
CPU seconds, over the wall time. 0 is an otherwise idle machine; 1.0 means another process kept a
core busy the whole time. A wall time is only worth comparing between runs with a low other load.

Writes ``results/benchmarks/default_run.tsv`` (one row per run, then per study and per rule).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import ROOT, default_out, markdown, run, run_env, write_tsv  # noqa: E402
from job_overhead import parse_run  # noqa: E402

COLUMNS = [
    "run",
    "commit",
    "section",
    "name",
    "jobs",
    "wall_s",
    "cpu_s",
    "share",
    "compute_s",
    "overhead_per_job_s",
    "note",
]
RULE = re.compile(r"^(?:local)?rule (\w+)\s*:", re.MULTILINE)


def busy_seconds() -> float:
    """Non-idle CPU seconds of the whole machine since boot (/proc/stat, all cores)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def export(ref: str, dest: Path) -> str:
    """The tree of ``ref`` into ``dest``; returns the full commit id."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", ref], capture_output=True, text=True, check=True
    ).stdout.strip()
    data = subprocess.run(["git", "-C", str(ROOT), "archive", commit], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest)
    return commit


def rule_studies(checkout: Path) -> dict[str, str]:
    """rule name -> the study whose rules file defines it (``workflow/rules/<study>/*.smk``; also
    ``workflow/rules/<study>.smk``, where older commits kept a study's entry); rules of
    common/datasets/published/judges/personas/manifest/provenance count as ``shared``."""
    out = {}
    rules = checkout / "workflow" / "rules"
    for smk in sorted(rules.rglob("*.smk")):
        rel = smk.relative_to(rules)
        study = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        if study in ("common", "datasets", "published", "judges", "personas", "manifest", "provenance"):
            study = "shared"
        for name in RULE.findall(smk.read_text(encoding="utf-8")):
            out[name] = study
    for name in RULE.findall((checkout / "Snakefile").read_text(encoding="utf-8")):
        out.setdefault(name, "shared")
    return out


def summarize(run_row: dict, folder: Path) -> list[dict]:
    """The run's row (its timing), then its jobs' wall by study and by rule from the Snakemake log
    and job logs of ``folder``. For an LLM rule: the sum of its jobs' compute lines (the LLM
    session, from backend to close) and the rest of its jobs' wall per job (interpreter, imports,
    reading and writing tables: the overhead)."""
    jobs = parse_run(folder)
    studies = rule_studies(folder)
    total_job_wall = sum(j.wall for j in jobs) or 1.0
    base = dict(run=run_row["run"], commit=run_row["commit"])
    rows = [dict(run_row, jobs=len(jobs))]
    by_study: dict[str, list] = defaultdict(list)
    by_rule: dict[str, list] = defaultdict(list)
    for j in jobs:
        by_study[studies.get(j.rule, "shared")].append(j)
        by_rule[j.rule].append(j)
    llm_all = [j for j in jobs if j.compute is not None]
    if llm_all:
        compute = sum(j.compute for j in llm_all)
        wall = sum(j.wall for j in llm_all)
        rows.append(
            dict(
                base,
                section="LLM jobs (job wall)",
                name="every job with a compute line",
                jobs=len(llm_all),
                wall_s=wall,
                share=wall / total_job_wall,
                compute_s=compute,
                overhead_per_job_s=(wall - compute) / len(llm_all),
                note=f"overhead {wall - compute:.0f} s of {wall:.0f} s",
            )
        )
    for name, js in sorted(by_study.items(), key=lambda kv: -sum(j.wall for j in kv[1])):
        w = sum(j.wall for j in js)
        span = (max(j.end for j in js) - min(j.start for j in js)).total_seconds()
        rows.append(
            dict(
                base,
                section="study (job wall)",
                name=name,
                jobs=len(js),
                wall_s=w,
                share=w / total_job_wall,
                note=f"first start -> last end {span:.0f} s",
            )
        )
    for name, js in sorted(by_rule.items(), key=lambda kv: -sum(j.wall for j in kv[1])):
        w = sum(j.wall for j in js)
        llm = [j for j in js if j.compute is not None]
        row = dict(
            base,
            section="rule (job wall)",
            name=name,
            jobs=len(js),
            wall_s=w,
            share=w / total_job_wall,
            note=f"study {studies.get(name, 'shared')}",
        )
        if llm:
            compute = sum(j.compute for j in llm)
            row.update(compute_s=compute, overhead_per_job_s=(sum(j.wall for j in llm) - compute) / len(llm))
        rows.append(row)
    return rows


def measure(label: str, ref: str, configfile: str | None, target: str, cores: int, base: Path) -> list[dict]:
    folder = base / label
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    commit = export(ref, folder)
    cmd = [sys.executable, "-m", "snakemake", "--cores", str(cores), target]
    if configfile:
        cmd += ["--configfile", str((ROOT / configfile).resolve())]
    env = run_env(src=folder / "workflow" / "src")
    print(f"[{label}] {commit[:10]}: {' '.join(cmd[1:])} (in {folder})", flush=True)
    busy0, load0 = busy_seconds(), os.getloadavg()[0]
    timing, proc = run(cmd, env=env, cwd=folder)
    busy1, load1 = busy_seconds(), os.getloadavg()[0]
    other = max(0.0, (busy1 - busy0) - timing.cpu) / timing.wall
    (folder / "snakemake-output.txt").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    run_row = dict(
        run=label,
        commit=commit[:10],
        section="run",
        name=f"snakemake {target}",
        wall_s=timing.wall,
        cpu_s=timing.cpu,
        note=(
            f"target {target}, --cores {cores}"
            + (f", --configfile {configfile}" if configfile else "")
            + f"; other load {other:.2f} cores (load average {load0:.2f} before, {load1:.2f} after)"
        ),
    )
    rows = summarize(run_row, folder)
    print(markdown(rows[:1], COLUMNS), flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--run", action="append", default=[], metavar="LABEL=REF[:CONFIGFILE]")
    parser.add_argument("--target", default="all")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--keep", type=Path, help="keep the run folders here (default: a temporary folder, removed)"
    )
    parser.add_argument("--out", type=Path, default=default_out("default_run"))
    parser.add_argument(
        "--rows-from",
        type=Path,
        metavar="TSV",
        help="run nothing: take each run's row from TSV (an earlier output) and summarize its "
        "kept folder under --keep again",
    )
    args = parser.parse_args()
    if args.rows_from:
        if args.keep is None:
            parser.error("--rows-from needs --keep (the folder of the kept runs)")
        with open(args.rows_from, encoding="utf-8") as fh:
            runs = [r for r in csv.DictReader(fh, delimiter="\t") if r["section"] == "run"]
        rows = []
        for r in runs:
            run_row = {k: r[k] for k in ("run", "commit", "section", "name", "note")}
            run_row.update(wall_s=float(r["wall_s"]), cpu_s=float(r["cpu_s"]))
            rows += summarize(run_row, args.keep / r["run"])
        write_tsv(rows, COLUMNS, args.out)
        print(markdown(rows, COLUMNS))
        print(f"wrote {args.out}")
        return 0
    if not args.run:
        parser.error("give at least one --run LABEL=REF[:CONFIGFILE] (or --rows-from)")
    specs = []
    for spec in args.run:
        label, sep, rest = spec.partition("=")
        if not sep or not label or not rest:
            parser.error(f"--run {spec!r}: expected LABEL=REF[:CONFIGFILE]")
        ref, _, configfile = rest.partition(":")
        specs.append((label, ref, configfile or None))
    base = args.keep or Path(tempfile.mkdtemp(prefix="judgelab-default-run-"))
    rows = []
    try:
        for label, ref, configfile in specs:
            rows += measure(label, ref, configfile, args.target, args.cores, base)
            write_tsv(rows, COLUMNS, args.out)  # after every run: a later failure loses nothing
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    print(markdown(rows, COLUMNS))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
