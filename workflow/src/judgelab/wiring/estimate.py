"""``judgelab estimate``: calls, tokens and cost of a configuration, before anything is spent.

The estimate builds the very requests the jobs would send, with the same builders
(:func:`~judgelab.llm.judging.judgment_requests`, :func:`~judgelab.llm.judging.confidence_requests`, the
persona-generation requests) and the same dataset tables, computes their cache keys with the
configured backends and looks them up in the request cache: a cached request is free.

* **Datasets.** In order: a table given on the command line (``--table dl19=path``); the prepared
  table ``{results}/datasets/{name}.tsv``, only when it was made for this config - Snakemake's
  record of the job that wrote it (``.snakemake/metadata``) holds the config's own selection and
  raw files, none newer than the table: what the workflow checks before reusing it -; the raw
  files, when they are local (``sample``, ``files``, or already downloaded), prepared in memory
  exactly as the prepare rule would; else, for the public datasets not downloaded yet, their
  known size with typical text lengths. The notes say which, and why a prepared table was passed
  over. The last case is flagged not ``exact``: texts are unknown, so no cache look-up is
  possible. A study with datasets of its own (the evaluator sets of ``simulation.datasets``)
  reads them likewise (``--table NAME=PATH`` names a file in the set's format) and flags a
  stand-in the same way.
* **Confidence** calls depend on the judged labels. Where the judgment is cached its label is
  known, and the confidence request is built exactly (and looked up); an unparsable cached label
  asks nothing. Where it is not, the pair is counted as asked (an upper bound).
* **Tokens**: no provider tokenizer runs here, so input tokens are estimated as characters / 4
  plus 4 per message and 3 per request; output tokens are bounded by ``max_tokens``. Cost =
  input tokens x input price + output bound x output price (x ``batch_factor`` in batch mode).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab import schema
from judgelab.cache.keys import request_key
from judgelab.cache.store import CacheConfig, RequestCache
from judgelab.data.prepare import prepare_table
from judgelab.data.tables import read_dataset
from judgelab.errors import InputError
from judgelab.llm.backends import capabilities, make_backend
from judgelab.llm.backends.api import api_key_envvars
from judgelab.llm.backends.base import Backend, Request
from judgelab.llm.client import cache_request
from judgelab.llm.personas import persona_instruction_request, persona_keywords_request
from judgelab.llm.pricing import Prices
from judgelab.project.plan import LLMJob
from judgelab.project.records import made_for
from judgelab.wiring.facade import Project

#: Judged pairs of the full public datasets (TREC DL passage qrels; LLMJudge test qrels) and the
#: mean query / passage length in characters, measured on the full files. LLMJudge passages are
#: MS MARCO v2 segments like DL21's, so DL21's passage length stands in for them.
KNOWN_DATASETS: dict[str, tuple[int, float, float]] = {
    "dl19": (9260, 32.8, 338.8),
    "dl20": (11386, 33.4, 331.3),
    "dl21": (10828, 49.0, 295.7),
    "llmjudge": (4423, 37.2, 295.7),
}
#: The same for the other qrels of a source (``datasets.<name>.split``): LLMJudge's dev qrels.
KNOWN_SPLITS: dict[tuple[str, str], tuple[int, float, float]] = {
    ("llmjudge", "dev"): (7263, 37.2, 295.7),
}

TOKEN_NOTE = (
    "input tokens ~ characters/4 + 4 per message + 3 per request (no provider "
    "tokenizer here); output tokens are the max_tokens bound"
)


# -- datasets -----------------------------------------------------------------------------------


@dataclass
class PairSource:
    """The pairs of one dataset for an estimate, and where they came from."""

    name: str
    pairs: pd.DataFrame
    how: str
    exact: bool  # real texts (False: known size, typical lengths; no cache look-up)


def dataset_pairs(
    project: Project, name: str, *, directory: Path, table: str | Path | None = None
) -> PairSource:
    """The pairs of dataset ``name`` as the prepare job would write them."""
    d = project.dataset(name)
    if table is not None:
        return PairSource(name, read_dataset(table), f"table {table}", True)
    prepared = directory / project.table(name)
    files = project.raw_files(name)
    passed = ""
    if prepared.exists():
        why = made_for(
            directory,
            project.table(name),
            project.selection(name),
            project.inputs_of(files).values(),
            project.bundled_of(files),
        )
        if why is None:
            return PairSource(name, read_dataset(prepared), f"prepared table {prepared}", True)
        passed = f" (prepared table {prepared} not used: {why})"
    raw = {k: Path(p) if Path(p).is_absolute() else directory / p for k, p in files.items()}
    if all(p.exists() for p in raw.values()):
        _, pairs = prepare_table(name, project.selection(name), raw["qrels"], raw["topics"], raw.get("texts"))
        return PairSource(name, pairs, f"raw files ({d['source']}), prepared in memory{passed}", True)
    known = KNOWN_SPLITS.get((name, d["split"])) if d.get("split") else KNOWN_DATASETS.get(name)
    if known is None:
        raise InputError(
            f"dataset {name!r} is neither prepared for this config ({prepared}{passed}) nor are "
            "its raw files here; prepare it first or pass --table",
            key=f"datasets.{name}",
        )
    n, q_chars, p_chars = known
    subset = any(d.get(k) for k in ("queries", "exclude_queries", "match_counts", "max_queries", "per_grade"))
    pairs = pd.DataFrame(
        {
            "dataset": name,
            "qid": [f"q{i}" for i in range(n)],
            "query": "x" * round(q_chars),
            "docid": [f"d{i}" for i in range(n)],
            "passage": "x" * round(p_chars),
            "grade": 0,
        }
    )
    how = (
        f"not downloaded yet: known size {n:,} pairs, typical lengths (query {q_chars:g}, "
        f"passage {p_chars:g} chars)"
        + ("; its subset keys are not applied (upper bound)" if subset else "")
        + passed
    )
    return PairSource(name, pairs, how, False)


# -- counting -----------------------------------------------------------------------------------


def approx_tokens(request: Request) -> int:
    """Input tokens of a chat request, ~ characters / 4 (+ 4 per message, + 3 per request)."""
    return sum(math.ceil(len(content) / 4) + 4 for _, content in request.messages) + 3


@dataclass
class Tally:
    jobs: int = 0
    calls: int = 0
    cached: int = 0
    input_tokens: int = 0  # of the calls still to send
    output_tokens_max: int = 0  # of the calls still to send

    def add(self, request: Request, cached: bool) -> None:
        self.calls += 1
        if cached:
            self.cached += 1
        else:
            self.input_tokens += approx_tokens(request)
            self.output_tokens_max += request.max_tokens


class EstimateContext:
    """What a study's :meth:`~judgelab.project.plan.StudyPlan.requests` needs: dataset pairs, persona
    texts and cache look-ups (the cache file is only read)."""

    def __init__(
        self,
        project: Project,
        directory: Path,
        tables: Mapping[str, str | Path],
        cache: RequestCache | None,
        backends: Mapping[str, Backend],
        notes: list[str],
    ):
        self.project, self.directory, self.tables = project, directory, tables
        self.cache, self.backends, self.notes = cache, backends, notes
        self._pairs: dict[str, PairSource] = {}
        self._approx: set[str] = set()
        #: a study's inputs loaded once per estimate (key: the study's name)
        self.memo: dict[str, Any] = {}

    def pairs(self, dataset: str) -> PairSource:
        if dataset not in self._pairs:
            src = dataset_pairs(
                self.project, dataset, directory=self.directory, table=self.tables.get(dataset)
            )
            self._pairs[dataset] = src
            self.notes.append(f"{src.name}: {len(src.pairs):,} pairs from {src.how}")
        return self._pairs[dataset]

    def exact(self, dataset: str) -> bool:
        if dataset in self._approx:
            return False
        return self._pairs[dataset].exact if dataset in self._pairs else True

    def approximate(self, dataset: str, note: str) -> None:
        """A study's own dataset stands in by its known size: its rows are flagged not exact."""
        self._approx.add(dataset)
        self.notes.append(note)

    def persona_text(self, pid: str) -> str:
        text = self.project.persona_text(pid)
        if text is None:
            self.notes.append(f"persona {pid}: not generated yet, its paper instruction stands in")
            return self.project.personas[pid].instruction
        return text

    def cached(self, model: str, request: Request) -> dict | None:
        """The cached answer of ``request`` to ``model`` (None: not cached, or no cache)."""
        if self.cache is None:
            return None
        return self.cache.get(request_key(cache_request(self.backends[model], request)))


def _generation_requests(project: Project, job: LLMJob, ctx: EstimateContext):
    """The two requests of one persona generation (step 2 built on the cached step-1 answer)."""
    gen = project.generation
    ptype = project.personas[job.wc["persona"]].personality_type
    step1 = persona_keywords_request(
        ptype, project.load_template(gen["keywords_template"]), max_tokens=int(gen["max_tokens"])
    )
    hit = ctx.cached(job.model, step1)
    yield "personas", step1, hit is not None
    keywords = hit["text"].strip() if hit else "k" * (4 * int(gen["max_tokens"]))
    step2 = persona_instruction_request(
        ptype, keywords, project.load_template(gen["instruction_template"]), max_tokens=int(gen["max_tokens"])
    )
    yield "personas", step2, hit is not None and ctx.cached(job.model, step2) is not None


def estimate(
    project: Project,
    *,
    cache_path: str | Path | None = None,
    directory: str | Path = ".",
    tables: Mapping[str, str | Path] | None = None,
    models: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """One row per dataset x model x stage of the LLM jobs the workflow schedules
    (:meth:`judgelab.wiring.facade.Project.llm_jobs`): jobs, calls, cached, to_send, input_tokens,
    output_tokens_max, cost_usd. Each study builds its jobs' requests (``Plan.requests``) with the
    builders its jobs use. ``models``: only these models (default: every model the run calls).
    Returns the table and notes on how it was made."""
    directory = Path(directory)
    llm_jobs = project.llm_jobs()
    used = list(dict.fromkeys(j.model for j in llm_jobs))
    chosen = list(models) if models else used
    missing = [m for m in chosen if m not in project.config["models"]]
    if missing:
        raise InputError(
            f"--model names models not in the config: {missing}; "
            f"configured: {list(project.config['models'])}",
            key="models",
        )
    tables = dict(tables or {})
    own = [d for s in project.studies for d in project.plan(s).own_datasets]
    unknown = sorted(set(tables) - set(project.datasets) - set(own))
    if unknown:
        raise InputError(f"--table names datasets not in the config: {unknown}", key="datasets")
    cache_file = Path(cache_path) if cache_path else directory / project.cache
    cache_config = CacheConfig(cache_file, project.config["cache_mode"], project.config["cache_lease"])
    cache = cache_config.open() if cache_file.exists() else None
    notes = [TOKEN_NOTE, f"cache: {cache_file}" + ("" if cache else " (absent: nothing is cached)")]
    notes += [f"model {m}: no job of this configuration calls it" for m in chosen if m not in used]
    backends: dict[str, Backend] = {}
    tallies: dict[tuple[str, str, str], Tally] = {}
    try:
        for name in chosen:
            backends[name] = make_backend(dict(project.config["models"][name]), name, need_key=False)
        ctx = EstimateContext(project, directory, tables, cache, backends, notes)
        for job in llm_jobs:
            if job.model not in backends:
                continue
            if job.rule == "generate_persona":
                requests = _generation_requests(project, job, ctx)
            else:
                requests = project.plan(job.study).requests(job, ctx)
            dataset = job.wc.get("dataset", "-")
            counted = set()
            for stage, req, cached in requests:
                t = tallies.setdefault((dataset, job.model, stage), Tally())
                if stage not in counted:
                    t.jobs += 1
                    counted.add(stage)
                t.add(req, cached)
    finally:
        for b in backends.values():
            b.close()
        if cache is not None:
            cache.close()
    rows = [
        _row(d, m, stage, t, project.config["models"][m], ctx.exact(d))
        for (d, m, stage), t in tallies.items()
    ]
    table = pd.DataFrame(rows, columns=ROW_COLUMNS)
    for env in api_key_envvars({"models": {m: project.config["models"][m] for m in chosen}}):
        notes.append(f"API key variable {env}: {'set' if os.environ.get(env) else 'NOT SET'}")
    return table, list(dict.fromkeys(notes))


ROW_COLUMNS = [
    "dataset",
    "model",
    "stage",
    "jobs",
    "calls",
    "cached",
    "to_send",
    "input_tokens",
    "output_tokens_max",
    "cost_usd",
    "batch",
    "exact",
]


def _row(dataset: str, model: str, stage: str, t: Tally, spec: Mapping[str, Any], exact: bool) -> dict:
    prices = Prices.from_spec(spec, model)
    batch = bool(spec.get("batch", schema.default("models.<name>.batch")))
    cost = prices.cost(t.input_tokens, t.output_tokens_max, batch=batch) if prices else None
    return {
        "dataset": dataset,
        "model": model,
        "stage": stage,
        "jobs": t.jobs,
        "calls": t.calls,
        "cached": t.cached,
        "to_send": t.calls - t.cached,
        "input_tokens": t.input_tokens,
        "output_tokens_max": t.output_tokens_max,
        "cost_usd": cost if prices else (None if capabilities(spec.get("backend")).priced else 0.0),
        "batch": batch,
        "exact": exact,
    }


def format_report(table: pd.DataFrame, notes: Iterable[str]) -> str:
    """The estimate as text: per-row table, totals per model, notes."""
    lines = ["judgelab estimate (nothing is sent)", ""]
    if table.empty:  # no per-row table, no totals: 0 requests
        lines += ["(no LLM job in this configuration: 0 requests, 0 to send, cost 0)", "", "notes:"]
        return "\n".join([*lines, *(f"  - {n}" for n in notes)])
    shown = table.copy()
    shown["cost_usd"] = shown["cost_usd"].map(
        lambda c: "no prices" if c is None or pd.isna(c) else f"{c:,.2f}"
    )
    for col in ("jobs", "calls", "cached", "to_send", "input_tokens", "output_tokens_max"):
        shown[col] = shown[col].map(lambda v: f"{v:,}")
    lines.append(shown.to_string(index=False))
    lines.append("")
    totals = table.groupby("model", sort=False).agg(
        calls=("calls", "sum"),
        cached=("cached", "sum"),
        to_send=("to_send", "sum"),
        input_tokens=("input_tokens", "sum"),
        output_tokens_max=("output_tokens_max", "sum"),
        cost_usd=("cost_usd", lambda c: None if c.isna().any() else c.sum()),
    )
    lines.append("totals per model:")
    for model, r in totals.iterrows():
        cost = "no prices" if r.cost_usd is None or pd.isna(r.cost_usd) else f"${r.cost_usd:,.2f}"
        lines.append(
            f"  {model}: {int(r.calls):,} calls, {int(r.cached):,} cached (free), "
            f"{int(r.to_send):,} to send, ~{int(r.input_tokens):,} input tokens, "
            f"<= {int(r.output_tokens_max):,} output tokens, cost <= {cost}"
        )
    lines.append("")
    lines.append("notes:")
    lines.extend(f"  - {n}" for n in notes)
    return "\n".join(lines)
