"""The one adapter from a Snakemake job to a job function (judgelab.project.runner.run): each
parameter by its name from the rule's named input, output, params and wildcards, settings values
decoded from their param text, the job's context, every output or wildcard as a mapping, an
empty optional input as None, one file given to a list parameter as a list, and a missing
parameter named in one error; a group of files (judgelab.params.Files) field by field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from judgelab.cache.store import CacheConfig
from judgelab.llm.judge import Coverage, Judge
from judgelab.llm.session import JobContext
from judgelab.params import Files
from judgelab.project.runner import arguments, run


class Named(list):
    """A Snakemake Namedlist (a list with named entries)."""

    def __init__(self, **named):
        super().__init__(v for v in named.values())
        self._named = named

    def items(self):
        return self._named.items()


class FakeJob:
    """The ``snakemake`` object a script gets, as far as the adapter reads it."""

    def __init__(self, tmp_path, *, input=None, output=None, params=None, wildcards=None, threads=2):
        self.input = Named(**(input or {}))
        self.output = Named(**(output or {}))
        self.params = Named(**(params or {}))
        self.wildcards = Named(**(wildcards or {}))
        self.threads = threads
        self.rule = "judge"
        self.config = {"cache": str(tmp_path / "c.sqlite"), "cache_mode": "wal", "cache_lease": 30}
        self.log = [str(tmp_path / "logs" / "job.log")]


def job(
    pairs: str,
    judgments: str,
    judge: Judge,
    context: JobContext,
    files: Sequence[str],
    extra: Mapping[str, int],
    outputs: Mapping[str, str],
    wildcards: Mapping[str, str],
    dataset: str,
    persona_file: str | None = None,
):
    return locals()


def test_each_parameter_comes_from_the_rule_by_its_name(tmp_path):
    judge = Judge("m", {"backend": "local"}, template="{query}", coverage=Coverage(0.25, "t", "k"))
    smk = FakeJob(
        tmp_path,
        input={"pairs": "p.tsv", "files": "one.tsv", "persona_file": []},
        output={"judgments": "j.tsv", "other": "o.tsv"},
        params={"judge": judge.param(), "extra": '{"a": 1}'},
        wildcards={"dataset": "dl21", "model": "m"},
    )
    got = arguments(job, smk)
    assert got["pairs"] == "p.tsv" and got["judgments"] == "j.tsv"
    assert got["judge"] == judge and got["judge"].coverage == Coverage(0.25, "t", "k")
    assert got["files"] == ["one.tsv"]  # one file, a list parameter
    assert got["extra"] == {"a": 1}  # JSON text for a mapping
    assert got["persona_file"] is None  # an optional input left empty
    assert got["outputs"] == {"judgments": "j.tsv", "other": "o.tsv"}
    assert got["wildcards"] == {"dataset": "dl21", "model": "m"} and got["dataset"] == "dl21"
    context = got["context"]
    assert context.threads == 2 and context.desc == "judge dl21/m"
    assert context.cache == CacheConfig(str(tmp_path / "c.sqlite"), "wal", 30)


@dataclass(frozen=True)
class Inputs(Files):
    pairs: str
    runs: Sequence[str]
    persona_file: str | None = None
    extra: str = "none"


def grouped(inputs: Inputs, out: str) -> None:
    return None


def test_a_group_of_files_is_filled_field_by_field(tmp_path):
    """A parameter annotated with a Files dataclass gets each field as a parameter of its name
    would: one file to a sequence field as a list, an empty optional input as None, a field the
    rule does not give keeps its default, a required one missing is named in the error."""
    smk = FakeJob(
        tmp_path, input={"pairs": "p.tsv", "runs": "r.txt", "persona_file": []}, output={"out": "o"}
    )
    got = arguments(grouped, smk)
    assert got == {"inputs": Inputs("p.tsv", ["r.txt"], None, "none"), "out": "o"}
    smk = FakeJob(tmp_path, input={"runs": ["a", "b"]}, output={"out": "o"})
    with pytest.raises(TypeError, match=r"rule judge: .*grouped needs 'pairs'"):
        arguments(grouped, smk)


def test_a_parameter_the_rule_does_not_give_is_named(tmp_path):
    smk = FakeJob(tmp_path, input={"pairs": "p.tsv"})
    with pytest.raises(TypeError, match=r"rule judge: .*job needs 'judgments'"):
        arguments(job, smk)


def test_run_logs_into_the_rules_log_file(tmp_path):
    def hello(name: str) -> str:
        import logging

        logging.getLogger("judgelab").info("hello %s", name)
        return name

    smk = FakeJob(tmp_path, params={"name": "world"})
    assert run(smk, hello) == "world"
    assert "hello world" in (tmp_path / "logs" / "job.log").read_text()


def test_a_job_stopped_by_bad_input_prints_one_message_and_logs_its_traceback(tmp_path, capsys):
    from judgelab.errors import InputError

    def refuse() -> None:
        raise InputError("0 of 3 answers parsed; try a larger bound", key="min_coverage")

    smk = FakeJob(tmp_path)
    with pytest.raises(SystemExit) as stop:
        run(smk, refuse)
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("judgelab: rule judge stopped: config key 'min_coverage': 0 of 3 answers parsed")
    assert "Traceback" not in err and f"traceback in {smk.log[0]}" in err
    log = (tmp_path / "logs" / "job.log").read_text()
    assert "Traceback" in log and "0 of 3 answers parsed" in log


@pytest.mark.parametrize("kind", ["provider", "download"])
def test_provider_and_download_errors_print_one_line_first_too(tmp_path, capsys, kind):
    """Issue 38, case 6: a provider's refusal or no answer after every retry, and a failed
    download, stop the job as bad input does: one line saying what, where and what to do, the
    traceback in the log only."""
    from pathlib import Path

    from judgelab.data.sources import DownloadError
    from judgelab.errors import ProviderError

    said = {
        "provider": "openai m at http://127.0.0.1:1/v1: giving up after 7 attempts (max_retries=6): HTTP 500",
        "download": "download of http://127.0.0.1:1/q failed (HTTP Error 404: Not Found)",
    }[kind]

    def fail() -> None:
        if kind == "provider":
            raise ProviderError(said, status=500)
        raise DownloadError(said, url="http://127.0.0.1:1/q", dest=Path("q"), received=0, expected=None)

    smk = FakeJob(tmp_path)
    with pytest.raises(SystemExit) as stop:
        run(smk, fail)
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [f"judgelab: rule judge stopped: {said} (traceback in {smk.log[0]})"]
    assert "Traceback" in (tmp_path / "logs" / "job.log").read_text()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_log_on_a_full_disk_never_hides_the_jobs_own_error(capsys):
    """The log's file cannot be written (every write: ENOSPC): the job's error still comes out
    (here: the one-line InputError a cache on the full disk raises), and the log's loss is said."""
    from judgelab.errors import InputError
    from judgelab.project.runner import script_logging

    with pytest.raises(InputError, match="answers lost"), script_logging("/dev/full"):
        raise InputError("3 answers lost")
    assert "judgelab: the job's log /dev/full is incomplete" in capsys.readouterr().err
