"""A full disk loses no paid answer (issue 26, case 2; issue 38, cases 1 and 2), for real: the run
folder and its cache on a small tmpfs that a filler leaves a few hundred KB free, a judge on a
counting OpenAI-compatible server. Needs a tmpfs mount (root); skipped where the machine does not
allow one. The unit tests of the same paths inject SQLITE_FULL (tests/test_cache_faults.py).

* The temporary directory on another disk: the first run stops when the disk fills; the answers
  its jobs were paid for go to the cache, or to the fallback file on the other disk (this session's
  JUDGELAB_CACHE_FALLBACK). `judgelab cache check` then tells the truth - not "damaged" for a cache
  whose named file alone is cut short but whose WAL holds its answers - and following its advice
  (with space again) and rerunning sends only the requests never answered: every prompt is paid once.
* The temporary directory on the full disk too (no place left for the answers at all): a job that
  holds paid answers waits `cache_space_wait` seconds for space, saying so; when space returns it
  writes them and goes on (0 paid twice); when the wait ends, its error names exactly the answers
  lost (the rerun pays for exactly those again)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
import threading
import uuid
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from fake_openai import FakeOpenAI, ServerThread
from snakerun import make_workdir, output, snakemake, snakemake_cmd

pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parents[1] / "workflow" / "src"
#: the model-calling jobs of .test/api: 8 pairs x 2 personas, judgment then confidence
TARGETS = (
    "results/peras/confidence/fx/gpt/wo_cot/default.tsv",
    "results/peras/confidence/fx/gpt/wo_cot/LA.tsv",
)


@pytest.fixture
def small_disk(tmp_path):
    mnt = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or 'mount failed'})")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(disk: Path, leave_kb: int) -> Path:
    st = os.statvfs(disk)
    filler = disk / "filler"
    with open(filler, "wb") as fh:
        fh.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave_kb * 1024))
    return filler


def judgelab(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "judgelab.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


def commands(advice: str) -> list[str]:
    """The shell commands an advice names (between backticks), as this checkout runs them."""
    out = []
    for cmd in re.findall(r"`([^`]+)`", advice):
        cmd = re.sub(r"^judgelab ", f"{shlex.quote(sys.executable)} -m judgelab.cli ", cmd)
        out.append(re.sub(r"^python ", f"{shlex.quote(sys.executable)} ", cmd))
    return out


def copy_reads(cache: Path, dest: Path) -> int:
    """The answers SQLite itself reads from a copy of the cache file with its WAL."""
    dest.mkdir()
    for suffix in ("", "-wal"):
        if Path(f"{cache}{suffix}").exists():
            Path(f"{dest / cache.name}{suffix}").write_bytes(Path(f"{cache}{suffix}").read_bytes())
    with closing(sqlite3.connect(dest / cache.name)) as conn:
        return conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]


#: the outputs of the model-calling jobs of `.test/api`: its 2 personas' confidence tables (each
#: job's input is its judgment table)
PAYING = tuple(f"results/peras/confidence/fx/gpt/wo_cot/{p}.tsv" for p in ("default", "LA"))


@pytest.mark.parametrize("free_kb", [250, 350])
def test_answers_paid_for_on_a_full_disk_are_not_paid_again(small_disk, tmp_path, free_kb):
    wd = make_workdir(small_disk / "run", "api")
    filler = fill(small_disk, free_kb)
    fake = FakeOpenAI()
    env = {**os.environ, "JL_WF_KEY": "sk-full-disk-test", "PYTHONPATH": str(SRC)}
    cache = wd / "cache" / "requests.sqlite"
    with ServerThread(fake.app()) as srv:
        (wd / "server.yaml").write_text(yaml.safe_dump({"models": {"gpt": {"base_url": srv.base_url}}}))
        config = ("--configfile", str(wd / "server.yaml"))
        # the whole run: the disk fills in the judge jobs (250 KB) or the confidence jobs (350 KB)
        first = snakemake(wd, "all", *config, env=env, timeout=600)
        paid_first = fake.arrivals
        # issue 38, case 1: the check tells the truth about the cache the full disk left
        checked = judgelab("cache", "check", "--cache", str(cache), env=env)
        assert checked.returncode in (0, 1), checked.stdout + checked.stderr  # not damaged: it is not
        report = json.loads(checked.stdout)
        assert report["status"] != "damaged" and report["integrity"] == [] and report["damaged_entries"] == 0
        assert report["entries"] == copy_reads(cache, tmp_path / "copy")  # what a job reads
        # every answer paid for is in the cache or waits in a pending file: none is lost
        assert report["entries"] + report["pending_answers"] == len(fake.served)
        filler.unlink()  # space again; then what check says to do
        for cmd in commands(report["advice"]):
            done = subprocess.run(cmd, shell=True, capture_output=True, text=True, env=env, timeout=300)
            assert done.returncode == 0, f"{cmd}: {done.stdout}{done.stderr}"
        if report["status"] != "complete":
            again_checked = judgelab("cache", "check", "--cache", str(cache), env=env)
            assert again_checked.returncode == 0, again_checked.stdout
        # the rerun of the jobs that pay (the tables above them send nothing)
        again = snakemake(wd, *PAYING, *config, env=env, timeout=600)
        assert again.returncode == 0, output(again)[-3000:]
    assert first.returncode != 0, "the disk did not fill: leave less room"
    assert paid_first > 0, "nothing was paid before the disk filled: leave more room"
    assert len(fake.served) == 32  # 8 pairs x 2 personas x (judgment + confidence)
    twice = {prompt[:60]: n for prompt, n in fake.served.items() if n > 1}
    assert twice == {}, f"paid more than once: {twice}"


class Run:
    """Snakemake started in the background, its output read line by line as it comes."""

    def __init__(self, wd: Path, env: dict, *args: str, on_line=None):
        self.proc = subprocess.Popen(
            snakemake_cmd(wd, *args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        self.lines: list[str] = []
        self.timer = threading.Timer(600, self.proc.kill)
        self.timer.start()
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if on_line is not None:
                on_line(line)
        self.returncode = self.proc.wait()
        self.timer.cancel()

    @property
    def text(self) -> str:
        return "".join(self.lines)


@dataclass
class FillingServer(FakeOpenAI):
    """The counting fake server that fills ``disk`` to the last byte when request number
    ``fill_at`` arrives (before answering it): the disk fills while a job has requests in flight."""

    disk: Path | None = None
    fill_at: int = 4
    filler: Path | None = None

    async def chat(self, request):
        if self.arrivals == self.fill_at and self.disk is not None:
            self.filler = self.disk / "filler"
            with open(self.filler, "wb", buffering=0) as fh:  # to the last byte
                for size in (1 << 20, 1 << 16, 4096, 512, 1):
                    with contextlib.suppress(OSError):
                        while True:
                            fh.write(b"\0" * size)
        return await super().chat(request)


def no_place_left(disk: Path, wait: float, srv: ServerThread) -> tuple[Path, dict]:
    """A run folder whose cache, side file and fallback folder (the temporary directory) are all
    on ``disk``; ``wait``: cache_space_wait. Returns it and the environment to run it in."""
    wd = make_workdir(disk / "run", "api")
    (disk / "tmp").mkdir()
    env = {
        **os.environ,
        "JL_WF_KEY": "sk-full-disk-test",
        "TMPDIR": str(disk / "tmp"),
        "PYTHONPATH": str(SRC),
    }
    env.pop("JUDGELAB_CACHE_FALLBACK", None)
    config = {"models": {"gpt": {"base_url": srv.base_url}}, "cache_space_wait": wait}
    (wd / "server.yaml").write_text(yaml.safe_dump(config))
    return wd, env


HELD = "paid answers are held in memory: no place could take them"


def test_with_no_place_left_a_job_waits_for_space_and_pays_nothing_twice(small_disk):
    """Issue 38, case 2: run folder and temporary directory on one full disk (before: 6 of 32 paid
    twice, the error saying the answers "are in this job's output", of a job that failed)."""
    fake = FillingServer(disk=small_disk)
    with ServerThread(fake.app()) as srv:
        wd, env = no_place_left(small_disk, 300, srv)
        held: list[str] = []

        def free_space_when_held(line: str) -> None:
            if HELD in line and not held:
                held.append(line)
                assert fake.filler is not None
                fake.filler.unlink()

        run = Run(wd, env, *TARGETS, "--configfile", str(wd / "server.yaml"), on_line=free_space_when_held)
    assert held, f"no answer was held: the disk did not fill while a job was paid\n{run.text[-3000:]}"
    assert re.search(r"judgelab: \S+requests\.sqlite: \d+ paid answers are held in memory", held[0])
    assert "Waiting up to 300 s (config key cache_space_wait) for free space; they go to" in held[0]
    assert re.search(r"space again: the \d+ held answers are written to", run.text)
    assert run.returncode == 0, run.text[-3000:]
    assert len(fake.served) == 32
    twice = {prompt[:60]: n for prompt, n in fake.served.items() if n > 1}
    assert twice == {}, f"paid more than once: {twice}"
    assert "this job's output" not in run.text


def test_when_space_never_returns_the_error_names_exactly_the_answers_lost(small_disk):
    fake = FillingServer(disk=small_disk)
    with ServerThread(fake.app()) as srv:
        wd, env = no_place_left(small_disk, 2, srv)
        args = (*TARGETS, "--configfile", str(wd / "server.yaml"))
        first = Run(wd, env, *args)
        assert first.returncode != 0, "the disk did not fill: leave less room"
        lost: dict[str, int] = {}  # key -> jobs that named it lost
        counted = 0
        for n, keys, more in re.findall(
            r"judgelab: \S+: (\d+) paid answers are lost: .*?requests ([0-9a-f, ]+?)( and \d+ more)?\. Free",
            first.text,
        ):
            assert not more, "more answers lost than the error names: lower the room left"
            named = keys.split(", ")
            assert len(named) == int(n)
            counted += len(set(named) - set(lost))
            for key in named:
                lost[key] = lost.get(key, 0) + 1
        assert lost, f"no answer was lost: the disk did not fill while a job was paid\n{first.text[-3000:]}"
        assert "this job's output" not in first.text
        assert fake.filler is not None
        fake.filler.unlink()
        again = snakemake(wd, *args, env=env, timeout=600)
        assert again.returncode == 0, output(again)[-3000:]
    with closing(sqlite3.connect(wd / "cache" / "requests.sqlite")) as conn:
        key_of = {
            json.loads(q)["messages"][-1]["content"]: k
            for k, q in conn.execute("SELECT key, request FROM responses")
        }
    twice = {key_of[prompt] for prompt, n in fake.served.items() if n > 1}
    assert len(fake.served) == 32 and all(n <= 2 for n in fake.served.values())
    assert twice == set(lost) and counted == len(twice)  # exactly the answers the errors named
