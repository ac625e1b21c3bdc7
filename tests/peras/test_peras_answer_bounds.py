"""Answer bounds (the PERAS paper kept the providers' defaults): the judge and confidence jobs count the
answers that used the whole `max_tokens` bound, through the real OpenAI request building and
response parsing against the fake server (which reports 1 completion token per answer)."""

from __future__ import annotations

from fake_openai import FakeOpenAI, ServerThread
from test_api_backends import openai_spec, sample_pairs

from judgelab.data.tables import read_judgments, write_dataset
from judgelab.llm.judge import Judge
from judgelab.llm.judging import log_cut_answers
from judgelab.llm.prompts import load_template
from judgelab.llm.session import JobContext
from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import confidence_job, judge_job


def test_log_cut_answers_counts_answers_at_the_bound(caplog):
    with caplog.at_level("INFO", logger="judgelab"):
        assert log_cut_answers("j", [3, 8, None, 9], 8) == 2
        assert "2 of 4 answers reached the bound of 8 tokens" in caplog.text
        assert log_cut_answers("j", [3, None], 8) == 0
        assert "no answer reached the bound of 8 tokens" in caplog.text


def run(tmp_path, base_url: str, max_tokens: int) -> str:
    table = tmp_path / "pairs.tsv"
    write_dataset(sample_pairs().head(5), table)
    judge = Judge("fake", openai_spec(base_url), max_tokens=max_tokens)
    context = JobContext(str(tmp_path / "cache" / "requests.sqlite"))
    log = tmp_path / "jobs.log"
    with script_logging(str(log)):
        judge_job(
            str(table),
            str(tmp_path / "j.tsv"),
            judge.but(template=load_template("peras/wo_cot")),
            context.named("judge"),
        )
        confidence_job(
            str(table),
            str(tmp_path / "j.tsv"),
            str(tmp_path / "c.tsv"),
            judge.but(template=load_template("peras/confidence"), labels=()),
            context.named("confidence"),
        )
    assert read_judgments(tmp_path / "j.tsv")["parsed"].all()  # a cut one-digit answer still parses
    return log.read_text()


def test_judge_and_confidence_jobs_log_the_answers_the_bound_cut(tmp_path):
    with ServerThread(FakeOpenAI().app()) as srv:
        bound = run(tmp_path / "a", srv.base_url, 1)
        roomy = run(tmp_path / "b", srv.base_url, 1024)
    assert "judge: 5 of 5 answers reached the bound of 1 tokens" in bound
    assert "confidence: 5 of 5 answers reached the bound of 1 tokens" in bound
    assert "judge: no answer reached the bound of 1024 tokens" in roomy
    assert "answers reached the bound" not in roomy
