"""A full disk loses no paid answer (issue 26, case 2), for real: the run folder and its cache on
a small tmpfs that a filler leaves a few hundred KB free, a judge on a counting OpenAI-compatible
server. The first run stops when the disk fills (its jobs cannot write their answers, their side
file or their tables); the answers they were paid for go to the fallback file on another disk
(this session's JUDGELAB_CACHE_FALLBACK); with space again, the rerun imports them and sends only
the requests never answered: every prompt is paid once. Needs a tmpfs mount (root); skipped
where the machine does not allow one. The unit tests of the same paths inject SQLITE_FULL
(tests/test_cache_faults.py)."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml
from fake_openai import FakeOpenAI, ServerThread
from snakerun import make_workdir, output, snakemake

pytestmark = pytest.mark.slow


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


#: the outputs of the model-calling jobs of `.test/api`: its 2 personas' confidence tables (each
#: job's input is its judgment table)
PAYING = tuple(f"results/confidence/fx/gpt/wo_cot/{p}.tsv" for p in ("default", "LA"))


@pytest.mark.parametrize("free_kb", [250, 350])
def test_answers_paid_for_on_a_full_disk_are_not_paid_again(small_disk, free_kb):
    wd = make_workdir(small_disk / "run", "api")
    filler = fill(small_disk, free_kb)
    fake = FakeOpenAI()
    env = {**os.environ, "JL_WF_KEY": "sk-full-disk-test"}
    with ServerThread(fake.app()) as srv:
        (wd / "server.yaml").write_text(yaml.safe_dump({"models": {"gpt": {"base_url": srv.base_url}}}))
        config = ("--configfile", str(wd / "server.yaml"))
        # the whole run: the disk fills in the judge jobs (250 KB) or the confidence jobs (350 KB)
        first = snakemake(wd, "all", *config, env=env, timeout=600)
        paid_first = fake.arrivals
        filler.unlink()  # space again
        # the rerun of the jobs that pay (the tables above them send nothing)
        again = snakemake(wd, *PAYING, *config, env=env, timeout=600)
        assert again.returncode == 0, output(again)[-3000:]
    assert first.returncode != 0, "the disk did not fill: leave less room"
    assert paid_first > 0, "nothing was paid before the disk filled: leave more room"
    assert len(fake.served) == 32  # 8 pairs x 2 personas x (judgment + confidence)
    twice = {prompt[:60]: n for prompt, n in fake.served.items() if n > 1}
    assert twice == {}, f"paid more than once: {twice}"
