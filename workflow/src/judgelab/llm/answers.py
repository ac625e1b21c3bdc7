"""Answer parsing, shared by every study (the label scales are :mod:`judgelab.data.labels`).

An answer is read by named rules applied in a stated order; the first rule that reads a label
(or a confidence) gives it, and its name is recorded with the reading (:class:`Reading`), so a
table says how each label was read. An answer no rule reads is ``None`` (a missing answer, counted
by the caller), never a label.

Label rules (:data:`LABEL_RULES`, in order):

* ``label-only`` - the answer is a label and nothing else (``"2"``, ``"[2]"``, ``"2."``);
* ``final-score`` - an explicit final score (``Final score: 2``, ``O: 2``; the last one wins),
  for word labels (``A``/``B``) an explicit ``Answer: A`` / ``Label: A``;
* ``single-number`` - for integer labels, the one distinct number of the answer;
* ``first-line`` - a label alone on the answer's first line, followed by other text
  (``"2\\n\\nNext steps: 1. ..."``, as a persona told to list next steps writes);
* ``label-with-scale`` - one label beside a statement of the template's scale, which is not read
  as a label (``"2 on the 0 to 3 scale"``, ``"2 out of 3"``, ``"I'd give this a 2 (scale 0-3)"``,
  ``"I would rate this passage 2 out of 3."``: a full stop, ``!``, ``?`` or ``)`` after the
  scale's top closes it, while ``"2 out of 3.5"`` states no scale of the template's).

Refused (missing): several different labels, a number outside the scale or not whole (``4``,
``-1``, ``2.5``, ``1st``), an answer that echoes the scale's definitions, a scale that is not the
template's. The first three rules are the parser's first version (:data:`LEGACY_LABEL_RULES`):
every answer they read reads the same under the later rules too, which only read answers the
earlier ones leave missing.

:data:`PARSER_VERSION` names the rules in use (1: the first version's rules; 2: every rule
below, a full stop right after the scale's top leaving the statement unread; 3: every rule as
described here); the judge jobs carry it in their params, so a change of the rules reruns them
from the request cache (cache hits, no request sent) and every judgment row records the rule that
read it. An earlier version's rules read as they did then (:data:`EARLIER_LABEL_RULES`).

Confidence rules (:data:`CONFIDENCE_RULES`): ``number-only`` (``"85"``, ``"85%"``, ``"[90]"``),
``explicit`` (``Confidence: 85``, ``confidence score of 85``), ``first-line`` (a number alone on
the first line), ``verbal`` (``"I'd say 90"``, ``"about 85% confident"``); values outside 0-100
are missing, and so is an answer that echoes the prompt (``"Your given relevance score is 0"``:
its number is the label, not a confidence).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from judgelab.data.labels import GRADE_LABELS

_FINAL_KEYS = r"(?:final\s*score|score|\(O\)|\bO)"
_WORD_KEYS = r"(?:final\s*answer|answer|final\s*label|label|final\s*score|score)"
# a number-like token: sign, digits, decimals, a suffix ("-1", "2.5", "1st" are tokens of their own)
_NUMBER_TOKEN = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?[A-Za-z]*")


@dataclass(frozen=True)
class Reading:
    """What a rule read from an answer: the label (as the label string) or the confidence, the
    character offset in the answer it was read at (the label's token carries its distribution),
    and the rule's name; all None when no rule read the answer."""

    value: str | float | None = None
    start: int | None = None
    rule: str | None = None


MISSING = Reading()


def _is_int(label: str) -> bool:
    return re.fullmatch(r"\d+", label) is not None


@dataclass(frozen=True)
class _Answer:
    """An answer prepared for the label rules."""

    text: str
    stripped: str
    lead: int
    labels: tuple[str, ...]
    numeric: bool
    alt: str
    answer_keys: bool


def _label_only(a: _Answer) -> Reading:
    m = re.fullmatch(r"[\[\(\*\s]*(" + a.alt + r")[\]\)\*\s.]*", a.stripped)
    return Reading(m.group(1), a.lead + m.start(1), "label-only") if m else MISSING


def _final_score(a: _Answer) -> Reading:
    if a.numeric:
        keys = f"(?:{_WORD_KEYS}|{_FINAL_KEYS})" if a.answer_keys else _FINAL_KEYS
    else:
        keys = _WORD_KEYS
    pattern = r"(?i:" + keys + r")\s*[:=]?\s*\**\s*\[?(" + a.alt + r")\]?(?!\w|\.\d)"
    finals = list(re.finditer(pattern, a.stripped))
    if not finals:
        return MISSING
    return Reading(finals[-1].group(1), a.lead + finals[-1].start(1), "final-score")


def _single_number(a: _Answer) -> Reading:
    """The last occurrence of the answer's one distinct number (a judge that reasons first states
    its label last)."""
    if not a.numeric:
        return MISSING
    tokens = list(_NUMBER_TOKEN.finditer(a.stripped))
    if len({t.group(0) for t in tokens}) == 1 and tokens[-1].group(0) in a.labels:
        return Reading(tokens[-1].group(0), a.lead + tokens[-1].start(), "single-number")
    return MISSING


def _first_line(a: _Answer) -> Reading:
    """A label alone on the first line (brackets or bold around it; no period, which would make
    ``1.`` a list's first item), with more text after it."""
    first, sep, rest = a.stripped.partition("\n")
    if not sep or not rest.strip():
        return MISSING
    m = re.fullmatch(r"[\[\(\*\s]*(" + a.alt + r")[\]\)\*\s:]*", first)
    return Reading(m.group(1), a.lead + m.start(1), "first-line") if m else MISSING


#: What may follow the scale's top for the statement to end there: no letter or digit, and a full
#: stop only when no word or digit follows it (``3.`` ends a sentence, ``3.5`` is another number).
_SCALE_END = r"(?!\w|\.\w)"
#: Parser version 2's: no letter, digit or full stop (``2 out of 3.`` was refused).
_SCALE_END_2 = r"(?![\w.])"


def _scale_patterns(low: str, high: str, end: str = _SCALE_END) -> list[str]:
    """How an answer states the scale ``low``..``high`` (numbers as whole tokens); ``end``: what
    may follow the top."""
    lo, hi = re.escape(low), re.escape(high)
    dash = r"\s*(?:-|–|—|to)\s*"
    return [
        # "on the 0 to 3 scale", "on a scale of 0-3", "(scale 0-3)", "on a 0-3 scale", "from 0 to 3"
        r"(?:on\s+)?(?:a|the)?\s*(?:scale|range)\s*(?:of|from)?\s*" + lo + dash + hi + end,
        r"(?<![\w.])" + lo + dash + hi + r"\s*(?:point\s+)?(?:scale|range)",
        r"\bfrom\s+" + lo + dash + hi + end,
        # "out of 3", "2/3"
        r"\bout\s+of\s+" + hi + end,
        r"(?<=\d)\s*/\s*" + hi + end,
    ]


def _label_with_scale(a: _Answer, end: str = _SCALE_END) -> Reading:
    """One distinct label left once every statement of the template's own scale (its lowest to
    its highest label) is taken out; a scale of other bounds leaves its numbers in (refused)."""
    if not a.numeric or len(a.labels) < 2:
        return MISSING
    ordered = sorted(a.labels, key=int)
    masked, found = a.stripped, False
    for pattern in _scale_patterns(ordered[0], ordered[-1], end):
        masked, n = re.subn(pattern, lambda m: " " * len(m.group(0)), masked, flags=re.I)
        found = found or n > 0
    if not found:
        return MISSING
    tokens = list(_NUMBER_TOKEN.finditer(masked))
    if len({t.group(0) for t in tokens}) == 1 and tokens[-1].group(0) in a.labels:
        return Reading(tokens[-1].group(0), a.lead + tokens[-1].start(), "label-with-scale")
    return MISSING


#: The label rules, in the order they apply (module docstring).
LABEL_RULES: dict[str, Callable[[_Answer], Reading]] = {
    "label-only": _label_only,
    "final-score": _final_score,
    "single-number": _single_number,
    "first-line": _first_line,
    "label-with-scale": _label_with_scale,
}
#: The parser's first version: what every label rule after them must leave unchanged.
LEGACY_LABEL_RULES = ("label-only", "final-score", "single-number")
#: Rules as an earlier parser version read them, by the name its version lists (the reading
#: records the rule's own name).
EARLIER_LABEL_RULES: dict[str, Callable[[_Answer], Reading]] = {
    "label-with-scale@2": lambda a: _label_with_scale(a, _SCALE_END_2),
}


def read_label(
    text: str | None,
    labels: Iterable[str] = GRADE_LABELS,
    *,
    answer_keys: bool = False,
    rules: Sequence[str] | None = None,
) -> Reading:
    """The first of ``rules`` (default: every rule of :data:`LABEL_RULES`, in order) that reads a
    label of ``labels`` (the template's label set) from ``text``. ``answer_keys``: integer labels
    also accept an explicit ``Answer: 1`` / ``Final answer: 1`` (forced-choice templates whose
    answer is an option number); word labels always do."""
    if not isinstance(text, str):
        return MISSING
    labels = tuple(str(x) for x in labels)
    a = _Answer(
        text=text,
        stripped=text.strip(),
        lead=len(text) - len(text.lstrip()),
        labels=labels,
        numeric=all(_is_int(x) for x in labels),
        alt="|".join(re.escape(x) for x in sorted(labels, key=len, reverse=True)),
        answer_keys=answer_keys,
    )
    for name in LABEL_RULES if rules is None else rules:
        got = (LABEL_RULES.get(name) or EARLIER_LABEL_RULES[name])(a)
        if got.value is not None:
            return got
    return MISSING


def parse_label(
    text: str, labels: Iterable[str] = GRADE_LABELS, *, rules: Sequence[str] | None = None
) -> int | str | None:
    """The label of an answer (:func:`read_label`), or None (missing). Integer labels come back as
    ``int``, others as the label string. ``rules``: which rules read it (None: all of them)."""
    labels = tuple(str(x) for x in labels)
    return label_value(read_label(text, labels, rules=rules), labels)


def label_value(got: Reading, labels: Sequence[str]) -> int | str | None:
    """A reading's label as a table holds it: ``int`` when every label of ``labels`` is an
    integer, else the label string; None when nothing was read."""
    if got.value is None:
        return None
    return int(got.value) if all(_is_int(str(x)) for x in labels) else str(got.value)


def locate_label(
    text: str,
    labels: Iterable[str] = GRADE_LABELS,
    *,
    answer_keys: bool = False,
    rules: Sequence[str] | None = None,
) -> tuple[str | None, int | None]:
    """:func:`read_label`'s label and the character offset in ``text`` where it was read, or
    ``(None, None)``: the offset tells which answer token carries the label (its label-token
    distribution is read there)."""
    got = read_label(text, labels, answer_keys=answer_keys, rules=rules)
    return (None, None) if got.value is None else (str(got.value), got.start)


_NUMBER = r"(\d+(?:\.\d+)?)"
_PERCENT = r"\s*(?:%|percent\b)?"
_CONF_ONLY = re.compile(r"[\[\(\*\s]*" + _NUMBER + r"\s*%?[\]\)\*\s.]*")
_CONF_LEADING = re.compile(r"\s*" + _NUMBER + r"\s*%?\s*(?:\n|$)")
_CONF_EXPLICIT = re.compile(r"confidence(?:\s+score)?(?:\s+(?:is|of))?\s*[:=]?\s*" + _NUMBER, re.I)
_CONF_VERBAL = (
    # "I'd say 90", "I would say about 85%", "roughly 80 percent"
    re.compile(
        r"\b(?:i'?d|i\s+would)\s+say\s+(?:about\s+|around\s+|roughly\s+|approximately\s+)?"
        + _NUMBER
        + _PERCENT,
        re.I,
    ),
    # "about 85% confident", "90 percent sure", "I am 75% certain"
    re.compile(r"(?<![\w.])" + _NUMBER + r"\s*(?:%|percent)\s+(?:confident|sure|certain)\b", re.I),
)


def read_confidence(text: str | None, *, rules: Sequence[str] | None = None) -> Reading:
    """The first confidence rule (:data:`CONFIDENCE_RULES`, in order; ``rules``: a subset) that
    reads a number from ``text``; a number outside 0-100 is missing."""
    if not isinstance(text, str):
        return MISSING
    for name in CONFIDENCE_RULES if rules is None else rules:
        m = CONFIDENCE_RULES[name](text)
        if m is not None:
            value = float(m.group(1))
            return Reading(value, m.start(1), name) if 0.0 <= value <= 100.0 else MISSING
    return MISSING


def _verbal(text: str) -> re.Match[str] | None:
    for pattern in _CONF_VERBAL:
        m = pattern.search(text)
        if m:
            return m
    return None


#: The confidence rules, in the order they apply (module docstring).
CONFIDENCE_RULES: dict[str, Callable[[str], re.Match[str] | None]] = {
    "number-only": _CONF_ONLY.fullmatch,
    "explicit": _CONF_EXPLICIT.search,
    "first-line": _CONF_LEADING.match,
    "verbal": _verbal,
}
#: The confidence parser's first version.
LEGACY_CONFIDENCE_RULES = ("number-only", "explicit", "first-line")


def parse_confidence(text: str, *, rules: Sequence[str] | None = None) -> float | None:
    """A confidence 0-100 from an answer (:func:`read_confidence`), or None (missing)."""
    got = read_confidence(text, rules=rules)
    return None if got.value is None else float(got.value)


#: The version of the rules in use (the module docstring); a judge job's params carry it.
PARSER_VERSION = 3
#: The label and the confidence rules of each version.
VERSIONS: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {
    1: (LEGACY_LABEL_RULES, LEGACY_CONFIDENCE_RULES),
    2: ((*tuple(LABEL_RULES)[:-1], "label-with-scale@2"), tuple(CONFIDENCE_RULES)),
    3: (tuple(LABEL_RULES), tuple(CONFIDENCE_RULES)),
}


def label_rules(version: int | None = None) -> tuple[str, ...]:
    """The label rules of parser ``version`` (None: :data:`PARSER_VERSION`)."""
    return VERSIONS[PARSER_VERSION if version is None else int(version)][0]


def confidence_rules(version: int | None = None) -> tuple[str, ...]:
    """The confidence rules of parser ``version`` (None: :data:`PARSER_VERSION`)."""
    return VERSIONS[PARSER_VERSION if version is None else int(version)][1]
