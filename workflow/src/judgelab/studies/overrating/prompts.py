"""The overrating study's prompts and how an answer is read ("When LLM Judges Inflate Scores",
section 2): the checked pointwise and pairwise templates, the label of an answer and where in the
answer it is, and the token confidence at that position.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgelab.data.labels import SCALES
from judgelab.errors import InputError
from judgelab.llm.answers import Reading, locate_label, read_label
from judgelab.llm.backends.base import Completion, label_step_at
from judgelab.llm.judge import Judge
from judgelab.llm.judging import answer_cells, cut_by_bound
from judgelab.llm.prompts import load_template_spec, register_kind

log = logging.getLogger(__name__)


#: The template kind of the forced-choice pairwise prompt: Passage 1 and Passage 2 of a query,
#: answered with an option number (default labels 1 = Passage 1, 2 = Passage 2). The pointwise
#: prompts are ``judgment`` templates ({query}, {document}) whose ``labels:`` give the scale.
PAIRWISE_KIND = "overrating_pairwise"


register_kind(PAIRWISE_KIND, ["query", "passage_a", "passage_b"], labels=["1", "2"])


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


def load_prompt(
    ref: str, resources: str | Path | None = None, kind: str | None = None, *, key: str | None = None
) -> Prompt:
    """A checked prompt template (:func:`judgelab.llm.prompts.load_template_spec`): ``ref`` is a path
    or ``<study>/<name>`` under ``resources``/prompts (e.g. ``overrating/graded``); ``kind`` the
    kind needed (``judgment`` or :data:`PAIRWISE_KIND`); ``key`` the config key naming it."""
    spec = load_template_spec(ref, resources, kind, key=key)
    return Prompt(spec.text, tuple(spec.labels or ()), spec.kind)


def effective_scale(scale: str | None) -> str:
    """The scale of an imported judge: as declared, graded when not declared."""
    if scale is None:
        return "graded"
    if scale not in SCALES:
        raise InputError(f"unknown scale {scale!r} (binary or graded)", key="imported_judges.<name>.scale")
    return scale


def check_labels(labels: Sequence[str], scale: str) -> tuple[str, ...]:
    """The labels of a pointwise run, checked against its scale."""
    if scale not in SCALES:
        raise InputError(f"unknown scale {scale!r} (binary or graded)", key="overrating.pointwise.scales")
    if tuple(labels) != SCALES[scale]:
        raise InputError(
            f"the {scale} scale needs labels {list(SCALES[scale])}, the prompt declares {list(labels)}",
            key=f"overrating.pointwise.templates.{scale}",
        )
    return tuple(labels)


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


#: The two token confidences of a judgment (see :func:`label_reading`), by their names in the
#: config (``overrating.confidence``) and the tables' columns.
CONFIDENCE_DEFINITIONS = {"full": "confidence", "renormalised": "confidence_renorm"}


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
