"""OpenAI Batch API mode through the real ``openai`` SDK over a mock transport serving the files
and batches endpoints: a job killed after its submission was saved resumes polling when rerun and
never submits again; the downloaded answers fill the cache, label distribution included."""

from __future__ import annotations

import json
import math
import re
import threading
from collections import Counter

import httpx2
import pytest
from conftest import ROOT
from fake_openai import expected_label, expected_probs

from judgelab.cache.keys import request_key
from judgelab.cache.store import RequestCache
from judgelab.data.prepare import build_trec_table
from judgelab.llm.backends.batch import BatchStore
from judgelab.llm.backends.openai_compat import OpenAIBackend
from judgelab.llm.client import CachedClient, cache_request
from judgelab.llm.judge import Judge
from judgelab.llm.judging import judgment_requests, run_judgments
from judgelab.llm.prompts import load_template

SAMPLE = ROOT / "resources" / "sample" / "dl20"


def chat_body(prompt: str, model: str, with_logprobs: bool) -> dict:
    """A chat.completion object as the Batch API puts it in ``response.body``."""
    label = expected_label(prompt)
    choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": str(label)}}
    if with_logprobs:
        top = [
            {"token": str(k), "logprob": math.log(p), "bytes": None}
            for k, p in enumerate(expected_probs(prompt))
        ]
        choice["logprobs"] = {
            "content": [
                {"token": str(label), "logprob": top[label]["logprob"], "bytes": None, "top_logprobs": top}
            ]
        }
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [choice],
        "usage": {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101},
    }


class FakeBatchAPI:
    """/v1/files, /v1/batches: a batch is validating, then in_progress, then completed."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.calls = Counter()

    def batch_json(self, b: dict) -> dict:
        n = len(self.files[b["input_file_id"]].splitlines())
        done = b["status"] == "completed"
        return {
            "id": b["id"],
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "errors": None,
            "input_file_id": b["input_file_id"],
            "completion_window": "24h",
            "status": b["status"],
            "output_file_id": b.get("output_file_id"),
            "error_file_id": None,
            "created_at": 1700000000,
            "in_progress_at": None,
            "expires_at": 1700086400,
            "completed_at": 1700003600 if done else None,
            "failed_at": None,
            "request_counts": {"total": n, "completed": n if done else 0, "failed": 0},
            "metadata": b["metadata"],
        }

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        path, method = request.url.path, request.method
        self.calls[f"{method} {re.sub(r'_[0-9]+', '_N', path)}"] += 1
        if method == "POST" and path == "/v1/files":
            body = request.read()
            assert b'name="purpose"' in body and b"batch" in body
            lines = [ln for ln in body.split(b"\r\n") if ln.startswith(b'{"custom_id"')]
            fid = f"file_{len(self.files) + 1}"
            self.files[fid] = b"\n".join(lines)
            return httpx2.Response(
                200,
                json={
                    "id": fid,
                    "object": "file",
                    "bytes": len(body),
                    "created_at": 1700000000,
                    "filename": "in.jsonl",
                    "purpose": "batch",
                    "status": "processed",
                },
            )
        if method == "POST" and path == "/v1/batches":
            spec = json.loads(request.content)
            assert spec["endpoint"] == "/v1/chat/completions" and spec["completion_window"] == "24h"
            bid = f"batch_{len(self.batches) + 1}"
            self.batches[bid] = {"id": bid, "status": "validating", "polls": 0, **spec}
            return httpx2.Response(200, json=self.batch_json(self.batches[bid]))
        m = re.fullmatch(r"/v1/batches/(batch_\d+)", path)
        if method == "GET" and m:
            b = self.batches[m.group(1)]
            b["polls"] += 1
            b["status"] = ["validating", "in_progress", "completed"][min(b["polls"], 2)]
            if b["status"] == "completed" and not b.get("output_file_id"):
                out = []
                for line in self.files[b["input_file_id"]].splitlines():
                    item = json.loads(line)
                    body = item["body"]
                    out.append(
                        json.dumps(
                            {
                                "id": f"batch_req_{len(out)}",
                                "custom_id": item["custom_id"],
                                "error": None,
                                "response": {
                                    "status_code": 200,
                                    "request_id": "req_1",
                                    "body": chat_body(
                                        body["messages"][-1]["content"],
                                        body["model"],
                                        bool(body.get("logprobs")),
                                    ),
                                },
                            }
                        )
                    )
                fid = f"file_{len(self.files) + 1}"
                self.files[fid] = "\n".join(out).encode()
                b["output_file_id"] = fid
            return httpx2.Response(200, json=self.batch_json(b))
        m = re.fullmatch(r"/v1/files/(file_\d+)/content", path)
        if method == "GET" and m:
            return httpx2.Response(200, content=self.files[m.group(1)])
        return httpx2.Response(404, json={"error": {"message": f"no route {method} {path}"}})


class Killed(BaseException):
    """Stands for the job being killed (not an Exception: nothing may swallow it)."""


def make_backend(api: FakeBatchAPI) -> OpenAIBackend:
    spec = {
        "backend": "openai",
        "model": "gpt-4o-mini",
        "api_key_env": None,
        "batch": True,
        "batch_poll_interval": 0.01,
        "base_url": "https://api.openai.com/v1",
    }
    return OpenAIBackend.from_spec(
        spec, "gpt", http_client=lambda: httpx2.AsyncClient(transport=httpx2.MockTransport(api))
    )


def test_batch_killed_after_submission_resumes_and_never_resubmits(tmp_path, monkeypatch):
    pairs = build_trec_table("dl20", SAMPLE / "qrels.txt", SAMPLE / "topics.txt", SAMPLE / "texts.tsv")
    template = load_template("peras/wo_cot")
    api = FakeBatchAPI()
    cache_path = tmp_path / "cache" / "requests.sqlite"

    # 1. submit, then the job dies at its first poll, after the batch id was saved
    def killed(self, client, batch_id):
        raise Killed(batch_id)

    monkeypatch.setattr(OpenAIBackend, "_batch_status", killed)
    with RequestCache(cache_path) as cache, pytest.raises(Killed):
        run_judgments(
            pairs,
            Judge("judge", template=template, max_tokens=4),
            CachedClient(make_backend(api), cache),
            progress=False,
        )
    monkeypatch.undo()
    assert api.calls == Counter({"POST /v1/files": 1, "POST /v1/batches": 1})
    store = BatchStore(cache_path.parent / "batches.sqlite", wal=True)
    (saved,) = store.batches()
    assert saved["batch_id"] == "batch_1" and saved["n_requests"] == len(pairs)
    assert store.states("batch_1") == {"pending": len(pairs)}
    store.close()

    # 2. rerun: polls the saved batch, downloads, fills the cache; submits nothing
    with RequestCache(cache_path) as cache:
        assert len(cache) == 0
        backend = make_backend(api)
        out = run_judgments(
            pairs,
            Judge("judge", template=template, max_tokens=4),
            CachedClient(backend, cache),
            progress=False,
        )
        assert len(cache) == len(pairs)
    assert api.calls["POST /v1/files"] == 1 and api.calls["POST /v1/batches"] == 1
    assert api.calls["GET /v1/batches/batch_N"] == 3 and api.calls["GET /v1/files/file_N/content"] == 1
    prompts = [
        r.messages[-1][1] for r in judgment_requests(pairs, Judge("judge", template=template, max_tokens=4))
    ]
    assert out["label"].tolist() == [expected_label(p) for p in prompts]
    for (_, row), prompt in zip(out.iterrows(), prompts):
        assert [row.p0, row.p1, row.p2, row.p3] == pytest.approx(expected_probs(prompt))
    # the submitted lines are the online request bodies, keyed by the cache keys
    lines = [json.loads(x) for x in api.files["file_1"].splitlines()]
    reqs = judgment_requests(pairs, Judge("judge", template=template, max_tokens=4))
    assert [x["custom_id"] for x in lines] == [request_key(cache_request(backend, r)) for r in reqs]
    assert lines[0]["body"] == backend.body(reqs[0])
    assert lines[0]["body"]["temperature"] == 0.0 and lines[0]["body"]["top_logprobs"] == 20

    # 3. a third run is answered by the cache alone: no HTTP at all
    calls = sum(api.calls.values())
    with RequestCache(cache_path) as cache:
        again = run_judgments(
            pairs,
            Judge("judge", template=template, max_tokens=4),
            CachedClient(make_backend(api), cache),
            progress=False,
        )
    assert sum(api.calls.values()) == calls and again["cache_hit"].all()


def test_concurrent_jobs_with_the_same_requests_submit_one_batch(tmp_path):
    """Two jobs at once (here: threads, each with its own cache connection) asking the same
    requests: the submission lock lets one submit; the other finds that batch and polls it."""
    pairs = build_trec_table("dl20", SAMPLE / "qrels.txt", SAMPLE / "topics.txt", SAMPLE / "texts.tsv")
    template = load_template("peras/wo_cot")
    api = FakeBatchAPI()
    results, errors = {}, []

    def job(name):
        try:
            with RequestCache(tmp_path / "requests.sqlite") as cache:
                results[name] = run_judgments(
                    pairs,
                    Judge("judge", template=template, max_tokens=4),
                    CachedClient(make_backend(api), cache),
                    progress=False,
                )
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=job, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, "".join(__import__("traceback").format_exception(errors[0])) if errors else ""
    assert api.calls["POST /v1/files"] == 1 and api.calls["POST /v1/batches"] == 1
    assert results["a"]["answer"].tolist() == results["b"]["answer"].tolist()
