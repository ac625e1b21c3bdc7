"""Label scales, shared by every study: the graded scale of TREC Deep Learning and LLMJudge,
grades 0-3 (:data:`GRADES`), answered with the single tokens "0".."3" (:data:`GRADE_LABELS`); the
binary scale 0/1; :data:`SCALES` names both by their answer tokens, :data:`SCALE_VALUES` by their
values; the TREC binarisation, grade >= 2 is relevant (:data:`TREC_RELEVANT`, :func:`binarise`)."""

from __future__ import annotations

import numpy as np

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
