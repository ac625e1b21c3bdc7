"""How a judge's original labels were made, and so how it re-judges a variant ("When LLM Judges
Inflate Scores", section 3: the re-judging must be the original judgment with only the passage
changed).

The judge (:class:`~judgelab.studies.perturbations.settings.OriginalJudge`) says which
(``original``, ``perturbations.original``):

* ``peras`` - the PERAS judge job of the study's ``template`` and ``persona`` (the PERAS plan's
  judge: :func:`judgelab.llm.judging.run_judgments`, persona || template, the label read by the
  PERAS ``answer`` mode);
* ``overrating`` - the overrating study's graded pointwise run (its ``overrating/graded``
  UMBRELA template, no persona, the label parsed where it is generated, the token confidence
  beside it: :func:`judgelab.llm.readings.run_pointwise`), so Table 1, the
  transition matrices and Figures 1 and 3 rest on one set of labels per judge, as in the paper.

Both give one row per pair with ``label`` (nullable) and ``parsed``; the request builders are the
judge jobs' own, so an unchanged passage's request is the original's (a cache hit).
"""

from __future__ import annotations

import pandas as pd

from judgelab.errors import InputError
from judgelab.llm.backends.base import Completion, Request
from judgelab.llm.client import CachedClient
from judgelab.llm.judging import judgment_requests, read_judgment, run_judgments
from judgelab.llm.readings import Prompt, pointwise_requests, reading_cells, run_pointwise
from judgelab.studies.perturbations.settings import ORIGINALS, OriginalJudge

__all__ = ["ORIGINALS", "check_original", "judge_variant", "label_of", "variant_requests"]


def check_original(judge: OriginalJudge) -> None:
    """A judge whose ``original`` is none of :data:`ORIGINALS` fails naming the config key."""
    if judge.original not in ORIGINALS:
        raise InputError(
            f"unknown source {judge.original!r} ({', '.join(ORIGINALS)})", key="perturbations.original"
        )


def _prompt(judge: OriginalJudge) -> Prompt:
    """The overrating pointwise prompt of the judge (its template and labels)."""
    return Prompt(judge.template, tuple(judge.labels), "judgment")


def variant_requests(pairs: pd.DataFrame, judge: OriginalJudge) -> list[Request]:
    """The requests judging ``pairs`` (query, passage) as the original judgment did (``judge``:
    resolved, its persona the instruction itself)."""
    check_original(judge)
    if judge.original == "overrating":
        return pointwise_requests(pairs, _prompt(judge), max_tokens=judge.max_tokens)
    return judgment_requests(pairs, judge)


def label_of(completion: Completion | dict, judge: OriginalJudge):
    """The label (int) of one answer as the original judgment reads it, or None (missing)."""
    comp = Completion.from_json(completion) if isinstance(completion, dict) else completion
    if judge.original == "overrating":
        return reading_cells(comp, judge.labels, max_tokens=judge.max_tokens)["label"]
    return read_judgment(comp.text, comp.label_probs, judge.labels, judge.answer, judge.parser)[0]


def judge_variant(
    pairs: pd.DataFrame,
    judge: OriginalJudge,
    client: CachedClient,
    *,
    desc: str = "rejudge",
    progress: bool = True,
) -> pd.DataFrame:
    """Judge ``pairs`` as the original judgment did (``judge``: resolved): the judgment table of
    its judge job (PERAS's columns, or the overrating pointwise columns with both token
    confidences)."""
    check_original(judge)
    if judge.original == "overrating":
        return run_pointwise(
            pairs, _prompt(judge), client, max_tokens=judge.max_tokens, desc=desc, progress=progress
        )
    return run_judgments(pairs, judge, client, desc=desc, progress=progress)
