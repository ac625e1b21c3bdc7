"""The backend contract and the cache in front of it."""

from __future__ import annotations

import abc
import logging
import math
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field

from tqdm import tqdm

from ..cache import RequestCache, request_key
from ..errors import InputError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    """One chat request. ``label_tokens``: also return the probability of each of these tokens
    at the first answer position (where the backend can). ``label_steps``: also return the label
    distribution at every answer token that IS a label token (see :class:`Completion`), so the
    distribution can be read where the label was actually generated, after any prefix or
    reasoning (needs ``label_tokens``)."""

    messages: tuple[tuple[str, str], ...]
    max_tokens: int
    label_tokens: tuple[str, ...] = ()
    label_steps: bool = False

    def __post_init__(self):
        if self.label_steps and not self.label_tokens:
            raise ValueError("label_steps needs label_tokens")

    @classmethod
    def from_messages(
        cls,
        messages: Sequence[dict],
        max_tokens: int,
        label_tokens: Sequence[str] = (),
        label_steps: bool = False,
    ) -> Request:
        return cls(
            tuple((m["role"], m["content"]) for m in messages),
            int(max_tokens),
            tuple(label_tokens),
            bool(label_steps),
        )

    def message_dicts(self) -> list[dict[str, str]]:
        return [{"role": r, "content": c} for r, c in self.messages]


@dataclass
class Completion:
    """A backend's answer. ``label_probs``: probabilities of ``label_tokens`` at the FIRST answer
    position, renormalised over those tokens (they sum to 1); ``label_mass``: their total
    probability before renormalising.

    ``label_steps`` (only for requests with ``label_steps``; None otherwise): one entry per answer
    token that is a label token, i.e. whose text is a label, optionally preceded by white space
    (``"2"``, ``" 2"``), in answer order. Each entry is a dict (JSON, so the cache keeps it):

    * ``pos``: the token's index in the answer (0 = the first answer token),
    * ``start``: the character offset of the label character in ``text``,
    * ``token``: the token's text, ``label``: the label it spells,
    * ``probs``: the distribution at the decoding step that generated the token over the label
      tokens *in the same form* (with the same leading white space, so ``" 2"`` is compared with
      ``" 0"``, ``" 1"``, ...), renormalised over them, in ``label_tokens`` order; ``mass``: their
      total probability before renormalising (API backends: a lower bound, from the top
      alternatives).

    A token at ``pos`` 0 in the bare form gives exactly the first-position reading
    (``label_probs``). Which step carries the answer's label is decided by the answer parser
    (:func:`label_step_at`), not here. An empty list means: no answer token was a label token.
    """

    text: str
    label_probs: list[float] | None = None
    label_mass: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = math.nan
    extra: dict = field(default_factory=dict)
    label_steps: list[dict] | None = None

    def to_json(self) -> dict:
        out = asdict(self)
        if out["label_steps"] is None:
            # answers without steps are stored exactly as before steps existed (older code reads them)
            del out["label_steps"]
        return out

    @classmethod
    def from_json(cls, obj: dict) -> Completion:
        # entries without label_steps (cached before it existed, or for requests without it) load
        # with None; they can only be hits for requests without label_steps (see cache_request)
        return cls(**obj)


def label_form(token: str, labels: Sequence[str]) -> tuple[str, str] | None:
    """``(white space prefix, label)`` if ``token`` spells one of ``labels`` after optional
    leading white space (``" 2"`` -> ``(" ", "2")``), else None."""
    stripped = token.lstrip()
    if stripped in labels:
        return token[: len(token) - len(stripped)], stripped
    return None


def label_step_at(completion: Completion, start: int) -> dict | None:
    """The label step whose label character is at offset ``start`` of the answer (the offset the
    answer parser took the label from), or None: no such step (the label was not generated as a
    token of its own, e.g. inside ``"2."`` merged into one token) or no steps recorded."""
    for step in completion.label_steps or ():
        if step["start"] == start:
            return step
    return None


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

    def claim_chunk(self) -> int | None:
        """How many uncached requests :class:`CachedClient` claims and hands to :meth:`complete_many`
        at once; None: all of them together (a provider batch must see them in one submission).
        Between chunks another process asking the same requests takes the ones not claimed yet,
        so two jobs with overlapping requests share the work instead of one waiting for all of it.
        Default: all for a backend in batch mode, 8 x its ``concurrency`` for an online API backend
        (so its workers stay busy), 16 otherwise."""
        settings = getattr(self, "settings", None)
        if getattr(settings, "batch", False):
            return None
        concurrency = getattr(settings, "concurrency", None)
        if isinstance(concurrency, int) and not isinstance(concurrency, bool) and concurrency > 0:
            return 8 * concurrency
        return 16

    def bind_cache(self, cache: RequestCache) -> None:  # noqa: B027 (an optional hook: most backends keep nothing)
        """Called by :class:`CachedClient`: backends that keep state beside the cache (the batch
        ids of the API backends) learn where it is."""

    def close(self) -> None:  # noqa: B027 (an optional hook: most backends hold nothing)
        """Release resources (models, connections)."""


def cache_request(backend: Backend, request: Request) -> dict:
    """What the cache key is made of. ``label_steps`` enters only when requested, so the keys (and
    cached answers) of requests without it are those of earlier versions; a request with it never
    hits an entry cached without the steps (an old entry cannot pass its first-position reading
    off as the label token's), and its own entries carry the steps wherever the backend can read
    them (None where it cannot: Anthropic, a server refusing logprobs), so a hit gives the same
    numbers as the call."""
    out = {
        "backend": backend.identity(),
        "sampling": backend.sampling(),
        "max_tokens": request.max_tokens,
        "label_tokens": list(request.label_tokens),
        "messages": request.message_dicts(),
    }
    if request.label_steps:
        out["label_steps"] = True
    return out


class CachedClient:
    """Answers requests from the cache where it can and sends only the misses to the backend,
    saving each answer the moment it arrives.

    A miss is claimed in the cache before it is sent (:meth:`RequestCache.claim`, in chunks of
    :meth:`Backend.claim_chunk`): a request that another process (another job, another run sharing
    the cache) has claimed is not sent but waited for, polling the cache with a backoff from
    :attr:`poll_min` to :attr:`poll_max` seconds, until its answer appears (a cache hit) or its
    claim is released or runs out (then this client claims and sends it). Claims are released
    after each chunk, also when the backend fails. A cache hit costs one lookup, as before claims."""

    #: first and longest wait between two looks at requests claimed by another process (seconds)
    poll_min: float = 0.05
    poll_max: float = 2.0

    def __init__(self, backend: Backend, cache: RequestCache):
        self.backend, self.cache = backend, cache
        self.calls = 0
        self.hits = 0
        #: answers that another process was computing when asked (counted in hits as well)
        self.waited = 0
        #: tokens of the calls this client made (cache hits cost nothing and are not counted)
        self.prompt_tokens = 0
        self.completion_tokens = 0
        backend.bind_cache(cache)

    def run(
        self, requests: Sequence[Request], desc: str = "requests", progress: bool = True
    ) -> list[tuple[Completion, bool]]:
        """Answers in request order, each with a flag telling whether it came from the cache
        (including answers another process stored while this one waited for them)."""
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
        log.info(
            "%s: %d requests, %d cached, %d to send",
            desc,
            len(requests),
            len(requests) - sum(len(v) for v in misses.values()),
            len(misses),
        )
        if misses:
            bar = tqdm(total=len(misses), desc=desc, disable=not progress, mininterval=2.0, unit="call")
            try:
                for key, completion, paid in self._answer(list(misses), requests, keyed, misses):
                    idxs = misses[key]
                    if paid:
                        self.calls += 1
                        self.prompt_tokens += completion.prompt_tokens or 0
                        self.completion_tokens += completion.completion_tokens or 0
                    else:
                        self.hits += len(idxs)
                        self.waited += 1
                    for i in idxs:
                        out[i] = (completion, not paid or i != idxs[0])
                    bar.update(1)
            finally:
                bar.close()
                if self.cache.unsaved and self.cache.flush_unsaved():
                    log.error(
                        "%s: %d answers could not be written to the cache %s nor to %s; they "
                        "are only in this job's output",
                        desc,
                        len(self.cache.unsaved),
                        self.cache.path,
                        self.cache.pending.path,
                    )
        missing = [i for i, o in enumerate(out) if o is None]
        if missing:
            raise RuntimeError(f"backend returned no answer for {len(missing)} requests")
        return out  # type: ignore[return-value]

    def _answer(
        self,
        keys: list[str],
        requests: Sequence[Request],
        keyed: list[tuple[str, dict]],
        where: dict[str, list[int]],
    ) -> Iterator[tuple[str, Completion, bool]]:
        """``(key, completion, paid)`` for every key of ``keys`` (unique misses, in order): paid by
        this client (sent after claiming it) or stored by another process meanwhile."""
        chunk = max(1, self.backend.claim_chunk() or len(keys))
        queue = deque(keys)
        waiting: dict[str, str] = {}  # key -> the owner of its claim
        delay, told = self.poll_min, 0.0
        while queue or waiting:
            if queue:
                look = [queue.popleft() for _ in range(min(len(queue), max(chunk, 64)))]
                got = self.cache.claim(look, limit=chunk)
                queue.extendleft(reversed(got.rest))
                waiting.update(got.busy)
            else:
                got = self.cache.claim(list(waiting), limit=chunk)
                for k in [*got.answered, *got.mine]:
                    waiting.pop(k, None)
                waiting.update(got.busy)
            for key, response in got.answered.items():
                yield key, Completion.from_json(response), False
            if got.mine:
                delay = self.poll_min
                yield from self._send(got.mine, requests, keyed, where)
            elif got.answered:
                delay = self.poll_min
            elif not queue and waiting:
                if time.monotonic() - told > 60.0:
                    owners = sorted(set(waiting.values()))
                    log.info(
                        "waiting for %d requests that other processes are answering (%s%s)",
                        len(waiting),
                        ", ".join(owners[:3]),
                        ", ..." if len(owners) > 3 else "",
                    )
                    told = time.monotonic()
                time.sleep(delay)
                delay = min(self.poll_max, delay * 1.5)

    def _send(
        self,
        keys: list[str],
        requests: Sequence[Request],
        keyed: list[tuple[str, dict]],
        where: dict[str, list[int]],
    ) -> Iterator[tuple[str, Completion, bool]]:
        """Send the claimed ``keys``, store each answer as it arrives; release the claims after (also
        on error: the requests not answered are then free for another process)."""
        firsts = [where[k][0] for k in keys]
        try:
            for j, completion in self.backend.complete_many([requests[i] for i in firsts]):
                key, req = keyed[firsts[j]]
                self.cache.put(key, req, completion.to_json())
                yield key, completion, True
        finally:
            self.cache.release(keys)


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
    raise InputError(
        f"unknown backend {kind!r}; available: local, openai, anthropic, bedrock",
        key=f"models.{name}.backend",
    )
