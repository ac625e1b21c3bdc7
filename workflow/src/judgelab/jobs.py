"""One function per workflow job. The Snakemake scripts and the CLI both call these, with plain
paths and values, so every stage can also be run and tested without Snakemake."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import time
from pathlib import Path
from typing import Iterator

import pandas as pd

from . import datasets as ds
from .backends.base import make_backend
from .judging import (generate_persona, open_client, read_confidence, read_judgments, run_confidence,
                      run_judgments, write_tsv)
from .metrics import job_metrics
from .personas import read_generated
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


def _spec(model: str | dict) -> dict:
    return json.loads(model) if isinstance(model, str) else dict(model)


def _backend(model: str | dict, threads: int | None):
    spec = _spec(model)
    if threads:
        spec["threads"] = int(threads)
    return make_backend(spec, spec.get("name", "<name>"))


def _log_usage(desc: str, client, model: str | dict, t0: float) -> None:
    """The job's calls, cache hits, tokens sent and (for priced models) their cost."""
    spec = _spec(model)
    prices = Prices.from_spec(spec, spec.get("name", "<name>"))
    cost = ""
    if prices is not None:
        usd = prices.cost(client.prompt_tokens, client.completion_tokens,
                          batch=bool(spec.get("batch", False)))
        cost = f", cost ${usd:.4f}"
    log.info("%s: %d new calls, %d cache hits, tokens sent %d prompt + %d completion%s, %.1f s",
             desc, client.calls, client.hits, client.prompt_tokens, client.completion_tokens, cost,
             time.perf_counter() - t0)


def prepare_dataset_job(name: str, qrels: str, topics: str, texts: str, selection: str | dict,
                        out: str) -> pd.DataFrame:
    sel = _spec(selection)
    table = ds.build_table(name, sel.get("format", "trec"), qrels, topics, texts, sel.get("docid_map"))
    log.info("%s: %d judged pairs, %d queries", name, len(table), table["qid"].nunique())
    table = ds.select(table, queries=[str(q) for q in sel.get("queries") or []],
                      max_queries=sel.get("max_queries"), per_grade=sel.get("per_grade"),
                      seed=int(sel.get("seed") or 0))
    log.info("%s after selection: %d pairs, %d queries, grades %s", name, len(table),
             table["qid"].nunique(), table["grade"].value_counts().sort_index().to_dict())
    ds.write_table(table, out)
    return table


def _persona_text(persona: str, persona_file: str | None) -> str:
    if persona_file:
        return read_generated(persona_file)["instruction"]
    return persona


def judge_job(pairs: str, out: str, *, persona: str, template: str, model: str | dict,
              max_tokens: int, placement: str, cache: str, threads: int | None = None,
              persona_file: str | None = None, desc: str = "judge") -> pd.DataFrame:
    table = ds.read_table(pairs)
    backend = _backend(model, threads)
    client = open_client(backend, cache)
    t0 = time.perf_counter()
    try:
        result = run_judgments(table, _persona_text(persona, persona_file), template, client,
                               max_tokens=int(max_tokens), placement=placement, desc=desc)
    finally:
        backend.close()
    _log_usage(desc, client, model, t0)
    write_tsv(result, out)
    return result


def confidence_job(pairs: str, judgments: str, out: str, *, persona: str, template: str,
                   model: str | dict, max_tokens: int, placement: str, cache: str,
                   threads: int | None = None, persona_file: str | None = None,
                   desc: str = "confidence") -> pd.DataFrame:
    table = ds.read_table(pairs)
    judged = read_judgments(judgments)
    backend = _backend(model, threads)
    client = open_client(backend, cache)
    t0 = time.perf_counter()
    try:
        result = run_confidence(table, judged, _persona_text(persona, persona_file), template, client,
                                max_tokens=int(max_tokens), placement=placement, desc=desc)
    finally:
        backend.close()
    _log_usage(desc, client, model, t0)
    write_tsv(result, out)
    return result


def generate_persona_job(out: str, *, personality_type: str, keywords_template: str,
                         instruction_template: str, model: str | dict, max_tokens: int, cache: str,
                         threads: int | None = None) -> dict:
    backend = _backend(model, threads)
    client = open_client(backend, cache)
    try:
        result = generate_persona(client, personality_type, keywords_template, instruction_template,
                                  max_tokens=int(max_tokens))
    finally:
        backend.close()
    result["generator"] = backend.identity()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log.info("%s: keywords %r; instruction of %d characters", personality_type, result["keywords"][:80],
             len(result["instruction"]))
    return result


def persona_table_job(personas: str | list, source: str, generated: list[str], out: str) -> pd.DataFrame:
    """The persona texts a run uses, with the generated alternatives beside the paper's."""
    rows = json.loads(personas) if isinstance(personas, str) else personas
    by_id = {Path(f).stem: read_generated(f) for f in generated}
    table = []
    for p in rows:
        gen = by_id.get(p["id"])
        use_generated = source == "generated" and gen is not None and p["origin"] == "paper"
        table.append({"persona": p["id"], "personality_type": p["personality_type"],
                      "origin": "generated" if use_generated else p["origin"],
                      "instruction": gen["instruction"] if use_generated else p["instruction"],
                      "paper_instruction": p["instruction"],
                      "generated_keywords": gen["keywords"] if gen else None,
                      "generated_instruction": gen["instruction"] if gen else None})
    df = pd.DataFrame(table)
    write_tsv(df, out)
    return df


def _metrics_row(table: pd.DataFrame, judgments: str, confidence: str) -> dict:
    judged = read_judgments(judgments)[["qid", "docid", "label"]]
    conf = read_confidence(confidence)[["qid", "docid", "confidence"]]
    merged = table.merge(judged, on=["qid", "docid"], validate="one_to_one") \
        .merge(conf, on=["qid", "docid"], how="left", validate="one_to_one")
    return job_metrics(merged)


def job_metrics_job(pairs: str, judgments: str, confidence: str, out: str,
                    ids: dict[str, str]) -> pd.DataFrame:
    """Metrics of one judgment job (one row)."""
    table = ds.read_table(pairs)[["qid", "docid", "grade"]]
    df = pd.DataFrame([{**ids, **_metrics_row(table, judgments, confidence)}])
    write_tsv(df, out)
    log.info("%s", df.iloc[0].to_dict())
    return df


def group_metrics_job(pairs: str, judgments: list[str], confidence: list[str], personas: list[str],
                      out: str, ids: dict[str, str]) -> pd.DataFrame:
    """Metrics of every persona's job of one dataset x model x template (one row per persona);
    ``judgments`` and ``confidence`` are in the order of ``personas``."""
    if not len(judgments) == len(confidence) == len(personas):
        raise ValueError("one judgments and one confidence table per persona expected")
    table = ds.read_table(pairs)[["qid", "docid", "grade"]]
    df = pd.DataFrame([{**ids, "persona": p, **_metrics_row(table, j, c)}
                       for p, j, c in zip(personas, judgments, confidence)])
    write_tsv(df, out)
    log.info("%d personas; parse coverage %s", len(df),
             dict(zip(df["persona"], df["coverage"].round(3))))
    return df


def aggregate_job(inputs: list[str], out: str) -> pd.DataFrame:
    df = pd.concat([pd.read_csv(p, sep="\t", dtype={"dataset": str, "model": str, "template": str,
                                                    "persona": str}) for p in inputs],
                   ignore_index=True)
    write_tsv(df, out)
    log.info("%d jobs; mean parse coverage %.3f", len(df), df["coverage"].mean())
    return df
