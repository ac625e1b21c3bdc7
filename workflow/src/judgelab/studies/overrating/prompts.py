"""The overrating study's prompts and how an answer is read ("When LLM Judges Inflate Scores",
section 2): the checked pointwise and pairwise templates, the label of an answer and where in the
answer it is, and the token confidence at that position.
"""

from __future__ import annotations

import logging
from pathlib import Path

from judgelab.data.labels import SCALES
from judgelab.errors import InputError
from judgelab.llm.prompts import load_template_spec, register_kind
from judgelab.llm.readings import Prompt

log = logging.getLogger(__name__)


#: The template kind of the forced-choice pairwise prompt: Passage 1 and Passage 2 of a query,
#: answered with an option number (default labels 1 = Passage 1, 2 = Passage 2). The pointwise
#: prompts are ``judgment`` templates ({query}, {document}) whose ``labels:`` give the scale.
PAIRWISE_KIND = "overrating_pairwise"


register_kind(PAIRWISE_KIND, ["query", "passage_a", "passage_b"], labels=["1", "2"])


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


#: The two token confidences of a judgment (see :func:`label_reading`), by their names in the
#: config (``overrating.confidence``) and the tables' columns.
CONFIDENCE_DEFINITIONS = {"full": "confidence", "renormalised": "confidence_renorm"}
