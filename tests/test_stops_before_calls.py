"""Issue 38, cases 5 and 6, through the real workflow against the counting fake OpenAI server: a bad
line in a file a job will read stops `snakemake -n` naming the file and line, and a real run before
any model call; a job stopped by the provider (an unknown model id: HTTP 404; HTTP 500 after every
retry) prints its one-line summary before any traceback, the key nowhere. Plus the memo that keeps
the input checks cheap at every Snakemake start (judgelab.project.inputs)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import yaml
from fake_openai import FakeOpenAI, ServerThread
from snakerun import ROOT, make_workdir, output, snakemake

from judgelab.errors import InputError
from judgelab.project import inputs
from judgelab.project.inputs import MEMO, InputCheck, check_inputs

KEY = "sk-judgelab-stop-first-38"
TARGET = "results/peras/judgments/fx/gpt/wo_cot/default.tsv"


def api_run(tmp_path: Path, server: str, **over) -> Path:
    """A run folder of `.test/api` (PERAS judged by `gpt` at ``server``) with ``over`` merged in."""
    wd = make_workdir(tmp_path / "run", "api")
    over = {**over, "models": {"gpt": {"base_url": server, **over.get("models", {}).get("gpt", {})}}}
    (wd / "over.yaml").write_text(yaml.safe_dump(over), encoding="utf-8")
    return wd


def smk(wd: Path, *args: str):
    env = {**os.environ, "JL_WF_KEY": KEY}
    return snakemake(wd, *args, "--configfile", str(wd / "over.yaml"), cores=1, env=env, timeout=600)


RANKING_FILES = {
    "ranking": {
        "enabled": True,
        "runs": {"fx": {"source": "files", "paths": ["runs/*.txt"]}},
        "template": "wo_cot",
        "ppi": {"enabled": False},
    }
}


@pytest.mark.slow
def test_a_bad_run_file_line_stops_the_dry_run_and_the_run_before_any_call(tmp_path):
    """Case 5: PERAS and the ranking study judged by `gpt`; run sysB's third line has a rank that
    is not an integer. Before: `snakemake -n` exited 0 and the run paid the PERAS judge's calls
    before the ranking judge job read the run."""
    fake = FakeOpenAI()
    with ServerThread(fake.app()) as srv:
        wd = api_run(tmp_path, srv.base_url, **RANKING_FILES)
        (wd / "runs").mkdir()
        (wd / "runs" / "sysA.txt").write_text("101 Q0 d1 1 3.0 a\n101 Q0 d2 2 2.0 a\n102 Q0 d5 1 1.0 a\n")
        bad = "101 Q0 d2 1 3.0 b\n101 Q0 d3 2 2.0 b\n102 Q0 d6 x 1.0 b\n"
        (wd / "runs" / "sysB.txt").write_text(bad)
        message = "runs/sysB.txt:3: rank 'x' is not an integer"
        dry = smk(wd, "-n")
        assert dry.returncode != 0 and message in output(dry), output(dry)[-3000:]
        res = smk(wd)
        assert res.returncode != 0 and message in output(res), output(res)[-3000:]
        assert fake.arrivals == 0 and not (wd / "results").exists()
        # mended, the dry run passes: a failed check is never remembered
        (wd / "runs" / "sysB.txt").write_text(bad.replace(" x ", " 3 "))
        dry = smk(wd, "-n")
        assert dry.returncode == 0, output(dry)[-3000:]
    assert fake.arrivals == 0


@pytest.mark.slow
@pytest.mark.parametrize("which", ["qrels", "imported judge"])
def test_a_bad_line_of_a_dataset_or_an_imported_judge_file_stops_the_dry_run(tmp_path, which):
    """The dataset's own files (`source: files`) and an imported judge's file are read as their
    jobs read them when the DAG is built."""
    wd = make_workdir(tmp_path / "run", "api")
    (wd / "data").mkdir()
    qrels = (ROOT / "tests" / "fixtures" / "trec" / "qrels.txt").read_text()
    if which == "qrels":
        (wd / "data" / "qrels.txt").write_text(qrels.replace("101 Q0 d3 1", "101 Q0 d3 one"))
        over = {"datasets": {"fx": {"qrels": "data/qrels.txt"}}}
        message = "data/qrels.txt:3: grade 'one' is not an integer"
    else:
        (wd / "data" / "ext.qrels").write_text(qrels.replace("101 Q0 d2 2", "101 Q0 d2 7"))
        over = {"imported_judges": {"ext": {"path": "data/ext.qrels", "datasets": ["fx"], "scale": "graded"}}}
        message = "data/ext.qrels:2: label 7 is outside 0-3"
    (wd / "over.yaml").write_text(yaml.safe_dump(over), encoding="utf-8")
    dry = smk(wd, "-n")
    assert dry.returncode != 0 and message in output(dry), output(dry)[-3000:]


def summary_first(text: str, summary: str) -> int:
    """The line number of the one-line summary; every traceback comes after it."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("judgelab: rule peras_judge stopped: "))
    assert summary in lines[at], lines[at]
    assert not any("Traceback" in line for line in lines[:at]), "\n".join(lines[: at + 1])[-3000:]
    return at


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["404", "500"])
def test_a_provider_error_prints_its_summary_before_any_traceback(tmp_path, fault):
    """Case 6: an unknown model id (the server answers 404) and a 500 after every retry. Before:
    `openai.NotFoundError` / a RuntimeError at the end of a traceback, no summary line."""
    if fault == "404":
        fake = FakeOpenAI(models=frozenset({"gpt-4o-mini"}))
        gpt = {"model": "gpt-4o-mimi"}
    else:
        fake = FakeOpenAI(fault="500")
        gpt = {"max_retries": 1}
    with ServerThread(fake.app()) as srv:
        wd = api_run(tmp_path, srv.base_url, models={"gpt": gpt})
        res = smk(wd, TARGET)
    text = output(res)
    assert res.returncode != 0
    if fault == "404":
        summary = (
            f"config key 'models.gpt.model': openai gpt-4o-mimi at {srv.base_url} answered HTTP 404 "
            "(The model `gpt-4o-mimi` does not exist or you do not have access to it.)"
        )
        assert fake.arrivals <= 2  # the 2 requests in flight (concurrency 2), none after
    else:
        summary = (
            f"openai gpt-4o-mini at {srv.base_url}: giving up after 2 attempts (max_retries=1): "
            "HTTP 500: boom; the provider is failing or overloaded: rerun later"
        )
        assert fake.arrivals <= 4
    summary_first(res.stderr, summary)
    log = wd / "results" / "logs" / "peras" / "judge" / "fx" / "gpt" / "wo_cot" / "default.log"
    assert "Traceback" in log.read_text()
    assert KEY not in text and KEY not in log.read_text()


# -- the memo of the input checks ---------------------------------------------------------------


def test_an_input_check_runs_once_while_its_files_are_unchanged(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "_MEMOS", {})
    run = tmp_path / "runs" / "a.txt"
    run.parent.mkdir()
    run.write_text("1 Q0 d1 1 1.0 a\n")
    reads: list[str] = []

    def reader() -> None:
        reads.append(run.read_text())
        if " x " in reads[-1]:
            raise InputError("rank 'x' is not an integer", path=str(run), line=1)

    check = InputCheck("run a", (run,), reader, ("runs/a.txt",))
    check_inputs([check], tmp_path)
    check_inputs([check], tmp_path)
    assert len(reads) == 1
    monkeypatch.setattr(inputs, "_MEMOS", {})  # another process: the memo on disk answers
    check_inputs([check], tmp_path)
    assert len(reads) == 1 and (tmp_path / MEMO).is_file()
    # a changed file is read again; its error names the file as the user wrote it, and a
    # failure is not remembered
    time.sleep(0.01)
    run.write_text("1 Q0 d1 x 1.0 a\n")
    for _ in range(2):
        with pytest.raises(InputError, match=r"^runs/a\.txt:1: rank 'x' is not an integer$"):
            check_inputs([check], tmp_path)
    assert len(reads) == 3
    # the entry of the file as it was is dropped when the memo is written again
    run.write_text("1 Q0 d1 2 1.0 a\n")
    check_inputs([check], tmp_path)
    assert len(reads) == 4
    assert len((tmp_path / MEMO).read_text().split('"run a"')) == 2  # one entry
