"""How a judge's original labels were made, and so how it re-judges a variant (seed 004,
section 3: the re-judging must be the original judgment with only the passage changed).

``original`` (``perturbations.original``):

* ``peras`` - the PERAS judge job of the study's ``template`` and ``persona``
  (:func:`judgelab.llm.judging.run_judgments`: persona || template, the label read by the PERAS
  ``answer`` mode);
* ``overrating`` - the overrating study's graded pointwise run (its ``overrating/graded``
  UMBRELA template, no persona, the label parsed where it is generated, the token confidence
  beside it: :func:`judgelab.studies.overrating.pointwise.run_pointwise`), so Table 1, the
  transition matrices and Figures 1 and 3 rest on one set of labels per judge, as in the seed.

Both give one row per pair with ``label`` (nullable) and ``parsed``; the request builders are the
judge jobs' own, so an unchanged passage's request is the original's (a cache hit).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgelab.llm.backends.base import Completion, Request
from judgelab.llm.client import CachedClient
from judgelab.llm.judge import Judge
from judgelab.llm.judging import judgment_requests, read_judgment, run_judgments
from judgelab.studies.overrating.pointwise import pointwise_requests, run_pointwise
from judgelab.studies.overrating.prompts import Prompt, reading_cells

#: the sources of the original labels
ORIGINALS = ("peras", "overrating")


def variant_requests(
    pairs: pd.DataFrame,
    *,
    original: str,
    template: str,
    labels: Sequence[str],
    max_tokens: int,
    persona: str = "",
    placement: str = "user",
    answer: str = "parse",
) -> list[Request]:
    """The requests judging ``pairs`` (query, passage) as the original judgment did."""
    if original == "overrating":
        return pointwise_requests(pairs, Prompt(template, tuple(labels), "judgment"), max_tokens=max_tokens)
    judge = Judge(
        "judge",
        template=template,
        labels=tuple(labels),
        persona=persona,
        placement=placement,
        max_tokens=max_tokens,
        answer=answer,
    )
    return judgment_requests(pairs, judge)


def label_of(completion: Completion | dict, *, original: str, labels: Sequence[str], answer: str = "parse"):
    """The label (int) of one answer as the original judgment reads it, or None (missing)."""
    comp = Completion.from_json(completion) if isinstance(completion, dict) else completion
    if original == "overrating":
        return reading_cells(comp, labels)["label"]
    return read_judgment(comp.text, comp.label_probs, labels, answer)


def judge_variant(
    pairs: pd.DataFrame,
    client: CachedClient,
    *,
    original: str,
    template: str,
    labels: Sequence[str],
    max_tokens: int,
    persona: str = "",
    placement: str = "user",
    answer: str = "parse",
    desc: str = "rejudge",
    progress: bool = True,
) -> pd.DataFrame:
    """Judge ``pairs`` as the original judgment did: the judgment table of its judge job
    (PERAS's columns, or the overrating pointwise columns with both token confidences)."""
    if original == "overrating":
        return run_pointwise(
            pairs,
            Prompt(template, tuple(labels), "judgment"),
            client,
            max_tokens=max_tokens,
            desc=desc,
            progress=progress,
        )
    judge = Judge(
        "judge",
        template=template,
        labels=tuple(labels),
        persona=persona,
        placement=placement,
        max_tokens=max_tokens,
        answer=answer,
    )
    return run_judgments(pairs, judge, client, desc=desc, progress=progress)
