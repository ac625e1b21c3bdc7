"""What the benchmark scripts share: timing of subprocesses and of code in this process (wall
and CPU seconds), the environment that runs this checkout's source, Snakemake's job tables, and
the TSV / Markdown output.

CPU seconds (user + system) are reported beside wall seconds everywhere: on a shared machine the
wall time of a process grows with the load while its CPU time stays close to the work it does.
A subprocess's CPU time is read with ``getrusage(RUSAGE_CHILDREN)`` around it, which covers the
process and every descendant it waited for (Snakemake waits for its jobs); code in this process
is read with ``getrusage(RUSAGE_SELF)`` (all threads, e.g. llama.cpp's).
"""

from __future__ import annotations

import contextlib
import csv
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: The checkout these scripts belong to (its Snakefile, config/, resources/, workflow/src).
ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "workflow" / "src"
TESTS = ROOT / "tests"

if str(SRC) not in sys.path:  # this checkout's judgelab, not an installed one
    sys.path.insert(0, str(SRC))


@dataclass
class Timing:
    wall: float
    user: float
    sys: float

    @property
    def cpu(self) -> float:
        return self.user + self.sys

    def __add__(self, other: Timing) -> Timing:
        return Timing(self.wall + other.wall, self.user + other.user, self.sys + other.sys)

    def __sub__(self, other: Timing) -> Timing:
        return Timing(self.wall - other.wall, self.user - other.user, self.sys - other.sys)

    def scaled(self, k: float) -> Timing:
        return Timing(self.wall * k, self.user * k, self.sys * k)


def median(timings: Sequence[Timing]) -> Timing:
    """Component-wise median (robust to the odd run slowed by the machine's other load)."""
    return Timing(
        statistics.median(t.wall for t in timings),
        statistics.median(t.user for t in timings),
        statistics.median(t.sys for t in timings),
    )


def run_env(extra: Mapping[str, str] | None = None, src: str | Path = SRC) -> dict[str, str]:
    """The environment of a subprocess that must run this checkout's judgelab (PYTHONPATH first);
    ``src``: another checkout's ``workflow/src`` instead."""
    env = os.environ.copy()
    env["PYTHONPATH"] = os.pathsep.join(
        [str(src)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    env.update(extra or {})
    return env


def run(
    cmd: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float | None = None,
    check: bool = True,
) -> tuple[Timing, subprocess.CompletedProcess]:
    """Run ``cmd`` (output captured) and time it: wall, and the CPU of it and its waited-for
    descendants. ``check``: raise with the output's tail when it fails."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        list(map(str, cmd)),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(env) if env is not None else run_env(),
        timeout=timeout,
    )
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if check and proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{(proc.stdout + proc.stderr)[-4000:]}"
        )
    return Timing(wall, r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime), proc


class Clock:
    """Wall and CPU (RUSAGE_SELF: every thread of this process) of a block::

    with Clock() as c:
        work()
    c.timing
    """

    def __enter__(self) -> Clock:
        self._r0 = resource.getrusage(resource.RUSAGE_SELF)
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        wall = time.perf_counter() - self._t0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        self.timing = Timing(wall, r1.ru_utime - self._r0.ru_utime, r1.ru_stime - self._r0.ru_stime)


def snakemake_cmd(
    workdir: str | Path, *args: str, snakefile: str | Path | None = None, cores: int = 2
) -> list[str]:
    """``python -m snakemake -s <Snakefile> -d <workdir> --cores N args...``"""
    return [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(snakefile or ROOT / "Snakefile"),
        "-d",
        str(workdir),
        "--cores",
        str(cores),
        *args,
    ]


def job_stats(text: str) -> dict[str, int]:
    """The "Job stats" table Snakemake prints (rule -> count, plus ``total``); {} when it printed
    none (e.g. "Nothing to be done")."""
    out: dict[str, int] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "Job stats:":
            for row in lines[i + 3 :]:  # after the header and its dashes
                m = re.match(r"^(\w+)\s+(\d+)\s*$", row)
                if not m:
                    break
                out[m.group(1)] = int(m.group(2))
            break
    return out


def nothing_to_be_done(text: str) -> bool:
    return "Nothing to be done" in text


@contextlib.contextmanager
def on_path(folder: Path) -> Iterator[None]:
    """``folder`` first on sys.path for the imports in the block (e.g. the test helpers)."""
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path.remove(str(folder))


def default_out(name: str) -> Path:
    return ROOT / "results" / "benchmarks" / f"{name}.tsv"


def fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 0.01 and v != 0 else f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def write_tsv(rows: Sequence[Mapping], columns: Sequence[str], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([fmt(r.get(c)) for c in columns])
    return path


def markdown(rows: Sequence[Mapping], columns: Sequence[str]) -> str:
    """The rows as a Markdown table (for docs/performance.md and the terminal)."""
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(out)
