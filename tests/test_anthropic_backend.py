"""The Anthropic backend through the real ``anthropic`` SDK over an in-process mock transport that
answers with the API's response shapes: Messages (request building, parsing, retries) and Message
Batches (submit, poll, results, failed items resubmitted alone)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

import httpx2
import pytest

from judgelab.cache.keys import request_key
from judgelab.cache.store import RequestCache
from judgelab.llm.backends.anthropic_api import AnthropicBackend
from judgelab.llm.backends.api import BatchItemFailed
from judgelab.llm.backends.base import Request
from judgelab.llm.backends.batch import BatchStore
from judgelab.llm.client import CachedClient, cache_request
from judgelab.llm.prompts import build_messages

KEY = "sk-ant-test-key"


def message(text: str, model: str = "claude-test", input_tokens: int = 120, output_tokens: int = 1) -> dict:
    """A Messages API response body."""
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def batch_object(batch_id: str, status: str, n: int, succeeded: int = 0, errored: int = 0) -> dict:
    """A Message Batch object."""
    ended = status == "ended"
    return {
        "id": batch_id,
        "type": "message_batch",
        "processing_status": status,
        "request_counts": {
            "processing": 0 if ended else n,
            "succeeded": succeeded,
            "errored": errored,
            "canceled": 0,
            "expired": 0,
        },
        "ended_at": "2025-01-02T10:00:00Z" if ended else None,
        "created_at": "2025-01-01T10:00:00Z",
        "expires_at": "2025-01-02T10:00:00Z",
        "archived_at": None,
        "cancel_initiated_at": None,
        "results_url": f"https://api.anthropic.com/v1/messages/batches/{batch_id}/results" if ended else None,
    }


def backend(handler, **over) -> AnthropicBackend:
    spec = {
        "backend": "anthropic",
        "model": "claude-test",
        "api_key_env": "JL_ANTHROPIC_KEY",
        "concurrency": 2,
        "timeout": 5,
        "max_retries": 3,
        "batch_poll_interval": 0.01,
        **over,
    }
    b = AnthropicBackend.from_spec(
        spec, "claude", http_client=lambda: httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    )
    return b


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv("JL_ANTHROPIC_KEY", KEY)


def judge_request(persona: str, placement: str) -> Request:
    return Request.from_messages(
        build_messages(persona, "Query: q\nPassage: p\nScore 0-3:", placement), 8, ("0", "1", "2", "3")
    )


def test_messages_request_building_and_parsing():
    seen = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=message("2", input_tokens=57, output_tokens=1))

    b = backend(handler)
    completion = b.complete(judge_request("You are a strict assessor.", "system"))
    (req,) = seen
    body = json.loads(req.content)
    assert req.method == "POST" and req.url.path == "/v1/messages"
    assert body["model"] == "claude-test" and body["max_tokens"] == 8
    assert body["system"] == "You are a strict assessor."  # the persona, as Anthropic's system
    assert body["messages"] == [{"role": "user", "content": "Query: q\nPassage: p\nScore 0-3:"}]
    assert body["temperature"] == 0.0 and "top_p" not in body
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert KEY in (req.headers.get("x-api-key", "") + req.headers.get("authorization", ""))
    assert completion.text == "2" and completion.prompt_tokens == 57 and completion.completion_tokens == 1
    assert completion.label_probs is None and completion.label_mass is None  # no logprobs
    assert completion.extra["finish_reason"] == "end_turn"

    # persona in the user turn (the default placement): no system parameter at all
    seen.clear()
    b.complete(judge_request("You are a strict assessor.", "user"))
    body = json.loads(seen[0].content)
    assert "system" not in body and body["messages"][0]["content"].startswith("You are a strict")

    # a model that refuses sampling parameters, with the newer API version
    seen.clear()
    newer = backend(handler, send_sampling=False, anthropic_version="2026-10-21")
    newer.complete(judge_request("", "user"))
    assert "temperature" not in json.loads(seen[0].content)
    assert seen[0].headers["anthropic-version"] == "2026-10-21"
    r = judge_request("", "user")
    assert request_key(cache_request(newer, r)) != request_key(cache_request(b, r))


def test_overloaded_and_rate_limited_answers_are_retried():
    calls = Counter()

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls["n"] += 1
        if calls["n"] == 1:
            return httpx2.Response(
                429,
                headers={"retry-after": "0.05"},
                json={"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
            )
        if calls["n"] == 2:
            return httpx2.Response(
                529, json={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
            )
        return httpx2.Response(200, json=message("1"))

    b = backend(handler)
    b.settings = dataclasses.replace(b.settings, backoff_base=0.01)
    assert b.complete(judge_request("", "user")).text == "1"
    assert b.stats["rate_limited"] == 1 and b.stats["server_error"] == 1 and b.stats["retries"] == 2


def test_a_bad_request_is_not_retried_and_a_bad_key_names_the_variable():
    def bad(request):
        return httpx2.Response(
            400,
            json={
                "type": "error",
                "error": {"type": "invalid_request_error", "message": "max_tokens: too big"},
            },
        )

    b = backend(bad)
    with pytest.raises(Exception, match="too big"):
        b.complete(judge_request("", "user"))
    assert b.stats["attempts"] == 1

    def unauthorized(request):
        return httpx2.Response(
            401,
            json={"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}},
        )

    with pytest.raises(Exception, match="JL_ANTHROPIC_KEY") as err:
        backend(unauthorized).complete(judge_request("", "user"))
    assert KEY not in str(err.value)


class FakeBatches:
    """The Message Batches endpoints: create, retrieve (in_progress once, then ended), results.
    ``errored``: custom_ids that come back errored."""

    def __init__(self, errored=()):
        self.created: list[list[dict]] = []
        self.polls = Counter()
        self.errored = set(errored)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if request.method == "POST" and path == "/v1/messages/batches":
            reqs = json.loads(request.content)["requests"]
            self.created.append(reqs)
            return httpx2.Response(
                200, json=batch_object(f"msgbatch_{len(self.created)}", "in_progress", len(reqs))
            )
        batch_id = path.split("/")[4]
        reqs = self.created[int(batch_id.split("_")[1]) - 1]
        if path.endswith("/results"):
            lines = []
            for r in reqs:
                if r["custom_id"] in self.errored:
                    result = {
                        "type": "errored",
                        "error": {
                            "type": "error",
                            "error": {"type": "invalid_request_error", "message": "prompt is too long"},
                        },
                    }
                else:
                    text = str(len(r["params"]["messages"][0]["content"]) % 4)
                    result = {"type": "succeeded", "message": message(text)}
                lines.append(json.dumps({"custom_id": r["custom_id"], "result": result}))
            return httpx2.Response(
                200,
                content=("\n".join(lines) + "\n").encode(),
                headers={"content-type": "application/binary"},
            )
        self.polls[batch_id] += 1
        if self.polls[batch_id] == 1:
            return httpx2.Response(200, json=batch_object(batch_id, "in_progress", len(reqs)))
        bad = sum(r["custom_id"] in self.errored for r in reqs)
        return httpx2.Response(
            200, json=batch_object(batch_id, "ended", len(reqs), succeeded=len(reqs) - bad, errored=bad)
        )


def test_message_batches_submit_poll_download_and_resubmit_only_failed_items(tmp_path):
    requests = [
        Request.from_messages(
            build_messages("Be lenient.", f"passage {'x' * i}", "system"), 4, ("0", "1", "2", "3")
        )
        for i in range(5)
    ]
    fake = FakeBatches()
    b = backend(fake, batch=True)
    keys = [request_key(cache_request(b, r)) for r in requests]
    fake.errored = {keys[3]}
    with RequestCache(tmp_path / "requests.sqlite") as cache:
        client = CachedClient(b, cache)
        with pytest.raises(BatchItemFailed, match="1 batch requests"):
            client.run(requests, progress=False)
        assert len(cache) == 4  # the answered ones are saved
        (sent,) = fake.created
        assert [r["custom_id"] for r in sent] == keys
        params = sent[0]["params"]
        assert params["system"] == "Be lenient." and params["temperature"] == 0.0
        assert params["model"] == "claude-test" and params["max_tokens"] == 4
        assert params["messages"] == [{"role": "user", "content": "passage "}]

        fake.errored = set()
        out = CachedClient(backend(fake, batch=True), cache).run(requests, progress=False)
        assert len(fake.created) == 2 and [r["custom_id"] for r in fake.created[1]] == [keys[3]]
        assert [c.text for c, _ in out] == [str(len(f"passage {'x' * i}") % 4) for i in range(5)]
        assert [hit for _, hit in out] == [True, True, True, False, True]
        assert out[3][0].extra["batch_id"] == "msgbatch_2"
    store = BatchStore(tmp_path / "batches.sqlite", wal=True)
    assert [b_["batch_id"] for b_ in store.batches()] == ["msgbatch_1", "msgbatch_2"]
    assert store.states("msgbatch_1") == {"done": 4, "failed": 1}
    store.close()
