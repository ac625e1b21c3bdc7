"""``judgelab estimate``: calls, tokens and cost of a configuration, before anything is spent.

The estimate builds the very requests the jobs would send, with the same builders
(:func:`~judgelab.judging.judgment_requests`, :func:`~judgelab.judging.confidence_requests`, the
persona-generation requests) and the same dataset tables, computes their cache keys with the
configured backends and looks them up in the request cache: a cached request is free.

* **Datasets.** In order: a table given on the command line (``--table dl19=path``); the prepared
  table ``{results}/datasets/{name}.tsv``; the raw files, when they are local (``sample``,
  ``files``, or already downloaded), prepared in memory exactly as the prepare rule would; else,
  for the public datasets not downloaded yet, their known size with typical text lengths. The
  last case is flagged ``approx``: texts are unknown, so no cache look-up is possible.
* **Confidence** calls depend on the judged labels. Where the judgment is cached its label is
  known, and the confidence request is built exactly (and looked up); an unparsable cached label
  asks nothing. Where it is not, the pair is counted as asked (an upper bound).
* **Tokens**: no provider tokenizer runs here, so input tokens are estimated as characters / 4
  plus 4 per message and 3 per request; output tokens are bounded by ``max_tokens``. Cost =
  input tokens x input price + output bound x output price (x ``batch_factor`` in batch mode).
"""

from __future__ import annotations

import copy
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd
import yaml

from . import datasets as ds
from .backends.api import api_key_envvars
from .backends.base import Backend, Request, cache_request, make_backend
from .cache import RequestCache, request_key
from .errors import InputError
from .judging import (confidence_requests, judgment_requests, persona_instruction_request,
                      persona_keywords_request)
from .personas import read_generated, resolve_personas
from .pricing import Prices
from .prompts import load_template, parse_label
from .resources import resources_dir

#: Judged pairs of the full public datasets (TREC DL passage qrels; LLMJudge test qrels) and the
#: mean query / passage length in characters, measured on the full files. LLMJudge passages are
#: MS MARCO v2 segments like DL21's, so DL21's passage length stands in for them.
KNOWN_DATASETS: dict[str, tuple[int, float, float]] = {
    "dl19": (9260, 32.8, 338.8),
    "dl20": (11386, 33.4, 331.3),
    "dl21": (10828, 49.0, 295.7),
    "llmjudge": (4423, 37.2, 295.7),
}

TOKEN_NOTE = ("input tokens ~ characters/4 + 4 per message + 3 per request (no provider "
              "tokenizer here); output tokens are the max_tokens bound")

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"


# -- configuration ------------------------------------------------------------------------------

def _merge(base: dict, over: Mapping) -> dict:
    """Snakemake's merge of config files: mappings merge key by key, anything else replaces."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), dict) \
            else copy.deepcopy(v)
    return out


def load_config(configfiles: Sequence[str | Path] = (), directory: str | Path = ".") -> dict:
    """The configuration a ``snakemake -d DIRECTORY --configfile F...`` run would see:
    ``DIRECTORY/config/config.yaml`` (the Snakefile's ``configfile:``) with each file merged over
    it, validated against the workflow's schema."""
    directory = Path(directory)
    files = [p for p in [directory / "config" / "config.yaml"] if p.exists()]
    files += [Path(f) if Path(f).is_absolute() or Path(f).exists() else directory / f for f in configfiles]
    config: dict = {}
    for f in files:
        if not f.exists():
            raise InputError("config file does not exist", path=str(f))
        try:
            data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise InputError(f"invalid YAML: {exc}", path=str(f),
                             line=(mark.line + 1) if mark else None) from None
        config = _merge(config, data)
    if not config:
        raise InputError(f"no configuration: neither {directory / 'config' / 'config.yaml'} nor "
                         "a --configfile")
    validate_config(config)
    return config


def validate_config(config: dict) -> None:
    """Check a config against the workflow's schema; the error names the offending key."""
    import jsonschema

    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(config),
                    key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        raise InputError(e.message, key=".".join(str(p) for p in e.absolute_path) or "(top level)")


# -- datasets -----------------------------------------------------------------------------------

@dataclass
class PairSource:
    """The pairs of one dataset for an estimate, and where they came from."""

    name: str
    pairs: pd.DataFrame
    how: str
    exact: bool  # real texts (False: known size, typical lengths; no cache look-up)


def _raw_files(name: str, d: Mapping[str, Any], results: Path, directory: Path) -> dict | None:
    """The raw files the prepare rule would read, when they are on this machine."""
    if d["source"] == "sample":
        folder = directory / "resources" / "sample" / name
        if not folder.exists():
            folder = resources_dir() / "sample" / name
        ext = "jsonl" if d["format"] == "llmjudge" else "tsv"
        files = {"qrels": folder / "qrels.txt", "topics": folder / "topics.txt",
                 "texts": folder / f"texts.{ext}"}
    elif d["source"] == "download":
        files = {k: results / "raw" / name / f"{k}.raw" for k in ("qrels", "topics", "texts")}
    else:
        files = {k: Path(d[k]) if Path(d[k]).is_absolute() else directory / d[k]
                 for k in ("qrels", "topics", "texts") if d.get(k)}
    return files if len(files) == 3 and all(p.exists() for p in files.values()) else None


def dataset_pairs(name: str, d: Mapping[str, Any], *, results: Path, directory: Path,
                  table: str | Path | None = None) -> PairSource:
    if table is not None:
        return PairSource(name, ds.read_table(table), f"table {table}", True)
    prepared = results / "datasets" / f"{name}.tsv"
    if prepared.exists():
        return PairSource(name, ds.read_table(prepared), f"prepared table {prepared}", True)
    raw = _raw_files(name, d, results, directory)
    if raw is not None:
        docid_map = d.get("docid_map")
        full = ds.build_table(name, d["format"], raw["qrels"], raw["topics"], raw["texts"], docid_map)
        pairs = ds.select(full, queries=[str(q) for q in d.get("queries") or []],
                          max_queries=d.get("max_queries"), per_grade=d.get("per_grade"),
                          seed=int(d.get("seed") or 0))
        return PairSource(name, pairs, f"raw files ({d['source']}), prepared in memory", True)
    if name not in KNOWN_DATASETS:
        raise InputError(f"dataset {name!r} is neither prepared ({prepared}) nor are its raw files "
                         "here; prepare it first or pass --table", key=f"datasets.{name}")
    n, q_chars, p_chars = KNOWN_DATASETS[name]
    subset = any(d.get(k) for k in ("queries", "max_queries", "per_grade"))
    pairs = pd.DataFrame({"dataset": name, "qid": [f"q{i}" for i in range(n)],
                          "query": "x" * round(q_chars), "docid": [f"d{i}" for i in range(n)],
                          "passage": "x" * round(p_chars), "grade": 0})
    how = (f"not downloaded yet: known size {n:,} pairs, typical lengths (query {q_chars:g}, "
           f"passage {p_chars:g} chars)" + ("; its subset keys are not applied (upper bound)"
                                             if subset else ""))
    return PairSource(name, pairs, how, False)


# -- counting -----------------------------------------------------------------------------------

def approx_tokens(request: Request) -> int:
    """Input tokens of a chat request, ~ characters / 4 (+ 4 per message, + 3 per request)."""
    return sum(math.ceil(len(content) / 4) + 4 for _, content in request.messages) + 3


@dataclass
class Tally:
    calls: int = 0
    cached: int = 0
    input_tokens: int = 0      # of the calls still to send
    output_tokens_max: int = 0  # of the calls still to send

    def add(self, request: Request, cached: bool) -> None:
        self.calls += 1
        if cached:
            self.cached += 1
        else:
            self.input_tokens += approx_tokens(request)
            self.output_tokens_max += request.max_tokens


class _Lookup:
    """Cache look-ups for one backend (none when the cache file does not exist yet)."""

    def __init__(self, backend: Backend, cache: RequestCache | None):
        self.backend, self.cache = backend, cache

    def get(self, request: Request) -> dict | None:
        if self.cache is None:
            return None
        return self.cache.get(request_key(cache_request(self.backend, request)))


def estimate(config: dict, *, cache_path: str | Path | None = None, directory: str | Path = ".",
             tables: Mapping[str, str | Path] | None = None,
             models: Sequence[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """One row per dataset x model x stage (judge, confidence, personas): calls, cached, to_send,
    input_tokens, output_tokens_max, cost_usd. ``models``: only these models (default: all).
    Returns the table and notes on how it was made."""
    directory = Path(directory)
    chosen = list(models) if models else list(config["models"])
    missing = [m for m in chosen if m not in config["models"]]
    if missing:
        raise InputError(f"--model names models not in the config: {missing}; "
                         f"configured: {list(config['models'])}", key="models")
    results = directory / config["results"]
    tables = dict(tables or {})
    unknown = sorted(set(tables) - set(config["datasets"]))
    if unknown:
        raise InputError(f"--table names datasets not in the config: {unknown}", key="datasets")
    cache_file = Path(cache_path) if cache_path else directory / config["cache"]
    cache = RequestCache(cache_file) if cache_file.exists() else None
    notes = [TOKEN_NOTE, f"cache: {cache_file}" + ("" if cache else " (absent: nothing is cached)")]

    personas = resolve_personas(config)
    pcfg = config["personas"]
    gen = pcfg["generation"]
    placement = pcfg["placement"]
    generated_ids = [p for p, pers in personas.items() if pers.origin == "paper" and pers.instruction.strip()]

    def persona_text(pid: str) -> str:
        if pcfg["source"] == "generated" and pid in generated_ids:
            f = results / "personas" / "generated" / gen["model"] / f"{pid}.json"
            if f.exists():
                return read_generated(f)["instruction"]
            notes.append(f"persona {pid}: not generated yet, its paper instruction stands in")
        return personas[pid].instruction

    templates = {t: load_template(s["template"]) for t, s in config["templates"].items()}
    conf_template = load_template(config["confidence"]["template"])
    conf_max = int(config["confidence"]["max_tokens"])

    backends: dict[str, Backend] = {}
    rows: list[dict] = []
    try:
        for name in chosen:
            backends[name] = make_backend(dict(config["models"][name]), name, need_key=False)
        sources = [dataset_pairs(n, d, results=results, directory=directory, table=tables.get(n))
                   for n, d in config["datasets"].items()]
        for src in sources:
            notes.append(f"{src.name}: {len(src.pairs):,} pairs from {src.how}")
        for name in chosen:
            spec = config["models"][name]
            lookup = _Lookup(backends[name], cache)
            for src in sources:
                judge, conf = Tally(), Tally()
                for t, spec_t in config["templates"].items():
                    for pid in personas:
                        text = persona_text(pid)
                        reqs = judgment_requests(src.pairs, text, templates[t],
                                                 max_tokens=int(spec_t["max_tokens"]),
                                                 placement=placement)
                        asked_rows, labels, upper = [], [], []
                        for i, req in enumerate(reqs):
                            hit = lookup.get(req) if src.exact else None
                            judge.add(req, hit is not None)
                            if hit is None:
                                upper.append(i)  # label unknown: counted as asked
                            else:
                                label = parse_label(hit["text"])
                                if label is not None:
                                    asked_rows.append(i)
                                    labels.append(label)
                        for req in confidence_requests(src.pairs.iloc[asked_rows], labels, text,
                                                       conf_template, max_tokens=conf_max,
                                                       placement=placement):
                            conf.add(req, lookup.get(req) is not None)
                        for req in confidence_requests(src.pairs.iloc[upper], [0] * len(upper), text,
                                                       conf_template, max_tokens=conf_max,
                                                       placement=placement):
                            conf.add(req, False)
                rows.append(_row(src.name, name, "judge", judge, spec, src.exact))
                rows.append(_row(src.name, name, "confidence", conf, spec, src.exact))
        if (gen["enabled"] or pcfg["source"] == "generated") and gen["model"] in chosen:
            name = gen["model"]
            lookup = _Lookup(backends[name], cache)
            tally = Tally()
            for pid in generated_ids:
                ptype = personas[pid].personality_type
                step1 = persona_keywords_request(ptype, load_template(gen["keywords_template"]),
                                                 max_tokens=int(gen["max_tokens"]))
                hit = lookup.get(step1)
                tally.add(step1, hit is not None)
                keywords = hit["text"].strip() if hit else "k" * (4 * int(gen["max_tokens"]))
                step2 = persona_instruction_request(ptype, keywords,
                                                    load_template(gen["instruction_template"]),
                                                    max_tokens=int(gen["max_tokens"]))
                tally.add(step2, hit is not None and lookup.get(step2) is not None)
            rows.append(_row("-", name, "personas", tally, config["models"][name], True))
    finally:
        for b in backends.values():
            b.close()
        if cache is not None:
            cache.close()
    table = pd.DataFrame(rows)
    for env in api_key_envvars({"models": {m: config["models"][m] for m in chosen}}):
        notes.append(f"API key variable {env}: {'set' if os.environ.get(env) else 'NOT SET'}")
    return table, list(dict.fromkeys(notes))


def _row(dataset: str, model: str, stage: str, t: Tally, spec: Mapping[str, Any], exact: bool) -> dict:
    prices = Prices.from_spec(spec, model)
    batch = bool(spec.get("batch", False))
    cost = prices.cost(t.input_tokens, t.output_tokens_max, batch=batch) if prices else None
    return {"dataset": dataset, "model": model, "stage": stage, "calls": t.calls, "cached": t.cached,
            "to_send": t.calls - t.cached, "input_tokens": t.input_tokens,
            "output_tokens_max": t.output_tokens_max,
            "cost_usd": cost if prices else (0.0 if spec.get("backend") == "local" else None),
            "batch": batch, "exact": exact}


def format_report(table: pd.DataFrame, notes: Iterable[str]) -> str:
    """The estimate as text: per-row table, totals per model, notes."""
    lines = ["judgelab estimate (nothing is sent)", ""]
    shown = table.copy()
    shown["cost_usd"] = shown["cost_usd"].map(lambda c: "no prices" if c is None or pd.isna(c)
                                              else f"{c:,.2f}")
    for col in ("calls", "cached", "to_send", "input_tokens", "output_tokens_max"):
        shown[col] = shown[col].map(lambda v: f"{v:,}")
    lines.append(shown.to_string(index=False))
    lines.append("")
    totals = table.groupby("model", sort=False).agg(
        calls=("calls", "sum"), cached=("cached", "sum"), to_send=("to_send", "sum"),
        input_tokens=("input_tokens", "sum"), output_tokens_max=("output_tokens_max", "sum"),
        cost_usd=("cost_usd", lambda c: None if c.isna().any() else c.sum()))
    lines.append("totals per model:")
    for model, r in totals.iterrows():
        cost = "no prices" if r.cost_usd is None or pd.isna(r.cost_usd) else f"${r.cost_usd:,.2f}"
        lines.append(f"  {model}: {int(r.calls):,} calls, {int(r.cached):,} cached (free), "
                     f"{int(r.to_send):,} to send, ~{int(r.input_tokens):,} input tokens, "
                     f"<= {int(r.output_tokens_max):,} output tokens, cost <= {cost}")
    lines.append("")
    lines.append("notes:")
    lines.extend(f"  - {n}" for n in notes)
    return "\n".join(lines)
