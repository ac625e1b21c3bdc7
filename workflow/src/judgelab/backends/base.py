"""The backend contract and the cache in front of it."""

from __future__ import annotations

import abc
import logging
import math
from dataclasses import asdict, dataclass, field
from typing import Iterator, Sequence

from tqdm import tqdm

from ..cache import RequestCache, request_key
from ..errors import InputError

log = logging.getLogger(__name__)

#: The label tokens whose probabilities are read at the answer position.
LABEL_TOKENS = ("0", "1", "2", "3")


@dataclass(frozen=True)
class Request:
    """One chat request. ``label_tokens``: also return the probability of each of these tokens
    at the first answer position (where the backend can)."""

    messages: tuple[tuple[str, str], ...]
    max_tokens: int
    label_tokens: tuple[str, ...] = ()

    @classmethod
    def from_messages(cls, messages: Sequence[dict], max_tokens: int,
                      label_tokens: Sequence[str] = ()) -> "Request":
        return cls(tuple((m["role"], m["content"]) for m in messages), int(max_tokens),
                   tuple(label_tokens))

    def message_dicts(self) -> list[dict[str, str]]:
        return [{"role": r, "content": c} for r, c in self.messages]


@dataclass
class Completion:
    """A backend's answer. ``label_probs``: probabilities of ``label_tokens`` renormalised over
    those tokens (they sum to 1); ``label_mass``: their total probability before renormalising."""

    text: str
    label_probs: list[float] | None = None
    label_mass: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = math.nan
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict) -> "Completion":
        return cls(**obj)


class Backend(abc.ABC):
    """An LLM that answers requests. Subclasses define :meth:`identity` (what the cache key needs
    to tell models apart: never a secret) and :meth:`complete`."""

    #: sampling parameters, part of every cache key
    temperature: float = 0.0
    top_p: float = 1.0

    @abc.abstractmethod
    def identity(self) -> dict:
        """Backend kind, model and endpoint; for local models the model file's hash."""

    @abc.abstractmethod
    def complete(self, request: Request) -> Completion:
        """Answer one request."""

    def sampling(self) -> dict:
        return {"temperature": self.temperature, "top_p": self.top_p}

    def complete_many(self, requests: Sequence[Request]) -> Iterator[tuple[int, Completion]]:
        """Answer many requests, yielding (index, completion) as each arrives (any order)."""
        for i, req in enumerate(requests):
            yield i, self.complete(req)

    def bind_cache(self, cache: RequestCache) -> None:
        """Called by :class:`CachedClient`: backends that keep state beside the cache (the batch
        ids of the API backends) learn where it is."""

    def close(self) -> None:
        """Release resources (models, connections)."""


def cache_request(backend: Backend, request: Request) -> dict:
    return {"backend": backend.identity(), "sampling": backend.sampling(),
            "max_tokens": request.max_tokens, "label_tokens": list(request.label_tokens),
            "messages": request.message_dicts()}


class CachedClient:
    """Answers requests from the cache where it can and sends only the misses to the backend,
    saving each answer the moment it arrives."""

    def __init__(self, backend: Backend, cache: RequestCache):
        self.backend, self.cache = backend, cache
        self.calls = 0
        self.hits = 0
        #: tokens of the calls this client made (cache hits cost nothing and are not counted)
        self.prompt_tokens = 0
        self.completion_tokens = 0
        backend.bind_cache(cache)

    def run(self, requests: Sequence[Request], desc: str = "requests",
            progress: bool = True) -> list[tuple[Completion, bool]]:
        """Answers in request order, each with a flag telling whether it came from the cache."""
        out: list[tuple[Completion, bool] | None] = [None] * len(requests)
        cache_requests = [cache_request(self.backend, r) for r in requests]
        keyed = [(request_key(req), req) for req in cache_requests]
        misses: dict[str, list[int]] = {}
        for i, (key, _) in enumerate(keyed):
            hit = self.cache.get(key)
            if hit is not None:
                out[i] = (Completion.from_json(hit), True)
            else:
                misses.setdefault(key, []).append(i)
        self.hits += len(requests) - sum(len(v) for v in misses.values())
        todo = [idxs[0] for idxs in misses.values()]
        log.info("%s: %d requests, %d cached, %d to send", desc, len(requests),
                 len(requests) - sum(len(v) for v in misses.values()), len(todo))
        bar = tqdm(total=len(todo), desc=desc, disable=not progress, mininterval=2.0, unit="call")
        try:
            for j, completion in self.backend.complete_many([requests[i] for i in todo]):
                first = todo[j]
                key, req = keyed[first]
                self.cache.put(key, req, completion.to_json())
                self.calls += 1
                self.prompt_tokens += completion.prompt_tokens or 0
                self.completion_tokens += completion.completion_tokens or 0
                for i in misses[key]:
                    out[i] = (completion, i != first)
                bar.update(1)
        finally:
            bar.close()
        missing = [i for i, o in enumerate(out) if o is None]
        if missing:
            raise RuntimeError(f"backend returned no answer for {len(missing)} requests")
        return out  # type: ignore[return-value]


def make_backend(spec: dict, name: str = "model", *, need_key: bool = True) -> Backend:
    """Build a backend from a model entry of the config (``models.<name>``).

    API backends read their key from the environment here and fail naming the variable when it
    is missing (bedrock: the region and credentials of the AWS chain, naming what is missing);
    ``need_key=False`` defers that to the first call (cost estimates send none)."""
    kind = spec.get("backend")
    if kind == "local":
        from .local import LocalBackend
        return LocalBackend.from_spec(spec, name)
    if kind == "openai":
        from .openai_compat import OpenAIBackend
        return OpenAIBackend.from_spec(spec, name, need_key=need_key)
    if kind == "anthropic":
        from .anthropic_api import AnthropicBackend
        return AnthropicBackend.from_spec(spec, name, need_key=need_key)
    if kind == "bedrock":
        from .bedrock import BedrockBackend
        return BedrockBackend.from_spec(spec, name, need_key=need_key)
    raise InputError(f"unknown backend {kind!r}; available: local, openai, anthropic, bedrock",
                     key=f"models.{name}.backend")
