"""A local OpenAI-compatible chat-completions server for tests and benchmarks (127.0.0.1 only).

Answers are a deterministic function of the prompt (the label is the prompt's SHA-256 mod 4, and
the top logprobs put most mass on it), so a test can check that every answer reached the right
request. A fault plan injects, by arrival order, HTTP 429 with ``Retry-After``, HTTP 500, OpenAI's
HTTP 429 of a used-up quota (``quota``), or a response slower than the client's timeout
(``fault``: one of these for every arrival the plan does not name); ``models``: the model ids
served, any other is answered HTTP 404 as OpenAI answers an unknown model.

    python tests/fake_openai.py --port 8000 --latency 0.1     # standalone (benchmarks)
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import math
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

HOST = "127.0.0.1"


def expected_label(prompt: str) -> int:
    return int(hashlib.sha256(prompt.encode("utf-8")).hexdigest(), 16) % 4


def expected_probs(prompt: str) -> list[float]:
    """The label distribution the server reports for a prompt (renormalised over 0-3)."""
    label = expected_label(prompt)
    raw = [0.7 if k == label else 0.05 for k in range(4)]
    return [p / sum(raw) for p in raw]


@dataclass
class FakeOpenAI:
    """``faults``: arrival number -> "429", "500", "quota" or "slow" (others answer normally, or with
    ``fault`` when set); ``models``: the model ids served (None: any; another is answered 404);
    ``refuse_logprobs``: answer HTTP 400 to requests asking for logprobs, as some servers do."""

    latency: float = 0.0
    faults: dict[int, str] = field(default_factory=dict)
    fault: str | None = None
    models: frozenset | None = None
    retry_after: float = 0.2
    slow_s: float = 3.0
    refuse_logprobs: bool = False
    #: the response's ``model`` (None: the requested one, as most servers do) and
    #: ``system_fingerprint`` (None: left out)
    served_model: str | None = None
    fingerprint: str | None = None
    #: prompts whose expected label is in this set get an answer cut by the bound
    #: (``finish_reason: length``, a text with no label)
    truncate_labels: frozenset = frozenset()
    arrivals: int = 0
    served: Counter = field(default_factory=Counter)  # prompt -> 200 responses sent
    injected: Counter = field(default_factory=Counter)
    auth: Counter = field(default_factory=Counter)  # Authorization headers seen
    history: list = field(default_factory=list)  # (arrival time, prompt, fault or "ok")

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self.chat, methods=["POST"])])

    async def chat(self, request: Request) -> JSONResponse:
        n = self.arrivals
        self.arrivals += 1
        body = await request.json()
        self.auth[request.headers.get("authorization", "")] += 1
        if self.refuse_logprobs and body.get("logprobs"):
            return JSONResponse(
                {
                    "error": {
                        "message": "logprobs are not supported by this server",
                        "type": "invalid_request_error",
                    }
                },
                status_code=400,
            )
        if self.models is not None and body.get("model") not in self.models:
            self.injected["404"] += 1
            return JSONResponse(
                {
                    "error": {
                        "message": f"The model `{body.get('model')}` does not exist or you do not have "
                        "access to it.",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "model_not_found",
                    }
                },
                status_code=404,
            )
        fault = self.faults.get(n, self.fault)
        self.history.append((time.monotonic(), body["messages"][-1]["content"], fault or "ok"))
        if fault == "429":
            self.injected["429"] += 1
            return JSONResponse(
                {"error": {"message": "rate limited", "type": "rate_limit_error"}},
                status_code=429,
                headers={"retry-after": f"{self.retry_after:g}"},
            )
        if fault == "quota":
            self.injected["quota"] += 1
            return JSONResponse(
                {
                    "error": {
                        "message": "You exceeded your current quota, please check your plan and billing "
                        "details.",
                        "type": "insufficient_quota",
                        "param": None,
                        "code": "insufficient_quota",
                    }
                },
                status_code=429,
            )
        if fault == "500":
            self.injected["500"] += 1
            return JSONResponse({"error": {"message": "boom", "type": "server_error"}}, status_code=500)
        if fault == "slow":
            self.injected["slow"] += 1
            await asyncio.sleep(self.slow_s)
        if self.latency:
            await asyncio.sleep(self.latency)
        prompt = body["messages"][-1]["content"]
        label = expected_label(prompt)
        cut = label in self.truncate_labels
        choice: dict = {
            "index": 0,
            "finish_reason": "length" if cut else "stop",
            "message": {
                "role": "assistant",
                "content": "Let me think about this passage" if cut else str(label),
            },
        }
        if body.get("logprobs"):
            probs = expected_probs(prompt)
            top = [
                {"token": str(k), "logprob": math.log(p * 0.9), "bytes": None} for k, p in enumerate(probs)
            ]
            top.append({"token": "The", "logprob": math.log(0.1), "bytes": None})
            top.sort(key=lambda t: -t["logprob"])
            top = top[: int(body.get("top_logprobs") or 1)]
            choice["logprobs"] = {
                "content": [
                    {"token": str(label), "logprob": top[0]["logprob"], "bytes": None, "top_logprobs": top}
                ]
            }
        self.served[prompt] += 1
        extra = {"system_fingerprint": self.fingerprint} if self.fingerprint else {}
        return JSONResponse(
            {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.served_model or body["model"],
                **extra,
                "choices": [choice],
                "usage": {
                    "prompt_tokens": len(prompt) // 4,
                    "completion_tokens": 1,
                    "total_tokens": len(prompt) // 4 + 1,
                },
            }
        )


class ServerThread:
    """Runs an ASGI app with uvicorn on 127.0.0.1 in a background thread."""

    def __init__(self, app, port: int = 0):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((HOST, port))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", access_log=False, timeout_keep_alive=30)
        )
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("fake server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--latency", type=float, default=0.1)
    args = ap.parse_args()
    uvicorn.run(
        FakeOpenAI(latency=args.latency).app(),
        host=HOST,
        port=args.port,
        log_level="warning",
        access_log=False,
        timeout_keep_alive=30,
    )


if __name__ == "__main__":
    main()
