"""Who answered, and answers cut by the bound (issue 25, items 2 and 4), through the real openai
backend against a fake OpenAI-compatible server that names another served model, sends a system
fingerprint and cuts some answers (``finish_reason: length``): the judgment rows record the
finish reason, the served model and the fingerprint and say which answers were truncated; the
job's log names the served model once, as a warning when it is not the configured one; the
coverage error leads with "truncated" when the bound cut the missing answers; an old cache entry
(no finish reason) still opens and answers as before. And the run's manifest."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
import pytest
from fake_openai import FakeOpenAI, ServerThread, expected_label

from judgelab.llm.backends.base import Completion, Request
from judgelab.llm.judge import Coverage, Judge
from judgelab.llm.judging import CoverageError, judge_table, require_coverage
from judgelab.llm.prompts import load_template
from judgelab.llm.session import JobContext
from judgelab.project.manifest import ManifestSettings, config_digest, manifest_job, manifest_models

COV = Coverage(0.0, "wo_cot (peras/wo_cot)", "peras.templates.wo_cot.max_tokens", "peras.answer")


def pairs(n: int = 12) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "dataset": "fx",
            "qid": "101",
            "query": "do goldfish grow",
            "docid": [f"d{i}" for i in range(n)],
            "passage": [f"Goldfish passage number {i}." for i in range(n)],
            "grade": pd.array([i % 4 for i in range(n)], dtype="Int64"),
        }
    )


def judge_of(base_url: str, coverage: Coverage | None = COV) -> Judge:
    spec = {
        "backend": "openai",
        "model": "gpt-4o",
        "base_url": base_url,
        "api_key_env": None,
        "concurrency": 4,
        "timeout": 5,
        "max_retries": 0,
    }
    return Judge("gpt4o", spec, template=load_template("peras/wo_cot"), max_tokens=8, coverage=coverage)


def run(server: FakeOpenAI, tmp_path: Path, table: pd.DataFrame, coverage: Coverage | None = COV):
    with ServerThread(server.app()) as srv:
        return judge_table(
            table, judge_of(srv.base_url, coverage), JobContext(str(tmp_path / "c.sqlite"), desc="judge fx")
        )


def test_rows_record_who_answered_and_what_was_cut(tmp_path, caplog):
    server = FakeOpenAI(
        served_model="gpt-4o-2024-08-06", fingerprint="fp_abc123", truncate_labels=frozenset({3})
    )
    table = pairs()
    with caplog.at_level(logging.INFO):
        out = run(server, tmp_path, table)
    prompts = list(server.served)
    cut = out["finish_reason"] == "length"
    assert cut.sum() == sum(expected_label(p) == 3 for p in prompts) > 0
    assert (out["truncated"] == cut).all() and not out.loc[cut, "parsed"].any()
    assert out.loc[~cut, "parsed"].all() and (out.loc[~cut, "finish_reason"] == "stop").all()
    assert (out["served_model"] == "gpt-4o-2024-08-06").all() and (
        out["system_fingerprint"] == "fp_abc123"
    ).all()
    assert (out.loc[~cut, "parse_rule"] == "label-only").all() and out.loc[cut, "parse_rule"].isna().all()
    # the decoding parameters each request was sent with: the bound and the sampling of the cache key
    assert set(out["decoding"]) == {"max_tokens=8 temperature=0.0 top_logprobs=20 top_p=1.0"}
    # a dated name behind the alias is recorded, not warned about; the coverage line splits the missing
    text = caplog.text
    assert "judge fx: answered by gpt-4o-2024-08-06" in text and "not the configured" not in text
    assert f"{int(cut.sum())} truncated" in text and "0 unparsable" in text


def test_another_served_model_is_a_warning_once_per_job(tmp_path, caplog):
    with caplog.at_level(logging.INFO):
        out = run(FakeOpenAI(served_model="gpt-4o-mini-2024-07-18"), tmp_path, pairs(6))
    assert (out["served_model"] == "gpt-4o-mini-2024-07-18").all() and out["system_fingerprint"].isna().all()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "answered by" in r.getMessage()]
    assert len(warnings) == 1
    assert (
        "gpt-4o-mini-2024-07-18, not the configured models.gpt4o.model 'gpt-4o'" in warnings[0].getMessage()
    )


def test_the_coverage_error_leads_with_truncated_when_the_bound_cut_the_answers(tmp_path):
    server = FakeOpenAI(truncate_labels=frozenset({0, 1, 2, 3}))
    with pytest.raises(CoverageError) as err:
        run(server, tmp_path, pairs(4))
    msg = str(err.value)
    assert (
        "(0 unparsable, 4 truncated; coverage 0.0%, min_coverage 0); truncated: 4 of the 4 missing answers were cut by the bound of 8 tokens, raise peras.templates.wo_cot.max_tokens; nothing is measured"
        in msg
    )
    assert msg.startswith("config key 'min_coverage': judge fx: 0 of 4 answers")
    # missing answers that were not cut: no "truncated" lead
    with pytest.raises(CoverageError) as other:
        require_coverage(
            [False, False, False, True],
            ["x", "y", "z", "1"],
            coverage=Coverage(0.9, COV.template, COV.bound_key),
            model="m",
            backend="openai",
            bound=8,
            what="job",
            truncated=[True, False, False, False],
        )
    assert "truncated:" not in str(other.value) and "(2 unparsable, 1 truncated;" in str(other.value)


def test_a_cache_entry_without_a_finish_reason_reads_as_before():
    old = Completion.from_json(
        {"text": "2", "prompt_tokens": 10, "completion_tokens": 1, "latency_s": 0.1, "extra": {}}
    )
    assert old.finish_reason is None and old.served_model is None and old.system_fingerprint is None
    assert not old.truncated(8) and old.truncated(1)  # no reason recorded: the whole bound used
    assert Completion("x", completion_tokens=3, extra={"finish_reason": "max_tokens"}).truncated(99)
    assert not Completion("x", completion_tokens=8, extra={"finish_reason": "end_turn"}).truncated(8)


def test_the_manifest_names_package_dependencies_model_files_and_the_config(tmp_path, monkeypatch):
    monkeypatch.setenv("JL_SECRET_KEY", "sk-very-secret")
    models = {
        "smollm2": {"backend": "local", "model_path": None, "threads": 1},
        "gpt4o": {"backend": "openai", "model": "gpt-4o-2024-08-06", "api_key_env": "JL_SECRET_KEY"},
    }
    config = {"models": models, "judges": ["smollm2"]}
    settings = ManifestSettings(
        config_digest=config_digest(config),
        models=manifest_models(models),
        studies=("peras",),
        version="0.1.0",
        commit="abc",
        dirty=False,
    )
    assert ManifestSettings.from_param(settings.param()) == settings
    out = tmp_path / "manifest.json"
    manifest_job(settings, str(out), JobContext(str(tmp_path / "cache" / "requests.sqlite")))
    got = json.loads(out.read_text())
    assert got["judgelab"] == {"version": "0.1.0", "commit": "abc", "uncommitted_changes": False}
    assert got["models"] == {
        "smollm2": {"backend": "local"},
        "gpt4o": {"backend": "openai", "model": "gpt-4o-2024-08-06"},
    }
    file = got["model_files"]["smollm2"]
    assert file["path"].endswith(".gguf") and len(file["sha256"]) == 64 and file["bytes"] > 10**7
    assert (
        got["dependencies"]["snakemake"]
        and got["dependencies"]["pandas"]
        and "llama-cpp-python" in got["dependencies"]
    )
    assert got["config_sha256"] == config_digest(config) != config_digest({**config, "judges": []})
    assert "sk-very-secret" not in out.read_text() and "JL_SECRET_KEY" not in out.read_text()


def test_same_model_allows_a_date_stamp_only():
    from judgelab.llm.judging import same_model

    for configured, served in [
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o", "gpt-4o-2024-08-06"),
        ("claude-3-5-sonnet", "claude-3-5-sonnet-20241022"),
        ("gpt-4", "gpt-4-0613"),
        ("deepseek-chat", "deepseek-chat"),
    ]:
        assert same_model(configured, served), (configured, served)
    for configured, served in [
        ("gpt-4o", "gpt-4o-mini-2024-07-18"),
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet-20241022"),
        ("deepseek-chat", "deepseek-v3"),
        ("gpt-4o", "gpt-4"),
    ]:
        assert not same_model(configured, served), (configured, served)


def test_provenance_rows_hand_cases():
    from judgelab.project.provenance import (
        NOT_RECORDED,
        ProvenanceJob,
        ProvenanceSettings,
        job_row,
    )

    api = ProvenanceJob("judge", "dataset=fx,model=gpt", "gpt", "openai", "gpt-4o")
    table = pd.DataFrame(
        {
            "answer": ["2", "1", "Final", None],
            "served_model": ["gpt-4o-2024-08-06", "gpt-4o-2024-08-06", "gpt-4o-mini", None],
            "system_fingerprint": ["fp_a", "fp_b", None, None],
            "finish_reason": ["stop", "stop", "length", None],
            "truncated": ["False", "False", "True", ""],
            "parse_rule": ["label-only", "label-only", None, None],
            "decoding": ["max_tokens=8"] * 3 + [None],
        }
    )
    row = job_row("peras", api, table, "f.tsv")
    # the row without an answer is not counted; gpt-4o-mini is another model than gpt-4o
    assert row["answers"] == 3 and row["truncated"] == 1
    assert row["served_models"] == "gpt-4o-2024-08-06; gpt-4o-mini" and row["same_model"] is False
    assert row["system_fingerprints"] == "fp_a; fp_b"
    assert row["finish_reasons"] == "length 1; stop 2" and row["parse_rules"] == "label-only 2"
    assert row["decoding"] == "max_tokens=8"
    dated = job_row("peras", api, table.iloc[:2], "f.tsv")
    assert dated["same_model"] is True
    # the embedded model's file name is recorded, not compared; a table without the fields
    local = ProvenanceJob("judge", "dataset=fx,model=smollm2", "smollm2", "local", None)
    old = job_row("peras", local, pd.DataFrame({"answer": ["2"]}), "f.tsv")
    assert old["same_model"] is None and old["served_models"] == NOT_RECORDED and old["truncated"] is None
    # the param round trip (the jobs come back as jobs)
    settings = ProvenanceSettings("peras", (api, local))
    assert ProvenanceSettings.from_param(settings.param()) == settings


def test_decoding_cells_and_one_token_bounds():
    from judgelab.llm.backends.openai_compat import OpenAIBackend
    from judgelab.llm.client import decoding
    from judgelab.llm.judging import cut_by_bound

    backend = OpenAIBackend.from_spec(
        {
            "backend": "openai",
            "model": "m",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key_env": None,
            "extra_body": {"chat_template_kwargs": {"enable_thinking": False}},
        },
        "m",
        need_key=False,
    )
    req = Request.from_messages([{"role": "user", "content": "x"}], 16)
    assert decoding(backend, req) == (
        'extra_body={"chat_template_kwargs":{"enable_thinking":false}} max_tokens=16 '
        "temperature=0.0 top_logprobs=20 top_p=1.0"
    )
    cut = Completion("2", completion_tokens=1, extra={"finish_reason": "length"})
    # a one-token bound asks for the label token alone: its answer is not cut
    assert not cut_by_bound(cut, 1) and cut_by_bound(cut, 16) and not cut_by_bound(cut, None)
