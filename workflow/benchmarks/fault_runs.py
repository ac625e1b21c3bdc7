"""What a fault costs in paid calls: a workflow run of ``.test/api`` (PERAS with an
OpenAI-compatible judge, 32 distinct requests) against the counting fake server of
``tests/fake_openai.py``, hit by a fault, then rerun with the fault gone; printed: the calls of
each run and the requests paid more than once (the number that must be 0).

    python3 workflow/benchmarks/fault_runs.py full-disk --free-kb 250 350      # needs root (tmpfs)
    python3 workflow/benchmarks/fault_runs.py full-disk-check --free-kb 250
    python3 workflow/benchmarks/fault_runs.py no-place-left --fill-at 4 --space-wait 2
    python3 workflow/benchmarks/fault_runs.py interrupt --after 6 --latency 1.0
    python3 workflow/benchmarks/fault_runs.py interrupt --checkout ../judgelab-before   # another commit

``full-disk``: the run folder and its cache on a 4 MB tmpfs that a filler leaves ``--free-kb`` free
(each value one pair of runs); the filler is removed before the rerun. ``full-disk-check`` (issue
38, case 1): the same, and between the runs ``judgelab cache check`` (its exit status recorded),
then, with space again, every command its output names (between backticks), as a user would.
``no-place-left`` (issue 38, case 2): the run folder and the temporary directory (``TMPDIR``, so the
cache's fallback file too) on the tmpfs, which the fake server fills to the last byte when request
``--fill-at`` arrives; the disk stays full until the run ends (``cache_space_wait`` set to
``--space-wait`` where the checkout knows the key); recorded: how many requests the run's messages
name as lost (``said_lost_keys``; older code only counted them, ``said_nowhere``) and whether they
claimed the answers were "in this job's output". ``interrupt``: SIGINT to
Snakemake's process group (a terminal's Ctrl-C) once ``--after`` requests have arrived at a server
answering after ``--latency`` seconds; ``--to-snakemake`` sends it to Snakemake alone.

``--checkout DIR`` runs another checkout's workflow and fake server (a ``git worktree`` of an older
commit: the before of a fix); default this one. Writes ``results/benchmarks/fault_runs.tsv``
(``full-disk``, ``interrupt``; the others ``fault_runs_<fault>.tsv``).
The tests asserting the same: ``tests/test_full_disk.py``, ``tests/test_interrupt.py``."""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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


@contextlib.contextmanager
def nearly_full_disk(snakerun, free_kb: int):
    """A 4 MB tmpfs with `.test/api`'s run folder on it and a filler file leaving ``free_kb`` KB
    free; yields (run folder, filler); unmounted after."""
    mnt = Path(tempfile.mkdtemp(prefix="judgelab-full-disk-"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], check=True)
    try:
        wd = snakerun.make_workdir(mnt / "run", "api")
        st = os.statvfs(mnt)
        filler = mnt / "filler"
        filler.write_bytes(b"\0" * max(0, st.f_bavail * st.f_frsize - free_kb * 1024))
        yield wd, filler
    finally:
        subprocess.run(["umount", "-l", str(mnt)])
        shutil.rmtree(mnt, ignore_errors=True)


def full_disk(checkout: Path, free_kb: int) -> dict:
    fake_openai, snakerun = setup(checkout)
    import yaml

    with nearly_full_disk(snakerun, free_kb) as (wd, filler):
        fake = fake_openai.FakeOpenAI()
        with fake_openai.ServerThread(fake.app()) as srv:
            (wd / "server.yaml").write_text(yaml.safe_dump({"models": {"gpt": {"base_url": srv.base_url}}}))
            return {"fault": f"full disk, {free_kb} KB free", **run_pair(snakerun, fake, wd, filler.unlink)}


def judgelab_check(checkout: Path, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "judgelab.cli", "cache", "check", "--cache", str(cache)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(checkout / "workflow" / "src")},
        timeout=300,
    )


def follow(text: str, cwd: Path) -> list[int]:
    """Run every command ``text`` names between backticks (``judgelab`` and ``python`` as this
    interpreter); their exit statuses."""
    codes = []
    for cmd in re.findall(r"`([^`]+)`", text):
        cmd = re.sub(r"^judgelab ", f"{shlex.quote(sys.executable)} -m judgelab.cli ", cmd)
        cmd = re.sub(r"^python ", f"{shlex.quote(sys.executable)} ", cmd)
        codes.append(subprocess.run(cmd, shell=True, cwd=cwd, capture_output=True, timeout=600).returncode)
    return codes


def full_disk_check(checkout: Path, free_kb: int) -> dict:
    fake_openai, snakerun = setup(checkout)
    import yaml

    with nearly_full_disk(snakerun, free_kb) as (wd, filler):
        fake = fake_openai.FakeOpenAI()
        seen: dict = {}

        def check_then_follow() -> None:
            checked = judgelab_check(checkout, wd / "cache" / "requests.sqlite")
            seen["check_exit"] = checked.returncode
            filler.unlink()
            seen["commands_exit"] = follow(checked.stdout + checked.stderr, wd)

        with fake_openai.ServerThread(fake.app()) as srv:
            (wd / "server.yaml").write_text(yaml.safe_dump({"models": {"gpt": {"base_url": srv.base_url}}}))
            row = run_pair(snakerun, fake, wd, check_then_follow)
        return {"fault": f"full disk, {free_kb} KB free, then check and its commands", **seen, **row}


def no_place_left(checkout: Path, fill_at: int, space_wait: float) -> dict:
    fake_openai, snakerun = setup(checkout)
    import yaml

    mnt = Path(tempfile.mkdtemp(prefix="judgelab-no-place-"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], check=True)
    filler = mnt / "filler"

    server: Any = fake_openai.FakeOpenAI

    class Filling(server):
        async def chat(self, request):
            if self.arrivals == fill_at:
                with open(filler, "wb", buffering=0) as fh:  # to the last byte
                    for size in (1 << 20, 1 << 16, 4096, 512, 1):
                        with contextlib.suppress(OSError):
                            while True:
                                fh.write(b"\0" * size)
            return await super().chat(request)

    try:
        wd = snakerun.make_workdir(mnt / "run", "api")
        (mnt / "tmp").mkdir()
        saved = {k: os.environ.get(k) for k in ("TMPDIR", "JUDGELAB_CACHE_FALLBACK")}
        os.environ["TMPDIR"] = str(mnt / "tmp")
        os.environ.pop("JUDGELAB_CACHE_FALLBACK", None)
        fake = Filling()
        said: dict = {}

        def first(args, env):
            done = snakerun.snakemake(wd, *args, env=env, timeout=900)
            text = done.stdout + done.stderr
            # the requests named lost (several lines may name the same job's: counted once each)
            named: set[str] = set()
            said["said_more"] = False
            for keys, more in re.findall(
                r"paid answers are lost: .*?requests ([0-9a-f, ]+?)( and \d+ more)?\. ", text
            ):
                named.update(keys.split(", "))
                said["said_more"] = said.get("said_more", False) or bool(more)
            said["said_lost_keys"] = len(named)
            said["said_nowhere"] = ",".join(re.findall(r"(\d+) answers could be written nowhere", text))
            said["said_in_output"] = "in this job's output" in text
            return done.returncode

        schema = (checkout / "workflow" / "schemas" / "config.schema.yaml").read_text(encoding="utf-8")
        config: dict = {}
        if "cache_space_wait" in schema:
            config["cache_space_wait"] = space_wait
        try:
            with fake_openai.ServerThread(fake.app()) as srv:
                config["models"] = {"gpt": {"base_url": srv.base_url}}
                (wd / "server.yaml").write_text(yaml.safe_dump(config))
                row = run_pair(snakerun, fake, wd, lambda: filler.unlink(missing_ok=True), first=first)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        return {"fault": f"run folder and temp dir on one disk, full at request {fill_at}", **said, **row}
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
    ap.add_argument("fault", choices=["full-disk", "full-disk-check", "no-place-left", "interrupt"])
    ap.add_argument("--checkout", type=Path, default=HERE)
    ap.add_argument("--free-kb", type=int, nargs="+", default=[250, 350])
    ap.add_argument("--fill-at", type=int, default=4)
    ap.add_argument("--space-wait", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=1, help="runs of no-place-left")
    ap.add_argument("--after", type=int, default=6)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--to-snakemake", action="store_true")
    ap.add_argument(
        "--out",
        type=Path,
        help="default results/benchmarks/fault_runs.tsv (full-disk, interrupt), else fault_runs_<fault>.tsv",
    )
    a = ap.parse_args()
    checkout = a.checkout.resolve()
    commit = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    if a.fault == "full-disk":
        rows = [full_disk(checkout, kb) for kb in a.free_kb]
    elif a.fault == "full-disk-check":
        rows = [full_disk_check(checkout, kb) for kb in a.free_kb]
    elif a.fault == "no-place-left":
        rows = [no_place_left(checkout, a.fill_at, a.space_wait) for _ in range(a.repeat)]
    else:
        rows = [interrupt(checkout, a.after, a.latency, not a.to_snakemake)]
    rows = [{"commit": commit or str(checkout), **r} for r in rows]
    if a.out is None:
        same = a.fault in ("full-disk", "interrupt")  # one table: the same columns
        a.out = Path("results/benchmarks") / (
            "fault_runs.tsv" if same else f"fault_runs_{a.fault.replace('-', '_')}.tsv"
        )
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
