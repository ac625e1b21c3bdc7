"""One way to run the real workflow in tests: a run folder made from a `.test/<name>/` config,
Snakemake as a subprocess, and the jobs a dry run lists."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_CONFIGS = ROOT / ".test"


def make_workdir(dest: Path, name: str) -> Path:
    """A run folder at ``dest`` with ``.test/<name>``'s config and extra files (copied) and the
    fixtures (linked)."""
    src = TEST_CONFIGS / name
    dest.mkdir(parents=True, exist_ok=True)
    for item in src.iterdir():
        if item.name == "fixtures":
            (dest / "fixtures").symlink_to(ROOT / "tests" / "fixtures")
        elif item.is_dir():
            shutil.copytree(item, dest / item.name)
        else:
            shutil.copy(item, dest / item.name)
    return dest


def copy_checkout(dest: Path) -> Path:
    """The workflow at ``dest``: the tracked and untracked-but-not-ignored files of this checkout
    (no results, no caches), with their modification times."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = ROOT / rel
        if src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).symlink_to(os.readlink(src))
        elif src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def snakemake_cmd(workdir: Path, *args: str, cores: int = 2, snakefile: Path | None = None) -> list[str]:
    """``python -m snakemake -s <checkout>/Snakefile -d workdir --cores N args...`` as a command
    line (for a test that starts it itself, e.g. to interrupt it)."""
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


def snakemake(
    workdir: Path,
    *args: str,
    cores: int = 2,
    env: dict | None = None,
    timeout: int = 1800,
    snakefile: Path | None = None,
) -> subprocess.CompletedProcess:
    """:func:`snakemake_cmd`, run with its output captured; ``snakefile``: another workflow's
    Snakefile (e.g. a second clone's)."""
    cmd = snakemake_cmd(workdir, *args, cores=cores, snakefile=snakefile)
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, env=os.environ.copy() if env is None else env
    )


def output(run: subprocess.CompletedProcess) -> str:
    return run.stdout + run.stderr


def dry_run_jobs(text: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of every job a dry run (``-n``) lists, in order (checkpoint jobs too)."""
    jobs: list[tuple[str, dict[str, str]]] = []
    rule = None
    for line in text.splitlines():
        m = re.match(r"^(?:local)?(?:rule|checkpoint) (\w+):", line)
        if m:
            if rule is not None:
                jobs.append((rule, {}))
            rule = m.group(1)
            continue
        m = re.match(r"^\s+wildcards: (.*)$", line)
        if m and rule is not None:
            jobs.append((rule, dict(kv.split("=", 1) for kv in m.group(1).split(", "))))
            rule = None
    if rule is not None:
        jobs.append((rule, {}))
    return jobs


def planned_jobs(text: str) -> set[tuple[str, str]]:
    """(rule, persona or '') of every job a dry run lists."""
    return {(rule, wc.get("persona", "")) for rule, wc in dry_run_jobs(text)}
