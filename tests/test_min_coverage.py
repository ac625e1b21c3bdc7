"""A judge whose answers never parse stops its job (issue 18): every judge job of every study ends
with :func:`judgelab.llm.judging.require_coverage`, which fails naming the model, the template and the
share of parsed answers, and says what to try.

The judge is an OpenAI-compatible server that behaves like Qwen3 served by vLLM: unless the
request carries ``chat_template_kwargs: {enable_thinking: false}``, it starts with a think block
and the answer bound cuts it there (nothing parses); with the switch it answers the label. The
requests are built and the responses parsed by the real openai backend.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest
from fake_openai import ServerThread
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse
from starlette.routing import Route

from judgelab.data.tables import write_dataset, write_tsv
from judgelab.llm.judge import Judge
from judgelab.llm.judging import Coverage, CoverageError, require_coverage
from judgelab.llm.prompts import load_template
from judgelab.llm.session import JobContext
from judgelab.studies.overrating import jobs as oj
from judgelab.studies.overrating.settings import Sampling
from judgelab.studies.peras.jobs import judge_job
from judgelab.studies.perturbations.jobs import rejudge_job
from judgelab.studies.perturbations.sampling import SAMPLE_COLUMNS
from judgelab.studies.perturbations.settings import OriginalJudge, Selection
from judgelab.studies.simulation import jobs as sj
from judgelab.studies.simulation.prompt import SimulationPrompt

ROOT = Path(__file__).resolve().parents[1]
THINK = "<think>\nOkay, let me see. The user asks"


class QwenLike:
    """Thinks first (the answer is cut inside the think block) unless told not to."""

    def __init__(self, answer: str = "2"):
        self.answer, self.calls, self.switched = answer, 0, 0

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])

    async def chat(self, request: HttpRequest) -> JSONResponse:
        self.calls += 1
        body = await request.json()
        thinking = (body.get("chat_template_kwargs") or {}).get("enable_thinking", True)
        self.switched += not thinking
        text = THINK if thinking else self.answer
        return JSONResponse(
            {
                "id": "x",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "length" if thinking else "stop",
                        "message": {"role": "assistant", "content": text},
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 8, "total_tokens": 18},
            }
        )


def model(base_url: str, switch: bool = False) -> str:
    entry = {
        "backend": "openai",
        "model": "Qwen/Qwen3-8B",
        "base_url": base_url,
        "api_key_env": None,
        "concurrency": 2,
        "timeout": 5,
        "max_retries": 0,
    }
    if switch:
        entry["extra_body"] = {"chat_template_kwargs": {"enable_thinking": False}}
    return json.dumps(entry)


def pairs_file(tmp_path: Path, n: int = 3) -> Path:
    table = pd.DataFrame(
        {
            "dataset": "fx",
            "qid": "101",
            "query": "do goldfish grow",
            "docid": [f"d{i}" for i in range(n)],
            "passage": [f"Goldfish passage {i}." for i in range(n)],
            "grade": pd.array([i % 4 for i in range(n)], dtype="Int64"),
        }
    )
    path = tmp_path / "pairs.tsv"
    write_dataset(table, path)
    return path


COV = Coverage(0.25, "w_cot (peras/w_cot)", "peras.templates.w_cot.max_tokens", "peras.answer")


# -- the check itself: hand cases ---------------------------------------------------------------


def test_require_coverage_by_hand():
    kw = dict(model="m", backend="openai", bound=8, what="job")
    assert require_coverage([True, False, False, False], ["1", "a", "b", "c"], coverage=COV, **kw) == 0.25
    assert require_coverage([], [], coverage=COV, **kw) is None  # nothing to judge: never fails
    with pytest.raises(
        CoverageError,
        match=r"1 of 4 answers .* \(3 unparsable, 0 truncated; coverage 25.0%, min_coverage 0.3\)",
    ):
        require_coverage(
            [True, False, False, False],
            list("abcd"),
            coverage=Coverage(0.3, COV.template, COV.bound_key),
            **kw,
        )
    zero = Coverage(0.0, COV.template, COV.bound_key)
    assert require_coverage([True, False], ["1", "x"], coverage=zero, **kw) == 0.5
    with pytest.raises(CoverageError, match="0 of 2 answers"):  # none parses: fails even at 0
        require_coverage([False, False], ["x", "y"], coverage=zero, **kw)
    assert Coverage.from_param(COV.param()) == COV


def test_the_message_names_model_template_share_and_what_to_try_by_backend():
    kw = dict(coverage=COV, bound=8, what="judge fx/m/w_cot/default")
    with pytest.raises(CoverageError) as api:
        require_coverage([False] * 3, [THINK] * 3, model="qwen3-8b", backend="openai", **kw)
    msg = str(api.value)
    assert msg.startswith("config key 'min_coverage': judge fx/m/w_cot/default: 0 of 3 answers")
    for part in (
        "model 'qwen3-8b'",
        "template w_cot (peras/w_cot)",
        "coverage 0.0%",
        "peras.templates.w_cot.max_tokens, now 8",
        "models.qwen3-8b.extra_body: {chat_template_kwargs: {enable_thinking: false}}",
        "e.g.: '<think> Okay, let me see. The user asks'. Try",
        "request cache",
    ):
        assert part in msg, part
    with pytest.raises(CoverageError) as local:
        require_coverage([False] * 3, ["The passage is"] * 3, model="smollm2", backend="local", **kw)
    assert "peras.answer: logits" in str(local.value) and "enable_thinking" not in str(local.value)


# -- the judge jobs of every study ------------------------------------------------------------------


def test_peras_judge_job_of_a_thinking_model_stops_and_the_switch_fixes_it(tmp_path):
    pairs = pairs_file(tmp_path)
    server = QwenLike()
    out = tmp_path / "j.tsv"
    judge = Judge("qwen3-8b", template=load_template("peras/w_cot"), max_tokens=8, coverage=COV)
    context = JobContext(str(tmp_path / "c.sqlite"), desc="judge fx/qwen3-8b/w_cot/default")
    with ServerThread(server.app()) as srv:
        with pytest.raises(CoverageError, match=r"0 of 3 answers of model 'qwen3-8b' with template w_cot"):
            judge_job(str(pairs), str(out), judge.but(spec=json.loads(model(srv.base_url))), context)
        assert not out.exists() and server.calls == 3
        result = judge_job(
            str(pairs), str(out), judge.but(spec=json.loads(model(srv.base_url, switch=True))), context
        )
    assert server.switched == 3 and result["parsed"].all() and (result["label"] == 2).all()
    assert out.exists()


def test_overrating_pointwise_and_pairwise_jobs_stop_too(tmp_path):
    pairs = pairs_file(tmp_path, 4)
    cov = Coverage(
        0.25, "overrating/graded (overrating.pointwise.templates.graded)", "overrating.pointwise.max_tokens"
    )
    graded = load_template("overrating/graded")
    context = JobContext(str(tmp_path / "c.sqlite"))
    with ServerThread(QwenLike().app()) as srv:
        judge = Judge(
            "qwen3-8b",
            json.loads(model(srv.base_url)),
            template=graded,
            labels=("0", "1", "2", "3"),
            max_tokens=16,
            coverage=cov,
        )
        with pytest.raises(CoverageError, match=r"overrating pointwise: 0 of 4 answers.*overrating/graded"):
            oj.pointwise_judge_job(
                str(pairs), str(tmp_path / "p.tsv"), judge, context.named("overrating pointwise"), "graded"
            )
        sampled = tmp_path / "sampled.tsv"
        oj.pair_sampling_job(str(pairs), str(sampled), Sampling(per_setting=1, seed=0, relevant_min=2))
        with pytest.raises(CoverageError, match=r"overrating pairwise: 0 of \d+ answers"):
            oj.pairwise_judge_job(
                str(pairs),
                str(sampled),
                str(tmp_path / "pw.tsv"),
                judge.but(
                    template=load_template("overrating/pairwise"),
                    labels=("1", "2"),
                    coverage=Coverage(0.25, "overrating/pairwise", "overrating.pairwise.max_tokens"),
                ),
                context.named("overrating pairwise"),
            )


def test_perturbation_rejudge_job_stops_too_and_an_empty_variant_never_fails(tmp_path):
    sample = pd.DataFrame(
        {
            "dataset": "fx",
            "judge": "qwen3-8b",
            "qid": "101",
            "query": "do goldfish grow",
            "docid": ["d0", "d1"],
            "passage": ["a", "b"],
            "grade": pd.array([0, 0], dtype="Int64"),
            "label": pd.array([0, 0], dtype="Int64"),
        }
    )[SAMPLE_COLUMNS]
    write_tsv(sample, tmp_path / "sample.tsv")
    inserted = pd.DataFrame(
        {
            "dataset": "fx",
            "qid": "101",
            "query": "do goldfish grow",
            "docid": ["d0", "d1"],
            "grade": 0,
            "variant": "QRY",
            "sentence": "do goldfish grow",
            "original": ["a", "b"],
            "text": ["do goldfish grow a", "do goldfish grow b"],
            "ok": [True, True],
            "reason": "",
        }
    )
    write_tsv(inserted, tmp_path / "qry.tsv")
    write_tsv(inserted.assign(ok=False, text=""), tmp_path / "none.tsv")
    context = JobContext(str(tmp_path / "c.sqlite"))
    selection = Selection("qry")
    with ServerThread(QwenLike().app()) as srv:
        judge = OriginalJudge(
            "qwen3-8b",
            spec=json.loads(model(srv.base_url)),
            template=load_template("overrating/graded"),
            labels=("0", "1", "2", "3"),
            max_tokens=16,
            coverage=Coverage(0.25, "overrating/graded", "overrating.pointwise.max_tokens"),
            original="overrating",
        )
        with pytest.raises(CoverageError, match=r"rejudge QRY qwen3-8b: 0 of 2 answers of model 'qwen3-8b'"):
            rejudge_job(
                str(tmp_path / "sample.tsv"),
                str(tmp_path / "qry.tsv"),
                str(tmp_path / "r.tsv"),
                OriginalJudge.from_param(judge.param()),  # as the rule's param arrives
                selection,
                context,
            )
        empty = rejudge_job(
            str(tmp_path / "sample.tsv"),
            str(tmp_path / "none.tsv"),
            str(tmp_path / "e.tsv"),
            judge,
            selection,
            context,
        )
    assert empty.empty and (tmp_path / "e.tsv").exists()  # no valid insertion: nothing to judge


def test_simulation_predict_job_stops_too(tmp_path):
    from simulation.test_simulation_jobs import make_records

    from judgelab.studies.simulation.settings import CascadeJudge, CascadeSettings
    from judgelab.studies.simulation.settings import Selection as EvaluatorSelection

    out = tmp_path / "prep"
    sj.prepare_job(
        str(make_records(tmp_path)),
        out / "records.jsonl",
        out / "splits.tsv",
        out / "evaluators.tsv",
        EvaluatorSelection("jsonl", pool=6, validation=4, seed=3, min_neutral=2),
    )
    prompt = SimulationPrompt.load("simulation/personajudge", ROOT / "resources")
    judge = CascadeJudge(
        "qwen3-8b",
        prompt=prompt.texts_for("helpfulness", "J"),
        cascade=CascadeSettings(task="helpfulness", answer="parse", max_tokens=16, seed=0, min_neutral=2),
        coverage=Coverage(0.25, "simulation/personajudge", "simulation.max_tokens", "simulation.answer"),
    )
    context = JobContext(str(tmp_path / "c.sqlite"), desc="simulate J 1-shot")
    files = [str(out / "records.jsonl"), str(out / "splits.tsv"), str(tmp_path / "pred.tsv")]
    files.append(str(tmp_path / "demos.tsv"))
    with ServerThread(QwenLike("<judgment>1</judgment>").app()) as srv:
        with pytest.raises(
            CoverageError,
            match=r"simulate J 1-shot: 0 of 16 answers of model 'qwen3-8b'.*simulation.max_tokens",
        ):
            sj.predict_job(*files, judge.but(spec=json.loads(model(srv.base_url))), "J", "1", context)
        preds = sj.predict_job(
            *files,
            judge.but(
                spec=json.loads(model(srv.base_url, switch=True)),
                coverage=Coverage(0.25, "simulation/personajudge", "simulation.max_tokens"),
            ),
            "J",
            "1",
            context,
        )
    assert preds["answered"].all()


# -- through the workflow -----------------------------------------------------------------------


@pytest.mark.slow
def test_the_workflow_job_of_a_judge_that_never_parses_fails_with_the_message(tmp_path):
    import os

    import yaml
    from snakerun import make_workdir, output, snakemake

    server = QwenLike()
    with ServerThread(server.app()) as srv:
        wd = make_workdir(tmp_path, "api")
        (wd / "server.yaml").write_text(yaml.safe_dump({"models": {"gpt": {"base_url": srv.base_url}}}))
        env = {**os.environ, "JL_WF_KEY": "sk-test"}
        target = "results/peras/judgments/fx/gpt/wo_cot/default.tsv"
        res = snakemake(wd, target, "--configfile", str(wd / "server.yaml"), cores=1, env=env, timeout=600)
    assert res.returncode != 0
    log = (wd / "results" / "logs" / "peras" / "judge" / "fx" / "gpt" / "wo_cot" / "default.log").read_text()
    assert (
        "CoverageError" in log and "0 of 8 answers of model 'gpt' with template wo_cot (peras/wo_cot)" in log
    )
    assert "peras.templates.wo_cot.max_tokens, now 4" in log and "enable_thinking: false" in log
    assert not (wd / target).exists() and server.calls == 8
    assert "min_coverage" in output(res)
