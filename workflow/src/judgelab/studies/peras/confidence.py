"""Confidence elicitation (PERAS, section 4.3 and Appendix A): for every pair whose label parsed,
the follow-up turn with the Table 6 instruction, the persona, the task context (query and
passage) and the predicted label; the answer is read as a 0-100 confidence
(:func:`judgelab.llm.answers.read_confidence`, the rules of the judge's parser version; the row's
``parse_rule`` names the rule), missing where it does not parse.
"""

from __future__ import annotations

import logging

import pandas as pd

from judgelab.data.tables import ANSWER_COLUMNS, CONFIDENCE_COLUMNS
from judgelab.llm.answers import confidence_rules, read_confidence
from judgelab.llm.backends.base import Request
from judgelab.llm.client import CachedClient
from judgelab.llm.judge import Judge
from judgelab.llm.judging import answer_cells, cut_by_bound
from judgelab.llm.prompts import build_messages, fill

log = logging.getLogger(__name__)


def confidence_requests(pairs: pd.DataFrame, labels, judge: Judge) -> list[Request]:
    """The confidence follow-up for each pair (PERAS Table 6), given the label it was judged with
    (``labels``: one per row of ``pairs``; rows whose label is missing must be left out), by the
    confidence judge (its persona resolved, its template the confidence instruction); the same
    query, passage and label share one (frozen) request, rendered once."""
    made: dict[tuple[str, str, int], Request] = {}

    def request(query: str, passage: str, label: int) -> Request:
        key = (query, passage, label)
        if key not in made:
            made[key] = Request.from_messages(
                build_messages(
                    judge.persona,
                    fill(judge.template, query=query, document=passage, predicted_score=label),
                    judge.placement,
                ),
                judge.max_tokens,
            )
        return made[key]

    return [
        request(q, p, int(label))
        for q, p, label in zip(pairs["query"], pairs["passage"], labels, strict=True)
    ]


def run_confidence(
    pairs: pd.DataFrame,
    judgments: pd.DataFrame,
    judge: Judge,
    client: CachedClient,
    *,
    progress: bool = True,
    desc: str = "confidence",
) -> pd.DataFrame:
    """Ask the confidence instruction for every judged pair whose label parsed."""
    merged = pairs.merge(
        judgments[["qid", "docid", "label"]], on=["qid", "docid"], how="inner", validate="one_to_one"
    )
    if len(merged) != len(judgments):
        raise ValueError("judgments and dataset table do not cover the same pairs")
    asked = merged[merged["label"].notna()]
    requests = confidence_requests(asked, asked["label"], judge)
    answers = dict(zip(asked.index, client.run(requests, desc=desc, progress=progress)))
    sent = dict(zip(asked.index, requests))
    rows = []
    for idx, r in merged.iterrows():
        base = {"dataset": r["dataset"], "qid": r["qid"], "docid": r["docid"], "label": r["label"]}
        if idx in answers:
            comp, hit = answers[idx]
            got = read_confidence(comp.text, rules=confidence_rules(judge.parser))
            conf = None if got.value is None else float(got.value)
            rows.append(
                {
                    **base,
                    "asked": True,
                    "confidence": conf,
                    "parsed": conf is not None,
                    "answer": comp.text,
                    "latency_s": comp.latency_s,
                    "cache_hit": hit,
                    **answer_cells(
                        comp, cut_by_bound(comp, judge.max_tokens), got.rule, client.decoding(sent[idx])
                    ),
                }
            )
        else:
            rows.append(
                {
                    **base,
                    "asked": False,
                    "confidence": None,
                    "parsed": False,
                    "answer": None,
                    "latency_s": None,
                    "cache_hit": None,
                    **dict.fromkeys(ANSWER_COLUMNS),
                    "truncated": False,
                }
            )
    out = pd.DataFrame(rows, columns=CONFIDENCE_COLUMNS)
    out["label"] = out["label"].astype("Int64")
    out["confidence"] = out["confidence"].astype("Float64")
    max_tokens = judge.max_tokens
    cut = sum(1 for comp, _ in answers.values() if (comp.completion_tokens or 0) >= max_tokens)
    if cut:
        log.warning(
            "%s: %d of %d answers reached the bound of %d tokens (cut; unparsable ones count as missing)",
            desc,
            cut,
            len(answers),
            max_tokens,
        )
    log.info(
        "%s: %d pairs, %d asked (label parsed), %d confidences parsed",
        desc,
        len(out),
        int(out["asked"].sum()),
        int(out["parsed"].sum()),
    )
    return out
