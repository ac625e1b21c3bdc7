import pytest

from judgelab.errors import InputError
from judgelab.personas import PAPER_ORDER, load_persona_file, resolve_personas
from judgelab.prompts import build_messages, fill, load_template, parse_confidence, parse_label


@pytest.mark.parametrize("text,label", [
    ("2", 2), (" 3\n", 3), ("[1]", 1), ("0.", 0), ("**2**", 2),
    ("Final score: 2", 2), ("M: 2, T: 1, O: 3", 3), ("##final score: 1", 1),
    ("0\n\nThe passage is about pets", 0),
])
def test_parse_label_accepts(text, label):
    assert parse_label(text) == label


@pytest.mark.parametrize("text", [
    "", "You are a person with very low Agreeableness.", "1. 1.\n2. 2.\n3. 3", "5", "2.5",
    "It is 2 or 3",
])
def test_parse_label_rejects(text):
    assert parse_label(text) is None


@pytest.mark.parametrize("text,value", [("85", 85.0), ("85%", 85.0), ("Confidence: 90.5", 90.5),
                                        ("0", 0.0), ("100", 100.0), (" 100\n\nThe answer is", 100.0),
                                        ("My confidence score is 70.", 70.0), ("[95]", 95.0)])
def test_parse_confidence(text, value):
    assert parse_confidence(text) == value


@pytest.mark.parametrize("text", ["150", "none", "", "Your given relevance score is 0,",
                                  "The passage scores 2 of 3 and I am 80 sure"])
def test_parse_confidence_rejects(text):
    assert parse_confidence(text) is None


def test_paper_personas_are_table_1_verbatim():
    personas = load_persona_file("peras_table1")
    assert list(personas) == PAPER_ORDER
    assert personas["default"].instruction == ""
    hc = personas["HC"].instruction
    assert hc.startswith("You are a person with very high Conscientiousness.")  # stray "c" dropped
    assert personas["LA"].instruction.endswith("don’t shy away from disagreeing or pointing out flaws.")
    assert personas["HO"].personality_type == "High Openness"


def test_templates_are_the_papers():
    wo = load_template("peras/wo_cot")
    assert wo.startswith("You are an expert in evaluating the relevance of text passages")
    assert "Query: {query} Passage: {document}" in wo
    assert wo.endswith("just a number from 0 to 3.")
    w = load_template("peras/w_cot")
    assert "Only provide your final socre without providing any reasoning." in w  # sic
    conf = load_template("peras/confidence")
    assert "Your given relevance score is {predicted_score}, please give a confidence score" in conf


def test_persona_concatenation():
    task = fill("Q: {query} D: {document} {kept}", query="q{x}", document="d")
    assert task == "Q: q{x} D: d {kept}"  # literal replacement: other braces untouched
    assert build_messages("", task) == [{"role": "user", "content": task}]
    assert build_messages("Be blunt.", task) == [{"role": "user", "content": "Be blunt.\n\n" + task}]
    assert build_messages("Be blunt.", task, "system") == [
        {"role": "system", "content": "Be blunt."}, {"role": "user", "content": task}]
    with pytest.raises(InputError, match="persona_placement"):
        build_messages("x", task, "middle")


def test_custom_personas_and_errors():
    cfg = {"personas": {"include": ["default", "LA"], "custom": {"skeptic": "Doubt everything."}}}
    got = resolve_personas(cfg)
    assert list(got) == ["default", "LA", "skeptic"]
    assert got["skeptic"].instruction == "Doubt everything." and got["skeptic"].origin == "custom"
    with pytest.raises(InputError, match="personas.include"):
        resolve_personas({"personas": {"include": ["XX"]}})
    with pytest.raises(InputError, match="personas.custom.LA"):
        resolve_personas({"personas": {"custom": {"LA": "shadow"}}})


def test_bad_persona_yaml_names_file_and_line(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("personas:\n  A: {instruction: 'x'\n  B: [\n")
    with pytest.raises(InputError, match=r"p\.yaml:\d+"):
        load_persona_file(str(bad))
