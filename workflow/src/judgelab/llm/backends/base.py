"""The backend contract: a :class:`Request`, the :class:`Completion` that answers it, and the
:class:`Backend` that turns one into the other (the cache in front of any backend is
:class:`judgelab.llm.client.CachedClient`)."""

from __future__ import annotations

import abc
import logging
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    """One chat request. ``label_tokens``: also return the probability of each of these tokens
    at the first answer position (where the backend can). ``label_steps``: also return the label
    distribution at every answer token that IS a label token (see :class:`Completion`), so the
    distribution can be read where the label was actually generated, after any prefix or
    reasoning (needs ``label_tokens``). ``sample``: which answer of the same request this is (0: the
    one every request asks; a judge repeated k times asks samples 0..k-1, each cached on its own,
    :func:`judgelab.llm.client.cache_request`)."""

    messages: tuple[tuple[str, str], ...]
    max_tokens: int
    label_tokens: tuple[str, ...] = ()
    label_steps: bool = False
    sample: int = 0

    def __post_init__(self):
        if self.label_steps and not self.label_tokens:
            raise ValueError("label_steps needs label_tokens")
        if self.sample < 0:
            raise ValueError("sample must be >= 0")

    @classmethod
    def from_messages(
        cls,
        messages: Sequence[dict],
        max_tokens: int,
        label_tokens: Sequence[str] = (),
        label_steps: bool = False,
        sample: int = 0,
    ) -> Request:
        return cls(
            tuple((m["role"], m["content"]) for m in messages),
            int(max_tokens),
            tuple(label_tokens),
            bool(label_steps),
            int(sample),
        )

    def message_dicts(self) -> list[dict[str, str]]:
        return [{"role": r, "content": c} for r, c in self.messages]


#: Finish reasons meaning "cut by the token bound" (OpenAI-compatible and the embedded model:
#: ``length``; Anthropic and Bedrock: ``max_tokens``).
TRUNCATED_REASONS = frozenset({"length", "max_tokens"})


def served(extra: dict, model: str | None, fingerprint: str | None = None) -> dict:
    """``extra`` with who answered, as the response says: the served model's name
    (``served_model``: an alias resolves to a dated name) and the system fingerprint where the API
    gives one; absent values are left out (the cache entry then reads as before)."""
    out = dict(extra)
    if model:
        out["served_model"] = str(model)
    if fingerprint:
        out["system_fingerprint"] = str(fingerprint)
    return out


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

    @property
    def finish_reason(self) -> str | None:
        """Why the answer ended, as the backend said (``extra``): ``stop``, ``length`` (OpenAI
        and the embedded model), ``end_turn``, ``max_tokens`` (Anthropic, Bedrock), ...; None
        when not recorded (answers cached before the embedded model recorded it)."""
        reason = self.extra.get("finish_reason") if self.extra else None
        return None if reason is None else str(reason)

    @property
    def served_model(self) -> str | None:
        """The model the response names (``extra``), None when the backend reports none."""
        return (self.extra or {}).get("served_model")

    @property
    def system_fingerprint(self) -> str | None:
        """The response's system fingerprint (OpenAI-compatible APIs that send one), else None."""
        return (self.extra or {}).get("system_fingerprint")

    def truncated(self, max_tokens: int | None = None) -> bool:
        """Was the answer cut by the token bound? The finish reason where the backend gave one
        (``length``, ``max_tokens``); otherwise (an older cache entry) whether the answer used the
        whole bound ``max_tokens``."""
        reason = self.finish_reason
        if reason is not None:
            return reason.lower() in TRUNCATED_REASONS
        return max_tokens is not None and (self.completion_tokens or 0) >= int(max_tokens)

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

    def complete_many(self, requests: Iterable[Request]) -> Iterator[tuple[int, Completion]]:
        """Answer many requests, yielding (index, completion) as each arrives (any order). A
        backend whose :meth:`streams_requests` is true takes ``requests`` lazily, one as a worker
        frees up (an iterator whose next items may be claimed only when they are reached);
        otherwise they arrive as a sequence."""
        for i, req in enumerate(requests):
            yield i, self.complete(req)

    def streams_requests(self) -> bool:
        """Does :meth:`complete_many` take its requests as it goes (so the cached client can claim
        the next chunk while the current one is in flight)? False: it needs them all at once
        (a provider batch, a local model ordering them for prefix reuse)."""
        return False

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

    #: where state kept beside the request cache lives (model-file hashes, batch ids) and the
    #: cache's mode (``wal`` | ``shards``: how a state file there may be opened); None until bound
    state_dir: Path | None = None
    state_mode: str | None = None
    #: the job this backend answers for, as its log lines name it (set by the job's session)
    desc: str = "job"

    @classmethod
    def from_spec(cls, spec: dict, name: str = "model", *, need_key: bool = True) -> Backend:
        """The backend of model entry ``models.<name>`` (the registry, :mod:`judgelab.llm.backends`,
        calls it); ``need_key=False``: an API key is only needed at the first call."""
        raise NotImplementedError(f"{cls.__name__} cannot be built from a config entry")

    def bind_cache(self, cache: Any) -> None:
        """Called by :class:`~judgelab.llm.client.CachedClient` with its
        :class:`~judgelab.cache.store.RequestCache`: state beside the cache goes in its folder,
        opened as its mode allows."""
        self.bind_state(cache.path.parent, cache.mode)

    def bind_state(self, folder: str | Path, mode: str) -> None:
        """Keep state beside a request cache in ``folder`` whose mode is ``mode`` (``wal`` |
        ``shards``)."""
        self.state_dir, self.state_mode = Path(folder), mode

    def close(self) -> None:  # noqa: B027 (an optional hook: most backends hold nothing)
        """Release resources (models, connections)."""
