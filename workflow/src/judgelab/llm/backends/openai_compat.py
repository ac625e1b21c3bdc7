"""OpenAI-compatible backend: OpenAI itself, and any server that speaks its chat-completions API
(vLLM, llama.cpp's server, llama-cpp-python's server, Ollama, DeepSeek) via ``base_url``.

* Requests: ``chat.completions`` with ``temperature: 0`` and ``top_p: 1`` (``send_sampling:
  false`` leaves both out, for models that reject them), ``max_tokens`` (or
  ``max_completion_tokens`` with ``token_limit_param``) and the model entry's ``extra_body``
  fields (e.g. vLLM's ``top_k``, llama.cpp's ``repeat_penalty``), which are part of the cache key.
* Label distribution: for requests that ask for label tokens, ``logprobs: true`` with
  ``top_logprobs`` alternatives; p0..p3 are read at the FIRST answer token exactly as the local
  backend reads them (see :func:`~judgelab.llm.backends.api.label_distribution`). For requests with
  ``label_steps``, every answer token that is a label token (optionally after white space) also
  gets the distribution from ITS logprobs entry: its top alternatives in the same form (``" 2"``
  against ``" 0"``, ``" 1"``, ...), with the token's position and the character offset of the label
  in the answer (:func:`label_steps_from_logprobs`). A server that rejects logprobs (HTTP 400
  naming them) is asked again without them, once per backend, with a warning; the distribution
  and the label steps are then missing (None).
* Batch mode: the Batch API (``/v1/files`` + ``/v1/batches``, 24 h window), one JSONL line per
  request with the same body as online, ``custom_id`` = the request's cache key.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from judgelab.llm.backends.api import ApiBackend, ApiSettings, BatchStatus, label_distribution, model_default
from judgelab.llm.backends.base import Completion, Request, label_form, served

log = logging.getLogger(__name__)

#: OpenAI batch statuses after which nothing changes any more
_ENDED = {"completed", "failed", "expired", "cancelled"}


class OpenAIBackend(ApiBackend):
    kind = "openai"
    default_base_url = "https://api.openai.com/v1"
    batch_limit = 50_000
    timeout_errors = (openai.APITimeoutError,)
    connection_errors = (openai.APIConnectionError,)

    def __init__(
        self,
        settings: ApiSettings,
        *,
        logprobs: bool,
        top_logprobs: int,
        token_limit_param: str,
        need_key: bool = True,
        http_client=None,
    ):
        super().__init__(settings, need_key=need_key, http_client=http_client)
        self.logprobs = logprobs
        self.top_logprobs = top_logprobs
        self.token_limit_param = token_limit_param
        self._logprobs_refused = False

    @classmethod
    def options_from_spec(cls, spec: Mapping[str, Any], name: str) -> dict[str, Any]:
        # checked against the schema with the shared settings (:meth:`ApiBackend.from_spec`)
        logprobs, top, limit = (
            spec.get(k, model_default(k)) for k in ("logprobs", "top_logprobs", "token_limit_param")
        )
        return {"logprobs": logprobs, "top_logprobs": top, "token_limit_param": limit}

    # -- identity (cache key): endpoint and model, never the key ---------------------------
    def identity(self) -> dict:
        return {"kind": self.kind, "base_url": self.settings.base_url, "model": self.settings.model}

    def sampling(self) -> dict:
        s = self.settings
        out: dict[str, Any] = (
            {"temperature": self.temperature, "top_p": self.top_p}
            if s.send_sampling
            else {"temperature": None, "top_p": None}
        )
        out["top_logprobs"] = self.top_logprobs if self.logprobs else None
        if s.extra_body:
            out["extra_body"] = s.extra_body
        return out

    # -- requests --------------------------------------------------------------------------
    def _new_client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=self._client_key(),
            base_url=self.settings.base_url,
            timeout=self.settings.timeout,
            max_retries=0,
            http_client=self._http_client() if self._http_client else None,
        )

    def _wants_logprobs(self, request: Request) -> bool:
        return bool(request.label_tokens) and self.logprobs and not self._logprobs_refused

    def params(self, request: Request, *, logprobs: bool | None = None) -> dict[str, Any]:
        """The chat-completions parameters the SDK knows (``extra_body`` goes beside them)."""
        p: dict[str, Any] = {
            "model": self.settings.model,
            "messages": request.message_dicts(),
            self.token_limit_param: request.max_tokens,
        }
        if self.settings.send_sampling:
            p["temperature"], p["top_p"] = self.temperature, self.top_p
        if self._wants_logprobs(request) if logprobs is None else logprobs:
            p["logprobs"], p["top_logprobs"] = True, self.top_logprobs
        return p

    def body(self, request: Request) -> dict[str, Any]:
        """The whole JSON body (batch lines): the parameters plus ``extra_body``."""
        return {**self.params(request), **self.settings.extra_body}

    async def _create(self, client: openai.AsyncOpenAI, params: dict[str, Any]) -> ChatCompletion:
        """POST the chat-completions body (the parameters and ``extra_body``) with the SDK's
        documented ``post`` (its errors, timeout and connection pool), read into a
        :class:`ChatCompletion`. ``chat.completions.create`` would first walk the messages through
        the SDK's typed-dict transform, about 1 ms of CPU per request that a burst of answers
        then waits for in turn (``workflow/benchmarks/openai_throughput.py``); the body is plain
        JSON already."""
        return await client.post(
            "/chat/completions", body={**params, **self.settings.extra_body}, cast_to=ChatCompletion
        )

    async def _send(self, client: openai.AsyncOpenAI, request: Request) -> Completion:
        t0 = time.perf_counter()
        params = self.params(request)
        try:
            resp = await self._create(client, params)
        except openai.BadRequestError as exc:
            if not params.get("logprobs") or "logprob" not in str(exc).lower():
                raise
            if not self._logprobs_refused:
                log.warning(
                    "%s refuses logprobs (%s); asking without them, the label distribution stays missing",
                    self.describe(),
                    exc,
                )
            self._logprobs_refused = True
            resp = await self._create(client, self.params(request, logprobs=False))
        return completion_from_chat(resp, request, time.perf_counter() - t0)

    # -- batch mode ------------------------------------------------------------------------
    async def _batch_submit(
        self, client: openai.AsyncOpenAI, items: list[tuple[str, Request]], tag: str
    ) -> str:
        lines = [
            json.dumps(
                {"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": self.body(req)},
                ensure_ascii=False,
            )
            for key, req in items
        ]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        upload = await client.files.create(file=(f"judgelab-{tag[:16]}.jsonl", data), purpose="batch")
        batch = await client.batches.create(
            input_file_id=upload.id,
            endpoint="/v1/chat/completions",
            completion_window="24h",
            metadata={"judgelab_submission": tag[:64]},
        )
        return batch.id

    async def _batch_status(self, client: openai.AsyncOpenAI, batch_id: str) -> BatchStatus:
        b = await client.batches.retrieve(batch_id)
        counts = b.request_counts.model_dump() if b.request_counts else {}
        detail = "; ".join(f"{e.code}: {e.message}" for e in (b.errors.data or [])) if b.errors else ""
        return BatchStatus(
            ended=b.status in _ENDED,
            status=b.status,
            counts=counts,
            failed=b.status == "failed",
            detail=detail,
        )

    async def _batch_results(
        self, client: openai.AsyncOpenAI, batch_id: str, requests: Mapping[str, Request]
    ) -> dict[str, Completion | str]:
        b = await client.batches.retrieve(batch_id)
        out: dict[str, Completion | str] = {}
        for file_id in (b.output_file_id, b.error_file_id):
            if not file_id:
                continue
            content = await client.files.content(file_id)
            for line in content.text.splitlines():
                if not line.strip():
                    continue
                item = json.loads(line)
                key = item.get("custom_id")
                resp = item.get("response") or {}
                if resp.get("status_code") == 200 and resp.get("body"):
                    out[key] = completion_from_chat(
                        ChatCompletion.model_validate(resp["body"]), requests.get(key), math.nan
                    )
                else:
                    err = item.get("error") or (resp.get("body") or {}).get("error") or resp
                    out[key] = f"HTTP {resp.get('status_code')}: {err}"
        return out


def _alternatives(entry: Any) -> list[tuple[str, float]]:
    """(token, logprob) alternatives of one logprobs entry; the token itself if none are given."""
    alternatives = [(t.token, t.logprob) for t in (entry.top_logprobs or [])]
    if entry.token not in {t for t, _ in alternatives}:
        alternatives.append((entry.token, entry.logprob))
    return alternatives


def label_steps_from_logprobs(content: Sequence[Any], text: str, labels: Sequence[str]) -> list[dict]:
    """The label steps (see :class:`~judgelab.llm.backends.base.Completion`) of an answer from its
    logprobs ``content`` entries: every entry whose token spells a label after optional white
    space, with the label distribution over its top alternatives in the same form.

    Character offsets come from the entries' ``bytes`` when every entry has them (a token may end
    inside a multi-byte character), else from the token strings; a step whose offset does not
    point at its label character in ``text`` (the entries do not spell the answer) is dropped, so
    it can never be taken for the label."""
    use_bytes = all(getattr(e, "bytes", None) is not None for e in content)
    steps, prefix_b, prefix_s = [], b"", ""
    for pos, entry in enumerate(content):
        form = label_form(entry.token, labels)
        if form is not None:
            ws, label = form
            before = prefix_b.decode("utf-8", errors="replace") if use_bytes else prefix_s
            start = len(before) + len(ws)
            if text[start : start + len(label)] == label:
                probs, mass = label_distribution(_alternatives(entry), tuple(ws + lab for lab in labels))
                steps.append(
                    {
                        "pos": pos,
                        "start": start,
                        "token": entry.token,
                        "label": label,
                        "probs": probs,
                        "mass": mass,
                    }
                )
        if use_bytes:
            prefix_b += bytes(entry.bytes)
        else:
            prefix_s += entry.token
    return steps


def completion_from_chat(resp: ChatCompletion, request: Request | None, latency_s: float) -> Completion:
    """A :class:`Completion` from a chat completion: the text, usage, and (when the response
    carries logprobs and ``request`` asks for them) the label distribution at the first answer
    token and the label steps."""
    choice = resp.choices[0]
    text = choice.message.content or ""
    label_tokens = request.label_tokens if request is not None else ()
    probs = mass = steps = None
    content = choice.logprobs.content if choice.logprobs and choice.logprobs.content else None
    if label_tokens and content:
        first = content[0]
        alternatives = [(t.token, t.logprob) for t in (first.top_logprobs or [])]
        if not alternatives:
            alternatives = [(first.token, first.logprob)]
        probs, mass = label_distribution(alternatives, tuple(label_tokens))
        if request is not None and request.label_steps:
            steps = label_steps_from_logprobs(content, text, label_tokens)
    usage = resp.usage
    return Completion(
        text=text,
        label_probs=probs,
        label_mass=mass,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        latency_s=latency_s,
        extra=served(
            {"finish_reason": choice.finish_reason},
            getattr(resp, "model", None),
            getattr(resp, "system_fingerprint", None),
        ),
        label_steps=steps,
    )
