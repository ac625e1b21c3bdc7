"""Anthropic backend: the Messages API through the ``anthropic`` SDK (async).

* **System / persona.** Anthropic has no system role inside ``messages``: every system-role
  message of a request (the persona, with ``personas.placement: system``) goes into the ``system``
  parameter (several are joined by a blank line); user and assistant turns stay in ``messages``
  in order. With the default ``placement: user`` the persona is part of the user turn, exactly as
  for every other backend.
* **Sampling.** ``temperature: 0`` is sent (``top_p`` is left at the API default, 1: recent models
  refuse both together). The SDK (2.x) speaks API version 2026-10-21 by default, which removed the
  sampling parameters; this backend sends ``anthropic-version: 2023-06-01`` by default
  (``anthropic_version`` in the model entry) so that temperature 0 still applies. For models that
  refuse a temperature altogether set ``send_sampling: false``: nothing is sent and the cache key
  records it.
* **No label distribution**: the API returns no logprobs, so p0..p3 and label_mass are missing.
* **Batch mode**: Message Batches (``/v1/messages/batches``), ``custom_id`` = the request's cache
  key (64 hex characters, within the API's limit), params identical to the online request.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any, cast

import anthropic

from judgelab.errors import InputError
from judgelab.llm.backends.api import ApiBackend, ApiSettings, BatchStatus, model_default
from judgelab.llm.backends.base import Completion, Request, served


class AnthropicBackend(ApiBackend):
    kind = "anthropic"
    default_base_url = "https://api.anthropic.com"
    batch_limit = 100_000
    timeout_errors = (anthropic.APITimeoutError,)
    connection_errors = (anthropic.APIConnectionError,)

    def __init__(
        self,
        settings: ApiSettings,
        *,
        api_version: str,
        need_key: bool = True,
        http_client=None,
    ):
        super().__init__(settings, need_key=need_key, http_client=http_client)
        self.api_version = api_version

    @classmethod
    def options_from_spec(cls, spec: Mapping[str, Any], name: str) -> dict[str, Any]:
        version = spec.get("anthropic_version", model_default("anthropic_version"))
        if not str(version).strip():
            raise InputError(
                "expected an API version date such as 2023-06-01, got an empty text",
                key=f"models.{name}.anthropic_version",
            )
        return {"api_version": str(version).strip()}

    def identity(self) -> dict:
        return {
            "kind": self.kind,
            "base_url": self.settings.base_url,
            "model": self.settings.model,
            "api_version": self.api_version,
        }

    def sampling(self) -> dict:
        out: dict[str, Any] = {
            "temperature": self.temperature if self.settings.send_sampling else None,
            "top_p": None,
        }
        if self.settings.extra_body:
            out["extra_body"] = self.settings.extra_body
        return out

    def _new_client(self) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=self._client_key(),
            base_url=self.settings.base_url,
            timeout=self.settings.timeout,
            max_retries=0,
            default_headers={"anthropic-version": self.api_version},
            http_client=self._http_client() if self._http_client else None,
        )

    def params(self, request: Request) -> dict[str, Any]:
        """The Messages-API parameters of a request: system-role messages go to ``system``."""
        system = [content for role, content in request.messages if role == "system"]
        turns = [{"role": role, "content": content} for role, content in request.messages if role != "system"]
        p: dict[str, Any] = {
            "model": self.settings.model,
            "max_tokens": request.max_tokens,
            "messages": turns,
        }
        if system:
            p["system"] = "\n\n".join(system)
        return p

    def _extra(self) -> dict[str, Any]:
        """Fields the SDK has no parameter for (it dropped the sampling parameters)."""
        extra = {"temperature": self.temperature} if self.settings.send_sampling else {}
        return {**extra, **self.settings.extra_body}

    async def _send(self, client: anthropic.AsyncAnthropic, request: Request) -> Completion:
        t0 = time.perf_counter()
        message = await client.messages.create(**self.params(request), extra_body=self._extra() or None)
        return completion_from_message(message, time.perf_counter() - t0)

    async def _batch_submit(
        self, client: anthropic.AsyncAnthropic, items: list[tuple[str, Request]], tag: str
    ) -> str:
        requests = [{"custom_id": key, "params": {**self.params(req), **self._extra()}} for key, req in items]
        batch = await client.messages.batches.create(requests=cast(Any, requests))  # dicts the API accepts
        return batch.id

    async def _batch_status(self, client: anthropic.AsyncAnthropic, batch_id: str) -> BatchStatus:
        b = await client.messages.batches.retrieve(batch_id)
        return BatchStatus(
            ended=b.processing_status == "ended",
            status=b.processing_status,
            counts=b.request_counts.model_dump(),
        )

    async def _batch_results(
        self, client: anthropic.AsyncAnthropic, batch_id: str, requests: Mapping[str, Request]
    ) -> dict[str, Completion | str]:
        out: dict[str, Completion | str] = {}
        async for item in await client.messages.batches.results(batch_id):
            result = item.result
            if result.type == "succeeded":
                out[item.custom_id] = completion_from_message(result.message, math.nan)
            else:
                error = getattr(result, "error", None)
                out[item.custom_id] = f"{result.type}: {error}" if error else result.type
        return out


def completion_from_message(message: Any, latency_s: float) -> Completion:
    """A :class:`Completion` from a Messages-API message: the text blocks joined, usage, no
    label distribution (the API has no logprobs)."""
    text = "".join(block.text for block in message.content if getattr(block, "type", None) == "text")
    usage = message.usage
    return Completion(
        text=text,
        label_probs=None,
        label_mass=None,
        prompt_tokens=usage.input_tokens if usage else None,
        completion_tokens=usage.output_tokens if usage else None,
        latency_s=latency_s,
        extra=served({"finish_reason": message.stop_reason}, getattr(message, "model", None)),
    )
