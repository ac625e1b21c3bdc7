"""What a fault costs in paid calls: a workflow run of ``.test/api`` (PERAS with an
OpenAI-compatible judge, 32 distinct requests) against the counting fake server of
``tests/fake_openai.py``, hit by a fault, then rerun with the fault gone; printed: the calls of
each run and the requests paid more than once (the number that must be 0).

    python3 workflow/benchmarks/fault_runs.py full-disk --free-kb 250 350      # needs root (tmpfs)
    python3 workflow/benchmarks/fault_runs.py interrupt --after 6 --latency 1.0
    python3 workflow/benchmarks/fault_runs.py interrupt --checkout ../judgelab-before   # another commit

``full-disk``: the run folder and its cache on a 4 MB tmpfs that a filler leaves ``--free-kb`` free
(each value one pair of runs); the filler is removed before the rerun. ``interrupt``: SIGINT to
Snakemake's process group (a terminal's Ctrl-C) once ``--after`` requests have arrived at a server
answering after ``--latency`` seconds; ``--to-snakemake`` sends it to Snakemake alone.

``--checkout DIR`` runs another checkout's workflow and fake server (a ``git worktree`` of an older
commit: the before of a fix); default this one. Writes ``results/benchmarks/fault_runs.tsv``.
The tests asserting the same: ``tests/test_full_disk.py``, ``tests/test_interrupt.py``."""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]


def setup(checkout: Path):
    """The checkout's test helpers (fake server, run folders), its package first on the path."""
    sys.path[:0] = [str(checkout / "tests"), str(checkout / "workflow" / "src")]
    os.environ["PYTHONPATH"] = str(checkout / "workflow" / "src")
    import fake_openai
    import snakerun

    snakerun.ROOT, snakerun.TEST_CONFIGS = checkout, checkout / ".test"
    return fake_openai, snakerun


def paid_twice(fake) -> int:
    return sum(n - 1 for n in fake.served.values() if n > 1)


def run_pair(snakerun, fake, wd: Path, between=None, first=None) -> dict:
    """Run `all` (``first`` launches it when given), call ``between``, rerun; the counts."""
    env = {**os.environ, "JL_WF_KEY": "sk-benchmark"}
    args = ["all", "--configfile", str(wd / "server.yaml")]
    t = time.monotonic()
    rc1 = first(args, env) if first else snakerun.snakemake(wd, *args, env=env, timeout=900).returncode
    calls1, wall1 = fake.arrivals, time.monotonic() - t
    if between:
        between()
    t = time.monotonic()
    rc2 = snakerun.snakemake(wd, *args, env=env, timeout=900).returncode
    return {
        "run1_rc": rc1,
        "run1_calls": calls1,
        "run1_wall_s": round(wall1, 1),
        "rerun_rc": rc2,
        "rerun_calls": fake.arrivals - calls1,
        "rerun_wall_s": round(time.monotonic() - t, 1),
        "distinct": len(fake.served),
        "paid_twice": paid_twice(fake),
    }


def full_disk(checkout: Path, free_kb: int) -> dict:
    fake_openai, snakerun = setup(checkout)
    import yaml

    mnt = Path(tempfile.mkdtemp(prefix="judgelab-full-disk-"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], check=True)
    try:
        wd = snakerun.make_workdir(mnt / "run", "api")
        st = os.statvfs(mnt)
        filler = mnt / "filler"
        filler.write_bytes(b"\0" * max(0, st.f_bavail * st.f_frsize - free_kb * 1024))
        fake = fake_openai.FakeOpenAI()
        with fake_openai.ServerThread(fake.app()) as srv:
            (wd / "server.yaml").write_text(yaml.safe_dump({"models": {"gpt": {"base_url": srv.base_url}}}))
            return {"fault": f"full disk, {free_kb} KB free", **run_pair(snakerun, fake, wd, filler.unlink)}
    finally:
        subprocess.run(["umount", "-l", str(mnt)])
        shutil.rmtree(mnt, ignore_errors=True)


def interrupt(checkout: Path, after: int, latency: float, group: bool) -> dict:
    fake_openai, snakerun = setup(checkout)
    import yaml

    wd = snakerun.make_workdir(Path(tempfile.mkdtemp(prefix="judgelab-interrupt-")) / "run", "api")
    fake = fake_openai.FakeOpenAI(latency=latency)

    def launch(args, env):
        cmd = [sys.executable, "-m", "snakemake", "-s", str(checkout / "Snakefile"), "-d", str(wd)]
        p = subprocess.Popen(
            [*cmd, "--cores", "2", *args],
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while fake.arrivals < after and p.poll() is None:
            time.sleep(0.01)
        if group:
            os.killpg(p.pid, signal.SIGINT)
        else:
            os.kill(p.pid, signal.SIGINT)
        return p.wait(timeout=600)

    with fake_openai.ServerThread(fake.app()) as srv:
        (wd / "server.yaml").write_text(yaml.safe_dump({"models": {"gpt": {"base_url": srv.base_url}}}))
        to = "the process group" if group else "Snakemake alone"
        row = run_pair(snakerun, fake, wd, first=launch)
    shutil.rmtree(wd.parent, ignore_errors=True)
    return {"fault": f"SIGINT to {to} after {after} requests, latency {latency:g} s", **row}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("fault", choices=["full-disk", "interrupt"])
    ap.add_argument("--checkout", type=Path, default=HERE)
    ap.add_argument("--free-kb", type=int, nargs="+", default=[250, 350])
    ap.add_argument("--after", type=int, default=6)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--to-snakemake", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("results/benchmarks/fault_runs.tsv"))
    a = ap.parse_args()
    checkout = a.checkout.resolve()
    commit = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    if a.fault == "full-disk":
        rows = [full_disk(checkout, kb) for kb in a.free_kb]
    else:
        rows = [interrupt(checkout, a.after, a.latency, not a.to_snakemake)]
    rows = [{"commit": commit or str(checkout), **r} for r in rows]
    a.out.parent.mkdir(parents=True, exist_ok=True)
    new = not a.out.exists()
    with open(a.out, "a", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter="\t")
        if new:
            w.writeheader()
        w.writerows(rows)
    for r in rows:
        print("\t".join(f"{k}={v}" for k, v in r.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
