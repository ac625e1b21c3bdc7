"""The answer parser (judgelab.llm.answers) on a hand-written corpus of answer shapes
(tests/fixtures/answers/labels.yaml): every expected reading and its rule, every refusal; the rules
the parser had first read every answer they read the same way under the full rule list (an answer
that parsed before keeps its label)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from judgelab.data.labels import GRADE_LABELS
from judgelab.llm.answers import (
    CONFIDENCE_RULES,
    LABEL_RULES,
    LEGACY_CONFIDENCE_RULES,
    LEGACY_LABEL_RULES,
    PARSER_VERSION,
    confidence_rules,
    label_rules,
    locate_label,
    parse_confidence,
    parse_label,
    read_confidence,
    read_label,
)

CORPUS = yaml.safe_load((Path(__file__).parent / "fixtures" / "answers" / "labels.yaml").read_text())


def _id(entry: dict) -> str:
    return repr(entry["text"])[:60]


@pytest.mark.parametrize("entry", CORPUS["labels"], ids=_id)
def test_every_label_shape_reads_as_written(entry):
    labels = tuple(entry.get("labels") or GRADE_LABELS)
    got = read_label(entry["text"], labels)
    assert (got.value, got.rule) == (entry["label"], entry["rule"])
    if got.value is not None:  # the offset points at the label it read
        assert entry["text"][got.start : got.start + len(got.value)] == got.value


@pytest.mark.parametrize("entry", CORPUS["labels"], ids=_id)
def test_what_the_first_parser_read_stays_as_it_was(entry):
    labels = tuple(entry.get("labels") or GRADE_LABELS)
    before = read_label(entry["text"], labels, rules=LEGACY_LABEL_RULES)
    after = read_label(entry["text"], labels)
    if before.value is not None:
        assert (after.value, after.start, after.rule) == (before.value, before.start, before.rule)
    # parse_label / locate_label read with every rule (parser version 2); version 1's rules by name
    assert parse_label(entry["text"], labels) == (
        None if after.value is None else int(after.value) if after.value.isdigit() else after.value
    )
    assert parse_label(entry["text"], labels, rules=label_rules(1)) == (
        None if before.value is None else int(before.value) if before.value.isdigit() else before.value
    )
    assert locate_label(entry["text"], labels) == (after.value, after.start)


@pytest.mark.parametrize("entry", CORPUS["confidence"], ids=_id)
def test_every_confidence_shape_reads_as_written(entry):
    got = read_confidence(entry["text"])
    assert (got.value, got.rule) == (entry["value"], entry["rule"])
    before = read_confidence(entry["text"], rules=LEGACY_CONFIDENCE_RULES)
    if before.value is not None:
        assert (got.value, got.rule) == (before.value, before.rule)
    assert parse_confidence(entry["text"]) == got.value
    assert parse_confidence(entry["text"], rules=confidence_rules(1)) == before.value


def test_the_rules_are_named_in_their_order():
    assert list(LABEL_RULES) == [
        "label-only",
        "final-score",
        "single-number",
        "first-line",
        "label-with-scale",
    ]
    assert list(CONFIDENCE_RULES) == ["number-only", "explicit", "first-line", "verbal"]
    assert list(LEGACY_LABEL_RULES) == list(LABEL_RULES)[:3]
    for rule in {e["rule"] for e in CORPUS["labels"]} - {None}:
        assert rule in LABEL_RULES
    assert {e["rule"] for e in CORPUS["labels"]} - {None} == set(LABEL_RULES)  # every rule has a case
    assert {e["rule"] for e in CORPUS["confidence"]} - {None} == set(CONFIDENCE_RULES)


def test_answer_keys_read_an_option_number_only_when_asked():
    plain = read_label("Final answer: 2", ("1", "2"))
    assert (plain.value, plain.rule) == ("2", "single-number")
    keyed = read_label("Final answer: 2", ("1", "2"), answer_keys=True)
    assert (keyed.value, keyed.rule) == ("2", "final-score")
    assert read_label("Answer: 2, not 1", ("1", "2")).value is None
    assert read_label("Answer: 2, not 1", ("1", "2"), answer_keys=True).value == "2"


def test_parser_versions_name_their_rules():
    assert label_rules(1) == LEGACY_LABEL_RULES and confidence_rules(1) == LEGACY_CONFIDENCE_RULES
    assert label_rules() == tuple(LABEL_RULES) == label_rules(PARSER_VERSION)
    assert confidence_rules() == tuple(CONFIDENCE_RULES)


@pytest.mark.parametrize("entry", CORPUS["labels"], ids=_id)
def test_version_3_reads_every_answer_version_2_read_and_version_2_reads_as_it_did(entry):
    """Version 3 only closes a scale's statement on a full stop: what version 2 read stays read
    the same; the sentence shapes version 2 refused are the only new readings."""
    labels = tuple(entry.get("labels") or GRADE_LABELS)
    v2 = read_label(entry["text"], labels, rules=label_rules(2))
    v3 = read_label(entry["text"], labels, rules=label_rules(3))
    if v2.value is not None:
        assert (v3.value, v3.start, v3.rule) == (v2.value, v2.start, v2.rule)
    elif v3.value is not None:
        assert v3.rule == "label-with-scale" and "." in entry["text"]


def test_a_sentence_ending_on_the_scale_was_refused_by_version_2_and_is_read_by_version_3():
    text = "I would rate this passage 2 out of 3."
    assert read_label(text, rules=label_rules(2)).value is None
    assert (read_label(text).value, read_label(text).rule) == ("2", "label-with-scale")
    assert label_rules(2)[-1] == "label-with-scale@2" and label_rules(3) == tuple(LABEL_RULES)
    assert PARSER_VERSION == 3
    for refused in ("2 out of 3.5", "2 out of 3.5.", "7 out of 10."):
        assert read_label(refused).value is None
