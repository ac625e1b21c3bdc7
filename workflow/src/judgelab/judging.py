"""Pointwise judgment with a persona and a template (seed 000, section 4.2), shared by the studies
that judge pairs this way (PERAS, the perturbations' original and re-judged labels, ranking).

For every pair the prompt is persona || template(query, passage), and the label-token
probabilities are read at the answer position where the backend can. A request built here is the
same for every study that judges the same pair with the same model, template and persona, so one
study's answers are cache hits for the others. An answer that does not parse is kept as raw text
with ``parsed = False`` and a missing label; it never becomes a grade.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pandas as pd

from .backends.base import CachedClient, Request
from .labels import GRADE_LABELS, parse_label
from .prompts import build_messages, fill
from .tables import JUDGMENT_COLUMNS

log = logging.getLogger(__name__)


def judgment_requests(
    pairs: pd.DataFrame, persona: str, template: str, *, max_tokens: int, placement: str = "user"
) -> list[Request]:
    return [
        Request.from_messages(
            build_messages(persona, fill(template, query=row.query, document=row.passage), placement),
            max_tokens,
            GRADE_LABELS,
        )
        for row in pairs.itertuples(index=False)
    ]


def run_judgments(
    pairs: pd.DataFrame,
    persona: str,
    template: str,
    client: CachedClient,
    *,
    max_tokens: int,
    placement: str = "user",
    progress: bool = True,
    desc: str = "judge",
    labels: Sequence[str] = GRADE_LABELS,
) -> pd.DataFrame:
    """Judge every pair; one output row per input row, in input order. ``labels``: the
    template's label set; an answer outside it is missing (``parsed`` false)."""
    requests = judgment_requests(pairs, persona, template, max_tokens=max_tokens, placement=placement)
    answers = client.run(requests, desc=desc, progress=progress)
    rows = []
    for row, (comp, hit) in zip(pairs.itertuples(index=False), answers):
        label = parse_label(comp.text, labels)
        probs: list[float | None] = list(comp.label_probs) if comp.label_probs else [None] * 4
        expected = sum(k * p for k, p in enumerate(comp.label_probs)) if comp.label_probs else None
        rows.append(
            {
                "dataset": row.dataset,
                "qid": row.qid,
                "docid": row.docid,
                "label": label,
                "parsed": label is not None,
                "answer": comp.text,
                "p0": probs[0],
                "p1": probs[1],
                "p2": probs[2],
                "p3": probs[3],
                "label_mass": comp.label_mass,
                "expected_grade": expected,
                "prompt_tokens": comp.prompt_tokens,
                "completion_tokens": comp.completion_tokens,
                "latency_s": comp.latency_s,
                "cache_hit": hit,
            }
        )
    out = pd.DataFrame(rows, columns=JUDGMENT_COLUMNS)
    out["label"] = out["label"].astype("Int64")
    for col in ("p0", "p1", "p2", "p3", "label_mass", "expected_grade"):
        out[col] = out[col].astype("Float64")
    n_missing = int((~out["parsed"]).sum())
    log.info(
        "%s: %d pairs, %d parsed, %d missing (unparsable answers)",
        desc,
        len(out),
        len(out) - n_missing,
        n_missing,
    )
    return out
