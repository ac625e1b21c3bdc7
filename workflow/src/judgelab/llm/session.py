"""The model session of one job (:class:`LLMSession`): the backend of a model entry, the cached
client in front of it on the job's request cache, and the usage line (calls, cache hits,
tokens, cost) the job logs when the session ends; closing it closes the backend and the cache
(so the cache's WAL is folded into its file)."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from judgelab import schema
from judgelab.cache.store import CacheConfig, open_cache
from judgelab.errors import InputError
from judgelab.llm.backends import make_backend
from judgelab.llm.client import CachedClient
from judgelab.llm.pricing import Prices

log = logging.getLogger("judgelab")


def model_spec(model: str | dict) -> dict:
    """A model entry as a dict (a rule's param carries it as its JSON text)."""
    return dict(json.loads(model) if isinstance(model, str) else model)


def _named(exc: InputError, name: str) -> InputError:
    """``exc`` with the placeholder ``<name>`` of a backend's config key (``models.<name>.n_ctx``)
    replaced by the model's key."""
    if exc.key and "<name>" in exc.key and name != "<name>":
        return InputError(exc.message, key=exc.key.replace("<name>", name))
    return exc


class LLMSession:
    """A backend and its cached client for one job; logs the usage line when it closes.
    ``cache``: a :class:`CacheConfig` (the workflow's scripts pass ``CacheConfig.of(snakemake.config)``)
    or a path. ``name``: the model's key in ``models`` (errors name ``models.<name>.…`` with it)."""

    def __init__(
        self,
        model: str | dict,
        cache: str | Path | CacheConfig | None,
        threads: int | None = None,
        desc: str = "job",
        name: str | None = None,
        interrupt_grace: float | None = None,
    ):
        self.spec = model_spec(model)
        if threads:  # the threads Snakemake granted: a cap on the model's own `threads` (default 1)
            self.spec["threads"] = min(int(threads), int(self.spec.get("threads") or 1))
        self.desc = desc
        self.name = name or self.spec.get("name") or "<name>"
        try:
            self.backend = make_backend(self.spec, self.name)
        except InputError as exc:
            raise _named(exc, self.name) from None
        self.backend.desc = desc
        if interrupt_grace is not None and hasattr(self.backend, "interrupt_grace"):
            self.backend.interrupt_grace = float(interrupt_grace)  # an API backend's requests in flight
        self.client = CachedClient(self.backend, open_cache(cache))
        self.t0 = time.perf_counter()

    def __enter__(self) -> CachedClient:
        return self.client

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.backend.close()
        finally:
            # the cache too: its WAL is folded into the named file (the file a user copies)
            self.client.cache.close()
        if exc_type is None:
            self.log_usage()
        elif isinstance(exc, InputError) and _named(exc, self.name) is not exc:
            raise _named(exc, self.name) from None

    def log_usage(self) -> None:
        """The job's calls, cache hits, tokens sent and (for priced models) their cost."""
        c = self.client
        prices = Prices.from_spec(self.spec, self.name)
        cost = ""
        if prices is not None:
            usd = prices.cost(
                c.prompt_tokens,
                c.completion_tokens,
                batch=bool(self.spec.get("batch", schema.default("models.<name>.batch"))),
            )
            cost = f", cost ${usd:.4f}"
        log.info(
            "%s: %d new calls, %d cache hits, tokens sent %d prompt + %d completion%s, %.1f s",
            self.desc,
            c.calls,
            c.hits,
            c.prompt_tokens,
            c.completion_tokens,
            cost,
            time.perf_counter() - self.t0,
        )


@dataclass(frozen=True)
class JobContext:
    """Where and as what a job runs, the same for every job of a run: its request cache (a
    :class:`~judgelab.cache.store.CacheConfig` - the workflow's scripts pass the config's cache
    keys - or a path; None: ``JUDGELAB_CACHE``, else the default path), the threads Snakemake
    granted it (a cap on a local model's own ``threads``), and the name its log lines and errors
    use (``desc``, e.g. ``judge dl21/smollm2/w_cot/default``)."""

    cache: CacheConfig | str | Path | None = None
    threads: int | None = None
    desc: str = "job"
    #: seconds an interrupted job waits for its API requests in flight (config key
    #: ``interrupt_grace``; None: the backend's default)
    interrupt_grace: float | None = None

    def session(self, spec: str | dict, name: str | None = None) -> LLMSession:
        """A model session for the model entry ``spec`` (``name``: its key in ``models``)."""
        return LLMSession(
            spec, self.cache, self.threads, self.desc, name=name, interrupt_grace=self.interrupt_grace
        )

    def named(self, desc: str) -> JobContext:
        """The same context under another name (a job with several model sessions)."""
        return JobContext(self.cache, self.threads, desc, self.interrupt_grace)
