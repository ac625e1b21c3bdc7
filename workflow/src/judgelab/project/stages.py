"""The shared stages' jobs, which the rules of every study build on: download and prepare a
dataset table (``workflow/rules/datasets.smk``), fetch a published judge's file
(``workflow/rules/published.smk``), generate a persona and write the persona table
(``workflow/rules/personas.smk``). Each is one call of a ``workflow/scripts/`` adapter."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.data.prepare import prepare_table
from judgelab.data.published import fetch
from judgelab.data.sources import download_dataset
from judgelab.data.tables import write_dataset, write_tsv
from judgelab.llm.personas import PersonaGeneration, generate_persona, read_generated
from judgelab.llm.session import JobContext

log = logging.getLogger(__name__)


def download_job(urls: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    """Fetch the qrels, topics and texts of ``urls`` to the paths of ``outputs`` (verified); a
    dataset whose passages no live model reads has no texts among them."""
    download_dataset(dict(urls), dict(outputs))


def download_published_job(download: Mapping[str, Any], labels: str, mirror: str | None = None) -> None:
    """Fetch one file of a published judge to ``labels``: ``download`` is
    :meth:`judgelab.wiring.facade.Project.published_download` (URL, size, SHA-256, source, path),
    ``mirror`` the config's ``published_judges.mirror`` (a folder of ``<source>/<path>`` copies;
    None: download), checked by :func:`judgelab.data.published.fetch`."""
    copy = str(Path(mirror) / download["source"] / download["file"]) if mirror else None
    fetch({**download, "mirror": copy}, labels)


def prepare_dataset_job(
    dataset: str,
    qrels: str,
    topics: str,
    selection: Mapping[str, Any],
    table: str,
    texts: str | None = None,
    reference: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The normalised table of ``dataset``'s raw files, cut to its ``selection`` (the format and
    subset keys of :meth:`judgelab.wiring.facade.Project.selection`). ``texts`` None (the rule
    gives none: no live model reads the dataset's passages): every ``passage`` empty.
    ``reference``: annotators' qrels files (``datasets.<name>.reference``, merged by
    :func:`judgelab.annotate.labels.read_annotated`) whose labels replace the qrels' grades."""
    labels = None
    if reference:
        from judgelab.annotate.labels import MERGE_RULE, read_annotated

        labels = read_annotated(reference, key=f"datasets.{dataset}.reference")
        log.info("%s: reference labels of %s (%s)", dataset, ", ".join(reference), MERGE_RULE)
    full, subset = prepare_table(dataset, dict(selection), qrels, topics, texts, labels)
    log.info("%s: %d judged pairs, %d queries", dataset, len(full), full["qid"].nunique())
    if texts is None:
        log.info("%s: no passage texts (no live model reads them): the passage column is empty", dataset)
    log.info(
        "%s after selection: %d pairs, %d queries, grades %s",
        dataset,
        len(subset),
        subset["qid"].nunique(),
        subset["grade"].value_counts().sort_index().to_dict(),
    )
    write_dataset(subset, table)
    return subset


def generate_persona_job(persona: str, generation: PersonaGeneration, context: JobContext) -> dict:
    """PERAS section 4.1 for one persona: keywords, then an instruction built on them, by the
    generator model; written to ``persona`` (JSON, with the generator's identity)."""
    g = generation
    session = context.session(dict(g.spec), g.model)
    with session as client:
        result = generate_persona(
            client,
            g.personality_type,
            g.keywords_template,
            g.instruction_template,
            max_tokens=int(g.max_tokens),
        )
    result["generator"] = session.backend.identity()
    Path(persona).parent.mkdir(parents=True, exist_ok=True)
    Path(persona).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log.info(
        "%s: keywords %r; instruction of %d characters",
        g.personality_type,
        result["keywords"][:80],
        len(result["instruction"]),
    )
    return result


def persona_table_job(
    personas: Sequence[Mapping[str, Any]], generated: Sequence[str], table: str
) -> pd.DataFrame:
    """The persona texts a run uses, with the generated alternatives beside the paper's.

    ``personas``: one entry per persona (id, personality_type, instruction, origin and
    ``uses_generated``, as :class:`judgelab.wiring.facade.Project` resolved them); ``generated``: the
    generation's files (their stem is the persona id)."""
    rows = list(personas)
    by_id = {Path(f).stem: read_generated(f) for f in generated}
    out = []
    for p in rows:
        gen = by_id.get(p["id"])
        use_generated = bool(p["uses_generated"])
        if use_generated and gen is None:
            raise ValueError(
                f"persona {p['id']} uses its generated instruction, but no generated file "
                f"was given (got {sorted(by_id)})"
            )
        out.append(
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
    df = pd.DataFrame(out)
    write_tsv(df, table)
    return df
