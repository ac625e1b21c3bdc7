"""Label scales, shared by every study: the graded scale of TREC Deep Learning and LLMJudge,
grades 0-3 (:data:`GRADES`), answered with the single tokens "0".."3" (:data:`GRADE_LABELS`); the
binary scale 0/1; :data:`SCALES` names both by their answer tokens, :data:`SCALE_VALUES` by their
values; the TREC binarisation, grade >= 2 is relevant (:data:`TREC_RELEVANT`, :func:`binarise`);
the checks of a template's labels against a scale (:func:`check_labels`) or the grades
(:func:`check_grade_labels`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from judgelab.errors import InputError

#: The graded relevance scale (TREC DL, LLMJudge): 0 non-relevant .. 3 perfectly relevant.
GRADES: tuple[int, ...] = (0, 1, 2, 3)


#: Its answer tokens (the default label set of a ``judgment`` template; single tokens for the
#: models' tokenizers, so their probabilities can be read at the answer position).
GRADE_LABELS: tuple[str, ...] = ("0", "1", "2", "3")


#: The scales a judge labels on, by their answer tokens.
SCALES: dict[str, tuple[str, ...]] = {"binary": ("0", "1"), "graded": GRADE_LABELS}


#: The same scales by their values.
SCALE_VALUES: dict[str, tuple[int, ...]] = {"binary": (0, 1), "graded": GRADES}


#: TREC binarisation of graded labels: relevant iff grade >= 2
TREC_RELEVANT = 2


def binarise(grades, threshold: int = TREC_RELEVANT) -> np.ndarray:
    """TREC rule: 1 (relevant) for grade >= ``threshold`` (2), else 0."""
    return (np.asarray(grades, dtype=int) >= threshold).astype(int)


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


def check_grade_labels(labels: Sequence[str], where: str, key: str) -> None:
    """Labels compared with the human grades (PERAS's templates): each one of :data:`GRADE_LABELS`;
    ``where`` names the template file, ``key`` its config key."""
    outside = [x for x in labels if x not in GRADE_LABELS]
    if outside:
        raise InputError(
            f"{where} declares labels {outside}: PERAS compares labels with the human grades {list(GRADE_LABELS)}",
            key=key,
        )
