"""PERAS reads the label from the logits for local models (issue 18, item 6): ``peras.answer``
``logits`` takes the template's label with the largest probability at the first answer position
(one answer token is generated), as the simulation study's ``answer: logits``; ``auto`` (the
default) does so for the embedded backend and parses the text of API models; the paper configs
parse. The default run's confidence, classifier and significance stages then work on real labels."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import ROOT, needs_model

from judgelab.cache.store import RequestCache
from judgelab.errors import InputError
from judgelab.llm.backends.base import Backend, Completion, Request
from judgelab.llm.client import CachedClient
from judgelab.llm.judge import Judge, resolve_answer
from judgelab.llm.judging import (
    judgment_requests,
    label_from_probs,
    read_judgment,
    run_judgments,
)
from judgelab.llm.prompts import load_template
from judgelab.wiring.facade import Project


def test_label_from_probs_by_hand():
    assert label_from_probs([0.1, 0.2, 0.6, 0.1]) == 2
    assert label_from_probs([0.1, 0.2, 0.6, 0.1], ("0", "1")) == 1  # a template with fewer labels
    assert label_from_probs([0.4, 0.4, 0.1, 0.1]) is None  # a tie is no label
    assert label_from_probs(None) is None and label_from_probs([]) is None
    assert read_judgment(
        "The passage is highly relevant", [0.1, 0.2, 0.6, 0.1], ("0", "1", "2", "3"), "logits"
    ) == (2, "logits")
    assert read_judgment(
        "The passage is highly relevant", [0.1, 0.2, 0.6, 0.1], ("0", "1", "2", "3"), "parse"
    ) == (None, None)
    assert read_judgment("2\n\nNext steps: 1. read it", None, ("0", "1", "2", "3"), "parse") == (
        2,
        "first-line",
    )
    # the first parser's rules (version 1) leave it missing
    assert read_judgment("2\n\nNext steps: 1. read it", None, ("0", "1", "2", "3"), "parse", 1) == (
        None,
        None,
    )
    assert read_judgment("anything", [0.4, 0.4, 0.1, 0.1], ("0", "1", "2", "3"), "logits") == (None, None)


def test_auto_is_logits_for_the_embedded_model_and_parse_for_api_models():
    assert resolve_answer("auto", "local") == "logits"
    assert {resolve_answer("auto", b) for b in ("openai", "anthropic", "bedrock")} == {"parse"}
    assert resolve_answer("parse", "local") == "parse" and resolve_answer("logits", "openai") == "logits"
    with pytest.raises(InputError, match="peras.answer"):
        resolve_answer("guess", "local")


def test_the_default_config_reads_the_embedded_model_from_the_logits(monkeypatch):
    monkeypatch.chdir(ROOT)
    project = Project.load([], ROOT)
    peras = project.plan("peras")
    assert peras.section["answer"] == "auto" and peras.answer("smollm2") == "logits"
    assert peras.datasets == ["dl21"]  # the DL21 sample alone: the default run's budget
    scale = Project.load(["config/paper-peras.yaml"], ROOT)
    assert {scale.plan("peras").answer(m) for m in scale.plan("peras").judges} == {"parse"}


class Talkative(Backend):
    """Answers in words (no label to parse), with the label distribution at the first position."""

    def __init__(self):
        self.max_tokens: list[int] = []

    def identity(self) -> dict:
        return {"kind": "talkative"}

    def complete(self, request: Request) -> Completion:
        self.max_tokens.append(request.max_tokens)
        grade = len(request.messages[-1][1]) % 4
        probs = [0.7 if k == grade else 0.1 for k in range(4)]
        return Completion(
            text="The passage is highly", label_probs=probs, label_mass=0.9, completion_tokens=1
        )


def test_logits_reading_labels_what_parsing_leaves_missing(tmp_path):
    pairs = pd.DataFrame(
        {
            "dataset": "fx",
            "qid": "1",
            "query": "q",
            "docid": ["a", "b", "c"],
            "passage": ["p", "pp", "ppp"],
            "grade": 0,
        }
    )
    template = load_template("peras/wo_cot")
    backend = Talkative()
    client = CachedClient(backend, RequestCache(tmp_path / "c.sqlite"))
    parsed = run_judgments(pairs, Judge("judge", template=template, max_tokens=8), client, progress=False)
    logits = run_judgments(
        pairs, Judge("judge", template=template, max_tokens=8, answer="logits"), client, progress=False
    )
    assert not parsed["parsed"].any()
    assert logits["parsed"].all()
    expected = [max(range(4), key=lambda k, r=r: [r.p0, r.p1, r.p2, r.p3][k]) for r in logits.itertuples()]
    assert logits["label"].tolist() == expected
    assert backend.max_tokens == [8, 8, 8, 1, 1, 1]  # logits: one answer token
    assert (
        judgment_requests(pairs, Judge("judge", template=template, max_tokens=8, answer="logits"))[
            0
        ].max_tokens
        == 1
    )


def test_the_estimate_reads_cached_labels_as_the_job_does(tmp_path, monkeypatch):
    """Cached wo_cot answers that say no number: read from the logits they have a label (their
    confidence requests are exact, 8 of them); parsed they are missing (no confidence asked)."""
    import yaml

    from judgelab.cache.keys import request_key
    from judgelab.llm.backends import make_backend
    from judgelab.llm.client import cache_request
    from judgelab.wiring.estimate import dataset_pairs, estimate

    monkeypatch.chdir(ROOT)
    (tmp_path / "parse.yaml").write_text(yaml.safe_dump({"peras": {"answer": "parse"}}))
    counts = {}
    for answer, files in (("logits", []), ("parse", [str(tmp_path / "parse.yaml")])):
        project = Project.load(files, ROOT)
        backend = make_backend(project.config["models"]["smollm2"], "smollm2")
        src = dataset_pairs(project, "dl21", directory=ROOT)
        text = project.plan("peras").template_texts["wo_cot"]
        cache_path = tmp_path / f"{answer}.sqlite"
        cache = RequestCache(cache_path)
        for req in judgment_requests(src.pairs, Judge("judge", template=text, max_tokens=8, answer=answer)):
            cache.put(
                request_key(cache_request(backend, req)),
                cache_request(backend, req),
                Completion(text="The", label_probs=[0.1, 0.6, 0.2, 0.1], label_mass=0.5).to_json(),
            )
        cache.close()
        table, _ = estimate(project, directory=ROOT, cache_path=cache_path)
        at = table[table["dataset"] == "dl21"].set_index("stage")
        counts[answer] = (int(at.loc["peras_judge", "cached"]), int(at.loc["peras_confidence", "calls"]))
    # 12 cached default-persona judgments (the DL21 sample); confidence: 22 jobs x 12 pairs, minus
    # the 12 unparsed
    assert counts == {"logits": (12, 264), "parse": (12, 252)}


@pytest.mark.slow
@needs_model
def test_the_embedded_model_is_labelled_from_its_logits_in_a_judge_job(tmp_path):
    from judgelab.data.tables import write_dataset
    from judgelab.llm.judge import Judge
    from judgelab.llm.session import JobContext
    from judgelab.studies.peras.jobs import judge_job

    pairs = pd.DataFrame(
        {
            "dataset": "fx",
            "qid": "1",
            "query": "do goldfish grow",
            "docid": ["a", "b"],
            "passage": ["Goldfish keep growing all their lives.", "The stock market closed higher."],
            "grade": pd.array([3, 0], dtype="Int64"),
        }
    )
    write_dataset(pairs, tmp_path / "pairs.tsv")
    judge = Judge(
        "smollm2",
        {"backend": "local", "n_ctx": 2048, "threads": 1},
        template=load_template("peras/wo_cot"),
        max_tokens=8,
        answer="logits",
    )
    out = judge_job(
        str(tmp_path / "pairs.tsv"), str(tmp_path / "j.tsv"), judge, JobContext(str(tmp_path / "c.sqlite"))
    )
    assert out["parsed"].all() and (out["completion_tokens"] == 1).all()
    probs = out[["p0", "p1", "p2", "p3"]].astype(float).to_numpy()
    assert out["label"].tolist() == probs.argmax(axis=1).tolist()
    assert abs(probs.sum(axis=1) - 1).max() < 1e-6
