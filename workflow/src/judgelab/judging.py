"""Judgment, confidence and persona-generation jobs (seed 000, sections 4.1-4.3).

A judgment job is one dataset x model x template x persona: for every pair the prompt is
persona || template(query, passage). A confidence job asks, for every pair whose label parsed,
the Table 6 instruction with the persona, the task context and the predicted label. An answer
that does not parse is kept as raw text with ``parsed = False`` and a missing label/confidence;
it never becomes a grade.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import pandas as pd

from .backends.base import LABEL_TOKENS, Backend, CachedClient, Request
from .cache import RequestCache
from .prompts import GRADES, build_messages, fill, parse_confidence, parse_label
from .tables import CONFIDENCE_COLUMNS, JUDGMENT_COLUMNS

log = logging.getLogger(__name__)


def judgment_requests(pairs: pd.DataFrame, persona: str, template: str, *, max_tokens: int,
                      placement: str = "user") -> list[Request]:
    return [Request.from_messages(
        build_messages(persona, fill(template, query=row.query, document=row.passage), placement),
        max_tokens, LABEL_TOKENS) for row in pairs.itertuples(index=False)]


def confidence_requests(pairs: pd.DataFrame, labels, persona: str, template: str, *,
                        max_tokens: int, placement: str = "user") -> list[Request]:
    """The confidence follow-up for each pair (seed 000 Table 6), given the label it was judged
    with (``labels``: one per row of ``pairs``; rows whose label is missing must be left out)."""
    return [Request.from_messages(
        build_messages(persona, fill(template, query=r.query, document=r.passage,
                                     predicted_score=int(label)), placement), max_tokens)
        for r, label in zip(pairs.itertuples(index=False), labels)]


def run_judgments(pairs: pd.DataFrame, persona: str, template: str, client: CachedClient, *,
                  max_tokens: int, placement: str = "user", progress: bool = True,
                  desc: str = "judge", labels: Sequence[str] = GRADES) -> pd.DataFrame:
    """Judge every pair; one output row per input row, in input order. ``labels``: the
    template's label set; an answer outside it is missing (``parsed`` false)."""
    requests = judgment_requests(pairs, persona, template, max_tokens=max_tokens, placement=placement)
    answers = client.run(requests, desc=desc, progress=progress)
    rows = []
    for row, (comp, hit) in zip(pairs.itertuples(index=False), answers):
        label = parse_label(comp.text, labels)
        probs = comp.label_probs or [None] * 4
        expected = (sum(k * p for k, p in enumerate(comp.label_probs))
                    if comp.label_probs else None)
        rows.append({"dataset": row.dataset, "qid": row.qid, "docid": row.docid, "label": label,
                     "parsed": label is not None, "answer": comp.text,
                     "p0": probs[0], "p1": probs[1], "p2": probs[2], "p3": probs[3],
                     "label_mass": comp.label_mass, "expected_grade": expected,
                     "prompt_tokens": comp.prompt_tokens, "completion_tokens": comp.completion_tokens,
                     "latency_s": comp.latency_s, "cache_hit": hit})
    out = pd.DataFrame(rows, columns=JUDGMENT_COLUMNS)
    out["label"] = out["label"].astype("Int64")
    for col in ("p0", "p1", "p2", "p3", "label_mass", "expected_grade"):
        out[col] = out[col].astype("Float64")
    n_missing = int((~out["parsed"]).sum())
    log.info("%s: %d pairs, %d parsed, %d missing (unparsable answers)", desc, len(out),
             len(out) - n_missing, n_missing)
    return out


def run_confidence(pairs: pd.DataFrame, judgments: pd.DataFrame, persona: str, template: str,
                   client: CachedClient, *, max_tokens: int, placement: str = "user",
                   progress: bool = True, desc: str = "confidence") -> pd.DataFrame:
    """Ask the confidence instruction for every judged pair whose label parsed."""
    merged = pairs.merge(judgments[["qid", "docid", "label"]], on=["qid", "docid"], how="inner",
                         validate="one_to_one")
    if len(merged) != len(judgments):
        raise ValueError("judgments and dataset table do not cover the same pairs")
    asked = merged[merged["label"].notna()]
    requests = confidence_requests(asked, asked["label"], persona, template, max_tokens=max_tokens,
                                   placement=placement)
    answers = dict(zip(asked.index, client.run(requests, desc=desc, progress=progress)))
    rows = []
    for idx, r in merged.iterrows():
        base = {"dataset": r["dataset"], "qid": r["qid"], "docid": r["docid"], "label": r["label"]}
        if idx in answers:
            comp, hit = answers[idx]
            conf = parse_confidence(comp.text)
            rows.append({**base, "asked": True, "confidence": conf, "parsed": conf is not None,
                         "answer": comp.text, "latency_s": comp.latency_s, "cache_hit": hit})
        else:
            rows.append({**base, "asked": False, "confidence": None, "parsed": False, "answer": None,
                         "latency_s": None, "cache_hit": None})
    out = pd.DataFrame(rows, columns=CONFIDENCE_COLUMNS)
    out["label"] = out["label"].astype("Int64")
    out["confidence"] = out["confidence"].astype("Float64")
    log.info("%s: %d pairs, %d asked (label parsed), %d confidences parsed", desc, len(out),
             int(out["asked"].sum()), int(out["parsed"].sum()))
    return out


def persona_keywords_request(personality_type: str, keywords_template: str, *,
                             max_tokens: int) -> Request:
    """Step 1 of the persona generation (seed 000 section 4.1): keywords for a personality type."""
    return Request.from_messages(
        [{"role": "user", "content": fill(keywords_template, personality_type=personality_type)}],
        max_tokens)


def persona_instruction_request(personality_type: str, keywords: str, instruction_template: str, *,
                                max_tokens: int) -> Request:
    """Step 2 of the persona generation: an instruction built on the step-1 keywords."""
    return Request.from_messages(
        [{"role": "user", "content": fill(instruction_template, personality_keywords=keywords,
                                          personality_type=personality_type)}], max_tokens)


def generate_persona(client: CachedClient, personality_type: str, keywords_template: str,
                     instruction_template: str, *, max_tokens: int) -> dict:
    """Seed 000 section 4.1: step 1 asks for keywords, step 2 for an instruction built on them."""
    step1 = persona_keywords_request(personality_type, keywords_template, max_tokens=max_tokens)
    (kw, _), = client.run([step1], desc=f"keywords {personality_type}", progress=False)
    keywords = kw.text.strip()
    step2 = persona_instruction_request(personality_type, keywords, instruction_template,
                                        max_tokens=max_tokens)
    (ins, _), = client.run([step2], desc=f"instruction {personality_type}", progress=False)
    return {"personality_type": personality_type, "keywords": keywords,
            "instruction": ins.text.strip()}


def open_client(backend: Backend, cache_path: str | Path | None) -> CachedClient:
    return CachedClient(backend, RequestCache(cache_path))
