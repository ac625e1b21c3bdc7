"""Answer parsing, shared by every study (the label scales are :mod:`judgelab.data.labels`).

* Reading a label (:func:`parse_label`, :func:`locate_label`) or a 0-100 confidence
  (:func:`parse_confidence`) from an answer: an answer that does not parse is ``None`` (a missing
  answer, counted by the caller), never a label.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from judgelab.data.labels import GRADE_LABELS

_FINAL_KEYS = r"(?:final\s*score|score|\(O\)|\bO)"
_WORD_KEYS = r"(?:final\s*answer|answer|final\s*label|label|final\s*score|score)"
# a number-like token: sign, digits, decimals, a suffix ("-1", "2.5", "1st" are tokens of their own)
_NUMBER_TOKEN = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?[A-Za-z]*")


def _is_int(label: str) -> bool:
    return re.fullmatch(r"\d+", label) is not None


def parse_label(text: str, labels: Iterable[str] = GRADE_LABELS) -> int | str | None:
    """The label of an answer, or None (missing). ``labels``: the template's label set (default
    the grades 0-3); only its members parse. Integer labels come back as ``int``, others as the
    label string.

    Rules, in order: an answer that is only a label (``"2"``, ``"[2]"``, ``"2."``); an explicit
    final score (``Final score: 2``, ``O: 2``; the last one wins); for integer labels, the single
    distinct number in the text. A number is a whole token: ``-1``, ``2.5``, ``1st`` or ``4`` is
    not the label ``1``, ``2``, or any label of 0-3, so such answers (and several different
    numbers, or none) do not parse. For word labels (``A``/``B``...) only an answer that is the
    label or an explicit ``Answer: A`` / ``Label: A`` parses.
    """
    labels = tuple(str(x) for x in labels)
    label, _ = locate_label(text, labels)
    if label is None:
        return None
    return int(label) if all(_is_int(x) for x in labels) else label


def locate_label(
    text: str, labels: Iterable[str] = GRADE_LABELS, *, answer_keys: bool = False
) -> tuple[str | None, int | None]:
    """:func:`parse_label`'s label (as the label string) and the character offset in ``text``
    where the parser took it from, or ``(None, None)``. The offset tells which answer token
    carries the label (its label-token distribution is read there). ``answer_keys``: integer
    labels also accept an explicit ``Answer: 1`` / ``Final answer: 1`` (forced-choice templates
    whose answer is an option number); word labels always do.

    Where the label is the single distinct number of the answer, the offset is its LAST
    occurrence (a judge that reasons first states its label last)."""
    labels = tuple(str(x) for x in labels)
    numeric = all(_is_int(x) for x in labels)
    alt = "|".join(re.escape(x) for x in sorted(labels, key=len, reverse=True))
    s = text.strip()
    lead = len(text) - len(text.lstrip())
    m = re.fullmatch(r"[\[\(\*\s]*(" + alt + r")[\]\)\*\s.]*", s)
    if m:
        return m.group(1), lead + m.start(1)
    keys = (_FINAL_KEYS if not answer_keys else f"(?:{_WORD_KEYS}|{_FINAL_KEYS})") if numeric else _WORD_KEYS
    finals = list(re.finditer(r"(?i:" + keys + r")\s*[:=]?\s*\**\s*\[?(" + alt + r")\]?(?!\w|\.\d)", s))
    if finals:
        return finals[-1].group(1), lead + finals[-1].start(1)
    if not numeric:
        return None, None
    tokens = list(_NUMBER_TOKEN.finditer(s))
    if len({t.group(0) for t in tokens}) == 1 and tokens[-1].group(0) in labels:
        return tokens[-1].group(0), lead + tokens[-1].start()
    return None, None


_NUMBER = r"(\d+(?:\.\d+)?)"
_CONF_ONLY = re.compile(r"[\[\(\*\s]*" + _NUMBER + r"\s*%?[\]\)\*\s.]*")
_CONF_LEADING = re.compile(r"\s*" + _NUMBER + r"\s*%?\s*(?:\n|$)")
_CONF_EXPLICIT = re.compile(r"confidence(?:\s+score)?(?:\s+(?:is|of))?\s*[:=]?\s*" + _NUMBER, re.I)


def parse_confidence(text: str) -> float | None:
    """A confidence 0-100 from an answer, or None (missing).

    Accepted: an answer that is only a number (``"85"``, ``"85%"``, ``"[90]"``); an explicit
    ``Confidence: 85`` / ``confidence score of 85``; a number alone on the answer's first line
    (``"100\n\nThe answer is ..."``). Anything else does not parse, notably an answer that echoes
    the prompt (``"Your given relevance score is 0, ..."``): its number is the label, not a
    confidence. Values outside 0-100 do not parse.
    """
    m = _CONF_ONLY.fullmatch(text) or _CONF_EXPLICIT.search(text) or _CONF_LEADING.match(text)
    if not m:
        return None
    value = float(m.group(1))
    return value if 0.0 <= value <= 100.0 else None
