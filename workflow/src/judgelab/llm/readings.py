"""A pointwise judgment whose label is located in the answer, with the token confidence where it
was generated ("When LLM Judges Inflate Scores", section 2): the template filled with the query
and the passage (no persona), the label read by the answer rules, its position, the label-token
distribution at that step and the two token confidences. The overrating study's pointwise and
pairwise runs read their answers so, and the perturbations study re-judges a variant so when its
original labels come from the overrating run: one implementation in the core, for both.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from judgelab.data.tables import ANSWER_COLUMNS
from judgelab.llm.answers import Reading, locate_label, read_label
from judgelab.llm.backends.base import Completion, Request, label_step_at
from judgelab.llm.client import CachedClient
from judgelab.llm.judge import Judge
from judgelab.llm.judging import answer_cells, cut_by_bound
from judgelab.llm.prompts import build_messages, fill

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prompt:
    """An overrating prompt: its template text and its label set (single tokens, e.g. "0", "1")."""

    template: str
    labels: tuple[str, ...]
    kind: str

    @classmethod
    def of(cls, judge: Judge, kind: str = "judgment") -> Prompt:
        """The prompt a judge sends: its template and labels (``kind``: ``judgment`` for a
        pointwise judge, :data:`PAIRWISE_KIND` for the pairwise one)."""
        return cls(judge.template, tuple(str(x) for x in judge.labels), kind)


def read_answer(text: str, labels: Sequence[str], *, pairwise: bool = False) -> Reading:
    """The label of an answer (one of ``labels``), the character offset of the label in it and the
    rule that read it, or :data:`judgelab.llm.answers.MISSING`: :func:`judgelab.llm.answers.read_label`
    with the current rules (only the template's labels parse; ``-1``, ``2.5``, ``1st`` or a number
    outside the labels do not). ``pairwise``: an explicit ``Answer: 1`` also counts as the final
    answer (the forced choice names an option)."""
    return read_label(text, labels, answer_keys=pairwise)


def parse_answer(
    text: str, labels: Sequence[str], *, pairwise: bool = False
) -> tuple[str | None, int | None]:
    """:func:`read_answer`'s label and offset, or ``(None, None)`` (missing):
    :func:`judgelab.llm.answers.locate_label`."""
    return locate_label(text, labels, answer_keys=pairwise)


def label_reading(
    completion: Completion, labels: Sequence[str], label: str | None, start: int | None
) -> dict:
    """The label distribution where the parsed label was generated.

    The label step is the decoding step whose token spells the character the parser took the
    label from (:func:`judgelab.llm.backends.base.label_step_at`): after ``"##final score: "`` it is
    the step of the ``"2"``, and for an answer that is only the label it is the first step, whose
    reading is the first-position one. Returns ``label_pos`` (the token index), ``probs`` (one per
    label, renormalised over the label tokens), ``label_mass`` (the label tokens' total
    probability before renormalising), and the two token confidences of the parsed label:

    * ``confidence`` - the overrating paper's: the label token's probability in the FULL distribution of that
      step (the softmax over the whole vocabulary; for an API backend, exp of the token's
      logprob), i.e. ``probs[label] x label_mass``;
    * ``confidence_renorm`` - that probability renormalised over the label tokens,
      ``probs[label]`` (never below 1 / number of labels: 0.5 binary and pairwise, 0.25 graded).

    All None when the answer is missing or no step matches (no logprobs, or the label merged
    into a longer token)."""
    out = {
        "label_pos": None,
        "probs": [None] * len(labels),
        "label_mass": None,
        "confidence": None,
        "confidence_renorm": None,
    }
    if label is None or start is None:
        return out
    step = label_step_at(completion, start)
    if step is None or step["probs"] is None:
        return out
    renorm = float(step["probs"][list(labels).index(label)])
    mass = step["mass"]
    return {
        "label_pos": int(step["pos"]),
        "probs": list(step["probs"]),
        "label_mass": mass,
        "confidence": None if mass is None else renorm * float(mass),
        "confidence_renorm": renorm,
    }


def prob_columns(labels: Sequence[str]) -> list[str]:
    return [f"p{x}" for x in labels]


def reading_cells(
    comp: Completion,
    labels: Sequence[str],
    *,
    pairwise: bool = False,
    max_tokens: int | None = None,
    decoding: str | None = None,
) -> dict:
    """One judgment's cells: the label read from the answer (:func:`parse_answer`), its label-token
    reading (:func:`label_reading`), the token counts, whether the answer was cut by the bound
    ``max_tokens`` (``truncated``), the rule that read the label (``parse_rule``) and the
    ``decoding`` parameters the request was sent with."""
    got = read_answer(comp.text, labels, pairwise=pairwise)
    label = None if got.value is None else str(got.value)
    r = label_reading(comp, labels, label, got.start)
    return {
        "label": None if label is None else int(label),
        "parsed": label is not None,
        "answer": comp.text,
        "label_pos": r["label_pos"],
        **dict(zip(prob_columns(labels), r["probs"])),
        "label_mass": r["label_mass"],
        "confidence": r["confidence"],
        "confidence_renorm": r["confidence_renorm"],
        "prompt_tokens": comp.prompt_tokens,
        "completion_tokens": comp.completion_tokens,
        "latency_s": comp.latency_s,
        **answer_cells(comp, cut_by_bound(comp, max_tokens), got.rule, decoding),
    }


def typed_readings(df: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    df["label"] = df["label"].astype("Int64")
    df["label_pos"] = df["label_pos"].astype("Int64")
    for col in prob_columns(labels) + ["label_mass", "confidence", "confidence_renorm"]:
        df[col] = df[col].astype("Float64")
    return df


#: The columns after the label distribution, in a pointwise and a pairwise judgment table alike.
READING_COLUMNS = [
    "label_mass",
    "confidence",
    "confidence_renorm",
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "cache_hit",
    *ANSWER_COLUMNS,
]


def pointwise_columns(labels: Sequence[str]) -> list[str]:
    return (
        ["dataset", "qid", "docid", "label", "parsed", "answer", "label_pos"]
        + prob_columns(labels)
        + READING_COLUMNS
    )


def pointwise_requests(pairs: pd.DataFrame, prompt: Prompt, *, max_tokens: int) -> list[Request]:
    """One request per pair: the template filled with the query and passage (no persona), asking
    for the label steps of the prompt's labels."""
    return [
        Request.from_messages(
            build_messages("", fill(prompt.template, query=r.query, document=r.passage)),
            max_tokens,
            prompt.labels,
            label_steps=True,
        )
        for r in pairs.itertuples(index=False)
    ]


def run_pointwise(
    pairs: pd.DataFrame,
    prompt: Prompt,
    client: CachedClient,
    *,
    max_tokens: int,
    progress: bool = True,
    desc: str = "pointwise",
) -> pd.DataFrame:
    """Judge every pair; one row per input row, in input order (:func:`pointwise_columns`)."""
    requests = pointwise_requests(pairs, prompt, max_tokens=max_tokens)
    answers = client.run(requests, desc=desc, progress=progress)
    rows = [
        {
            "dataset": r.dataset,
            "qid": r.qid,
            "docid": r.docid,
            **reading_cells(comp, prompt.labels, max_tokens=max_tokens, decoding=client.decoding(req)),
            "cache_hit": hit,
        }
        for r, req, (comp, hit) in zip(pairs.itertuples(index=False), requests, answers)
    ]
    out = typed_readings(pd.DataFrame(rows, columns=pointwise_columns(prompt.labels)), prompt.labels)
    log.info(
        "%s: %d pairs, %d parsed, %d missing, %d with a label-token confidence",
        desc,
        len(out),
        int(out["parsed"].sum()),
        int((~out["parsed"]).sum()),
        int(out["confidence"].notna().sum()),
    )
    return out
