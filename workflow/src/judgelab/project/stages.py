"""The shared stages' jobs, which the rules of every study build on: download and prepare a
dataset table (``workflow/rules/datasets.smk``), generate a persona and write the persona table
(``workflow/rules/personas.smk``). Each is one call of a ``workflow/scripts/`` adapter."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgelab.cache.store import CacheConfig
from judgelab.data.prepare import prepare_table
from judgelab.data.sources import download_dataset
from judgelab.data.tables import write_dataset, write_tsv
from judgelab.llm.personas import generate_persona, read_generated
from judgelab.llm.session import LLMSession
from judgelab.project.runner import as_value

log = logging.getLogger(__name__)


def download_job(urls: str | dict, out: dict[str, str]) -> None:
    """Fetch the qrels, topics and texts of ``urls`` to the paths of ``out``."""
    download_dataset(as_value(urls), out)


def prepare_dataset_job(
    name: str, qrels: str, topics: str, texts: str, selection: str | dict, out: str
) -> pd.DataFrame:
    full, table = prepare_table(name, as_value(selection), qrels, topics, texts)
    log.info("%s: %d judged pairs, %d queries", name, len(full), full["qid"].nunique())
    log.info(
        "%s after selection: %d pairs, %d queries, grades %s",
        name,
        len(table),
        table["qid"].nunique(),
        table["grade"].value_counts().sort_index().to_dict(),
    )
    write_dataset(table, out)
    return table


def generate_persona_job(
    out: str,
    *,
    personality_type: str,
    keywords_template: str,
    instruction_template: str,
    model: str | dict,
    max_tokens: int,
    cache: str | CacheConfig,
    threads: int | None = None,
    model_name: str | None = None,
) -> dict:
    session = LLMSession(model, cache, threads, desc=f"persona {personality_type}", name=model_name)
    with session as client:
        result = generate_persona(
            client, personality_type, keywords_template, instruction_template, max_tokens=int(max_tokens)
        )
    result["generator"] = session.backend.identity()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log.info(
        "%s: keywords %r; instruction of %d characters",
        personality_type,
        result["keywords"][:80],
        len(result["instruction"]),
    )
    return result


def persona_table_job(personas: str | list, generated: Sequence[str], out: str) -> pd.DataFrame:
    """The persona texts a run uses, with the generated alternatives beside the paper's.

    ``personas``: one entry per persona (id, personality_type, instruction, origin and
    ``uses_generated``, as :class:`judgelab.project.facade.Project` resolved them); ``generated``: the
    generation's files (their stem is the persona id)."""
    rows = as_value(personas)
    by_id = {Path(f).stem: read_generated(f) for f in generated}
    table = []
    for p in rows:
        gen = by_id.get(p["id"])
        use_generated = bool(p["uses_generated"])
        if use_generated and gen is None:
            raise ValueError(
                f"persona {p['id']} uses its generated instruction, but no generated file "
                f"was given (got {sorted(by_id)})"
            )
        table.append(
            {
                "persona": p["id"],
                "personality_type": p["personality_type"],
                "origin": "generated" if use_generated else p["origin"],
                "instruction": gen["instruction"] if use_generated and gen is not None else p["instruction"],
                "paper_instruction": p["instruction"],
                "generated_keywords": gen["keywords"] if gen else None,
                "generated_instruction": gen["instruction"] if gen else None,
            }
        )
    df = pd.DataFrame(table)
    write_tsv(df, out)
    return df
