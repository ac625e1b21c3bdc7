"""Persona jobs: the two-step generation of seed 000 section 4.1, and the table of the persona
texts a run uses."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Sequence

import pandas as pd

from ..judging import generate_persona
from ..personas import read_generated
from ..tables import write_tsv
from . import LLMSession, as_value

log = logging.getLogger("judgelab")


def generate_persona_job(out: str, *, personality_type: str, keywords_template: str,
                         instruction_template: str, model: str | dict, max_tokens: int, cache: str,
                         threads: int | None = None, model_name: str | None = None) -> dict:
    session = LLMSession(model, cache, threads, desc=f"persona {personality_type}", name=model_name)
    with session as client:
        result = generate_persona(client, personality_type, keywords_template, instruction_template,
                                  max_tokens=int(max_tokens))
    result["generator"] = session.backend.identity()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log.info("%s: keywords %r; instruction of %d characters", personality_type, result["keywords"][:80],
             len(result["instruction"]))
    return result


def persona_table_job(personas: str | list, generated: Sequence[str], out: str) -> pd.DataFrame:
    """The persona texts a run uses, with the generated alternatives beside the paper's.

    ``personas``: one entry per persona (id, personality_type, instruction, origin and
    ``uses_generated``, as :class:`judgelab.config.Project` resolved them); ``generated``: the
    generation's files (their stem is the persona id)."""
    rows = as_value(personas)
    by_id = {Path(f).stem: read_generated(f) for f in generated}
    table = []
    for p in rows:
        gen = by_id.get(p["id"])
        use_generated = bool(p["uses_generated"])
        if use_generated and gen is None:
            raise ValueError(f"persona {p['id']} uses its generated instruction, but no generated file "
                             f"was given (got {sorted(by_id)})")
        table.append({"persona": p["id"], "personality_type": p["personality_type"],
                      "origin": "generated" if use_generated else p["origin"],
                      "instruction": gen["instruction"] if use_generated else p["instruction"],
                      "paper_instruction": p["instruction"],
                      "generated_keywords": gen["keywords"] if gen else None,
                      "generated_instruction": gen["instruction"] if gen else None})
    df = pd.DataFrame(table)
    write_tsv(df, out)
    return df
