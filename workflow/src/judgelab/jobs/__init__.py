"""The job layer: one function per workflow job, organised by study.

The Snakemake adapters in ``workflow/scripts/`` and the CLI call these with plain paths and values,
so every stage can also run and be tested without Snakemake. Modules:

* :mod:`.datasets` - download and prepare a dataset table (shared by every study);
* :mod:`.personas` - the persona generation of seed 000 section 4.1 and the persona table;
* :mod:`.peras` - PERAS (seed 000): judgment, confidence, metrics, imported judges,
  significance, figures and the RQ3 classifiers.
* :mod:`.perturbations` - perturbations (seed 004, section 3): samples, rewrites with the
  meaning check, insertions, re-judging, transitions, distributions and figures.

This module holds what every job shares: logging into the job's log file, building a backend
from a model entry, and the usage line (calls, cache hits, tokens, cost) of an LLM job.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import time
from pathlib import Path
from typing import Iterator

from ..backends.base import CachedClient, make_backend
from ..cache import RequestCache
from ..pricing import Prices

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


def model_spec(model: str | dict) -> dict:
    return dict(as_value(model))


class LLMSession:
    """A backend and its cached client for one job; logs the usage line when it closes."""

    def __init__(self, model: str | dict, cache: str | Path | None, threads: int | None = None,
                 desc: str = "job"):
        self.spec = model_spec(model)
        if threads:
            self.spec["threads"] = int(threads)
        self.desc = desc
        self.backend = make_backend(self.spec, self.spec.get("name", "<name>"))
        self.client = CachedClient(self.backend, RequestCache(cache))
        self.t0 = time.perf_counter()

    def __enter__(self) -> CachedClient:
        return self.client

    def __exit__(self, exc_type, exc, tb) -> None:
        self.backend.close()
        if exc_type is None:
            self.log_usage()

    def log_usage(self) -> None:
        """The job's calls, cache hits, tokens sent and (for priced models) their cost."""
        c = self.client
        prices = Prices.from_spec(self.spec, self.spec.get("name", "<name>"))
        cost = ""
        if prices is not None:
            usd = prices.cost(c.prompt_tokens, c.completion_tokens, batch=bool(self.spec.get("batch", False)))
            cost = f", cost ${usd:.4f}"
        log.info("%s: %d new calls, %d cache hits, tokens sent %d prompt + %d completion%s, %.1f s",
                 self.desc, c.calls, c.hits, c.prompt_tokens, c.completion_tokens, cost,
                 time.perf_counter() - self.t0)
