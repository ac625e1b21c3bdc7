"""The job layer: one function per workflow job, organised by study.

The Snakemake adapters in ``workflow/scripts/`` and the CLI call these with plain paths and values,
so every stage can also run and be tested without Snakemake. Modules:

* :mod:`.datasets` - download and prepare a dataset table (shared by every study);
* :mod:`.personas` - the persona generation of seed 000 section 4.1 and the persona table;
* :mod:`.peras` - PERAS (seed 000): judgment, confidence, metrics, imported judges,
  significance, figures and the RQ3 classifiers.
* :mod:`.simulation` - evaluator simulation (seed 001, PersonaJudge): download, prepare and
  split, the two-round cascade per cell, baselines, metrics, statistics, figures, tables.
* :mod:`.perturbations` - perturbations (seed 004, section 3): samples, rewrites with the
  meaning check, insertions, re-judging, transitions, distributions and figures.

This module holds what every job shares: logging into the job's log file, the request cache of
a job (:class:`CacheConfig`: config keys ``cache``, ``cache_mode``, ``cache_lease``), building a
backend from a model entry, and the usage line (calls, cache hits, tokens, cost) of an LLM job.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .backends.base import CachedClient, make_backend
from .cache import RequestCache
from .errors import InputError
from .pricing import Prices

log = logging.getLogger("judgelab")


@contextlib.contextmanager
def script_logging(path: str | None) -> Iterator[None]:
    """Send logging and stderr (tqdm progress bars) of a job to its log file."""
    if not path:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
        yield
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", buffering=1, encoding="utf-8") as fh:
        old = sys.stderr
        sys.stderr = fh
        handler = logging.StreamHandler(fh)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        try:
            yield
        except BaseException:
            log.exception("job failed")
            raise
        finally:
            root.removeHandler(handler)
            sys.stderr = old


def as_value(v):
    """A param that may arrive as a JSON string (tracked params are strings) or as the value."""
    return json.loads(v) if isinstance(v, str) else v


@dataclass(frozen=True)
class CacheConfig:
    """Where a job's request cache is and how it opens: the config keys ``cache`` (the file),
    ``cache_mode`` (auto | wal | shards) and ``cache_lease`` (seconds a claim of a request in
    flight stays valid without renewal). The environment variables ``JUDGELAB_CACHE_MODE`` and
    ``JUDGELAB_CACHE_LEASE``, when set, override the two keys (one run on a cluster, without
    editing the config). None: the variable, else the cache's default (auto, 60 s)."""

    path: str | Path | None = None
    mode: str | None = None
    lease: float | None = None

    @classmethod
    def of(cls, config: Mapping) -> CacheConfig:
        """The request cache of a workflow job: ``snakemake.config``'s cache keys."""
        return cls(config.get("cache"), config.get("cache_mode"), config.get("cache_lease"))

    def open(self) -> RequestCache:
        mode = os.environ.get("JUDGELAB_CACHE_MODE") or self.mode
        # a set variable wins; RequestCache reads (and checks) it when no lease is given
        lease = None if os.environ.get("JUDGELAB_CACHE_LEASE") else self.lease
        return RequestCache(self.path, mode=mode, lease=lease)


def open_cache(cache: str | Path | CacheConfig | None) -> RequestCache:
    """A job's request cache: a :class:`CacheConfig`, or a path (None: ``JUDGELAB_CACHE``, else
    the default path) opened with the environment's mode and lease."""
    return (cache if isinstance(cache, CacheConfig) else CacheConfig(cache)).open()


def model_spec(model: str | dict) -> dict:
    return dict(as_value(model))


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
            usd = prices.cost(c.prompt_tokens, c.completion_tokens, batch=bool(self.spec.get("batch", False)))
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
