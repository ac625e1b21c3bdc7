"""A newcomer's first hour, measured: the README's install and default-run commands exactly as
written, in a fresh clone, a fresh virtual environment and with no pip cache.

    python3 workflow/benchmarks/first_hour.py                 # this checkout's HEAD
    python3 workflow/benchmarks/first_hour.py --commit 0baf425 --out /tmp/first-hour

What it does, in ``--out`` (default: a new temporary folder, kept):

1. ``git clone`` of this repository at ``--commit`` (a clean clone: no results, no cache, no
   untracked file) into ``judgelab/``, and ``python3 -m venv venv`` beside it;
2. reads the README's "Set up and run" block (``pip install -e '.[test]' && snakemake all --cores
   8``) and runs it in the clone with the venv first on ``PATH``, ``PIP_NO_CACHE_DIR=1`` (nothing
   from an earlier pip run), as a user's shell would: each part of the ``&&`` chain timed on its
   own (wall and CPU seconds of it and every process it waited for), its exit status kept;
3. runs ``snakemake all --cores 8`` a second time: it must say "Nothing to be done".

Also how busy the machine was with other work meanwhile (``/proc/stat``; 0 = otherwise idle), the
load average before, the CPU, the jobs Snakemake ran. Writes ``first_hour.json`` and
``first_hour.md`` in ``--out`` and prints the table. The run's own folder is left in place.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def busy_seconds() -> float:
    """Non-idle CPU seconds of the whole machine since boot (/proc/stat, all cores)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def readme_commands(readme: Path) -> list[str]:
    """The commands of the README's "Set up and run" block, split at ``&&`` (as the shell runs
    them: each only if the one before succeeded)."""
    text = readme.read_text()
    section = text[text.index("## Set up and run") :]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    if block is None:
        raise SystemExit(f"{readme}: no bash block under 'Set up and run'")
    lines = [
        ln.strip() for ln in block.group(1).splitlines() if ln.strip() and not ln.strip().startswith("#")
    ]
    return [part.strip() for line in lines for part in line.split("&&")]


def timed(command: str, cwd: Path, env: dict[str, str], log: Path) -> dict:
    """Run ``command`` with bash in ``cwd``; wall and CPU seconds, the other load, exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0, t0 = busy_seconds(), time.perf_counter()
    with open(log, "w") as fh:
        rc = subprocess.run(
            ["bash", "-c", command], cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT
        ).returncode
    wall = time.perf_counter() - t0
    busy = busy_seconds() - busy0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "command": command,
        "exit": rc,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "other_load": round(max(busy - cpu, 0.0) / wall, 2) if wall > 0 else 0.0,
        "log": str(log),
    }


def jobs_run(log: Path) -> int | None:
    """The number of jobs Snakemake ran ("N of N steps (100%) done")."""
    found = re.findall(r"(\d+) of (\d+) steps \(100%\) done", log.read_text(errors="replace"))
    return int(found[-1][1]) if found else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commit", default="HEAD", help="the commit to clone (default HEAD)")
    ap.add_argument("--out", type=Path, help="the folder to work in (default: a new temporary one)")
    ap.add_argument("--python", default=sys.executable, help="the Python that makes the venv")
    args = ap.parse_args(argv)

    out = args.out or Path(tempfile.mkdtemp(prefix="first-hour-"))
    out.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", args.commit], capture_output=True, text=True, check=True
    ).stdout.strip()
    clone, venv = out / "judgelab", out / "venv"
    if clone.exists() or venv.exists():
        raise SystemExit(f"{out} already holds judgelab/ or venv/: give an empty --out")
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", commit], check=True)
    subprocess.run([args.python, "-m", "venv", str(venv)], check=True)

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_CACHE_DIR")}
    env.update(
        {
            "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
            "VIRTUAL_ENV": str(venv),
            "PIP_NO_CACHE_DIR": "1",
        }
    )
    load = os.getloadavg()
    commands = readme_commands(clone / "README.md")
    steps = []
    for i, command in enumerate(commands):
        step = timed(command, clone, env, out / f"step{i + 1}.log")
        steps.append(step)
        print(f"{command}: exit {step['exit']}, {step['wall_s']} s wall, {step['cpu_s']} CPU s", flush=True)
        if step["exit"] != 0:
            break
    again = None
    if all(s["exit"] == 0 for s in steps) and len(steps) == len(commands):
        again = timed(commands[-1], clone, env, out / "again.log")
        again["nothing_to_do"] = "Nothing to be done" in Path(again["log"]).read_text(errors="replace")
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    report = {
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "amx": " amx_tile" in Path("/proc/cpuinfo").read_text(),
        "load_before": [round(x, 2) for x in load],
        "python": subprocess.run([args.python, "--version"], capture_output=True, text=True).stdout.strip(),
        "steps": steps,
        "jobs": jobs_run(Path(steps[-1]["log"])) if len(steps) == len(commands) else None,
        "second_run": again,
        "folder": str(out),
    }
    (out / "first_hour.json").write_text(json.dumps(report, indent=1) + "\n")
    rows = [
        "| step | exit | wall | CPU s | other load |",
        "|---|---|---|---|---|",
    ]
    for s in [*steps, *([again] if again else [])]:
        minutes = f"{int(s['wall_s'] // 60)}:{int(s['wall_s'] % 60):02d}"
        rows.append(
            f"| `{s['command']}`{' (again)' if s is again else ''} | {s['exit']} | {minutes} ({s['wall_s']} s) "
            f"| {s['cpu_s']} | {s['other_load']} |"
        )
    head = (
        f"commit {commit[:7]}, {report['date']}, {cpu} x {report['cpus']} (AMX: {report['amx']}), "
        f"{report['python']}, load before {report['load_before'][0]}; jobs {report['jobs']}; "
        f"second run: {'Nothing to be done' if again and again['nothing_to_do'] else 'NOT nothing to do'}"
    )
    table = head + "\n\n" + "\n".join(rows) + "\n"
    (out / "first_hour.md").write_text(table)
    print(table)
    ok = again is not None and again["exit"] == 0 and again["nothing_to_do"]
    print(f"folder: {out} ({'ok' if ok else 'FAILED'}); commands: {' && '.join(map(shlex.quote, commands))}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
