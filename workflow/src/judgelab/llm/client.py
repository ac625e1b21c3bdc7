"""The request cache in front of any backend: :class:`CachedClient` answers from the cache where
it can, claims and sends only the misses, and stores each answer the moment it arrives;
:func:`cache_request` is what a cache key is made of."""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tqdm import tqdm

from judgelab.cache.keys import canonical, request_key
from judgelab.cache.sqlite import CacheError
from judgelab.cache.store import RequestCache
from judgelab.llm.backends.base import Backend, Completion, Request

log = logging.getLogger(__name__)


def cache_request(backend: Backend, request: Request) -> dict:
    """What the cache key is made of. ``label_steps`` enters only when requested, so the keys (and
    cached answers) of requests without it are those of earlier versions; a request with it never
    hits an entry cached without the steps (an old entry cannot pass its first-position reading
    off as the label token's), and its own entries carry the steps wherever the backend can read
    them (None where it cannot: Anthropic, a server refusing logprobs), so a hit gives the same
    numbers as the call. ``sample`` (a repeated request's index) enters likewise only above 0: sample
    0 has the key every request had before repeats, and samples 1..k-1 are entries of their own."""
    out = {
        "backend": backend.identity(),
        "sampling": backend.sampling(),
        "max_tokens": request.max_tokens,
        "label_tokens": list(request.label_tokens),
        "messages": request.message_dicts(),
    }
    if request.label_steps:
        out["label_steps"] = True
    if request.sample:
        out["sample"] = int(request.sample)
    return out


def decoding(backend: Backend, request: Request) -> str:
    """The decoding parameters a request is answered with, as a judgment row records them:
    ``key=value`` pairs, keys sorted (``max_tokens=1 temperature=0.0 top_p=1.0``), of the answer
    bound and the backend's sampling parameters of the cache key (:func:`cache_request`), those not
    sent (None) left out; a value that is not a number or a word (``extra_body``) as canonical
    JSON."""
    sent = {k: v for k, v in backend.sampling().items() if v is not None}
    items = sorted({"max_tokens": request.max_tokens, **sent}.items())
    return " ".join(
        f"{k}={v}"
        if isinstance(v, (int, float, bool)) or (isinstance(v, str) and v.isidentifier())
        else f"{k}={canonical(v)}"
        for k, v in items
    )


class _Progress:
    """The stream a progress bar writes to (the job's stderr: its log file), minus its write errors:
    a full disk under the log must not stop a job that holds answers it has paid for."""

    def __init__(self, stream: Any):
        self.stream = stream

    def write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.stream.write(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.stream.flush()


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

    def decoding(self, request: Request) -> str:
        """:func:`decoding` of ``request`` on this client's backend."""
        return decoding(self.backend, request)

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
            bar = tqdm(
                total=len(misses),
                desc=desc,
                disable=not progress,
                mininterval=2.0,
                unit="call",
                file=_Progress(sys.stderr),
            )
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
        found: deque[tuple[str, Completion, bool]] = deque()  # answered by others while claiming
        delay, told = self.poll_min, 0.0

        def claim_next() -> list[str]:
            """Claim the next chunk of the queue: the keys now this client's to send; the keys
            answered meanwhile go to ``found``, those another process holds to ``waiting``."""
            while queue:
                look = [queue.popleft() for _ in range(min(len(queue), max(chunk, 64)))]
                got = self.cache.claim(look, limit=chunk)
                queue.extendleft(reversed(got.rest))
                waiting.update(got.busy)
                found.extend((k, Completion.from_json(r), False) for k, r in got.answered.items())
                if got.mine:
                    return got.mine
            return []

        while queue or waiting:
            if queue:
                mine = claim_next()
            else:
                got = self.cache.claim(list(waiting), limit=chunk)
                for k in [*got.answered, *got.mine]:
                    waiting.pop(k, None)
                waiting.update(got.busy)
                found.extend((k, Completion.from_json(r), False) for k, r in got.answered.items())
                mine = got.mine
            answered = bool(found)
            while found:
                yield found.popleft()
            if mine:
                delay = self.poll_min
                # a backend that takes its requests as its workers free up (online API) gets the
                # next chunks claimed as it reaches them, so no chunk drains before the next starts
                more = claim_next if self.backend.streams_requests() else None
                for item in self._send(mine, requests, keyed, where, more):
                    yield item
                    while found:
                        yield found.popleft()
                while found:
                    yield found.popleft()
            elif answered:
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
        more: Callable[[], list[str]] | None = None,
    ) -> Iterator[tuple[str, Completion, bool]]:
        """Send the claimed ``keys``, store each answer as it arrives; release the claims after (also
        on error: the requests not answered are then free for another process). ``more``: claims
        the next keys when the backend has taken every key so far (``[]``: none left); the claims
        of the keys answered by then are released at that point."""
        claimed, sent, done = list(keys), [], set()
        stopping = False  # answers are being lost (no place takes them): start no new request
        #: an error claiming the next keys (raised inside the backend's loop it would be lost there):
        #: no new request; raised once the requests in flight are answered and stored
        failed: list[CacheError] = []

        def feed() -> Iterator[Request]:
            batch = keys
            while batch:
                for k in batch:
                    if stopping:
                        return
                    sent.append(k)
                    yield requests[where[k][0]]
                if more is None:
                    return
                answered = [k for k in claimed if k in done]
                if answered:
                    self.cache.release(answered)
                    claimed[:] = [k for k in claimed if k not in done]
                try:
                    batch = more()
                except CacheError as exc:
                    failed.append(exc)
                    return
                claimed.extend(batch)

        try:
            stream = feed() if more is not None else list(feed())
            answers = self.backend.complete_many(stream)
            for j, completion in answers:
                key = sent[j]
                req = keyed[where[key][0]][1]
                try:
                    self.cache.put(key, req, completion.to_json())
                except CacheError:
                    if more is None:  # a local model (free) or a provider batch (resumed by a rerun)
                        raise
                    # the wait for space ended: no new request; the answers of those in flight
                    # (paid too) are held with the rest, so the error counts every one lost
                    stopping = True
                    for j2, late in answers:
                        self.cache.put(sent[j2], keyed[where[sent[j2]][0]][1], late.to_json())
                    raise self.cache.lost_error() from None
                done.add(key)
                yield key, completion, True
            if failed:
                raise failed[0]
        finally:
            self.cache.release(claimed)
