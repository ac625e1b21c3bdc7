import pytest

from judgelab.errors import InputError
from judgelab.llm.answers import parse_confidence, parse_label
from judgelab.llm.personas import PAPER_ORDER, load_persona_file, resolve_personas
from judgelab.llm.prompts import KINDS, build_messages, fill, load_template, load_template_spec, register_kind
from judgelab.project.config import validate


@pytest.mark.parametrize(
    "text,label",
    [
        ("2", 2),
        (" 3\n", 3),
        ("[1]", 1),
        ("0.", 0),
        ("**2**", 2),
        ("Final score: 2", 2),
        ("M: 2, T: 1, O: 3", 3),
        ("##final score: 1", 1),
        ("0\n\nThe passage is about pets", 0),
    ],
)
def test_parse_label_accepts(text, label):
    assert parse_label(text) == label


@pytest.mark.parametrize(
    "text",
    [
        "",
        "You are a person with very low Agreeableness.",
        "1. 1.\n2. 2.\n3. 3",
        "5",
        "2.5",
        "It is 2 or 3",
        # out of range, negative and ordinal answers are not grades
        "Score: -1",
        "-1",
        "4",
        "1st",
        "2nd",
        "3rd",
        "Score: 1st",
        "The 2nd passage",
        "Final score: 4",
        "O: -2",
        "+1",
    ],
)
def test_parse_label_rejects(text):
    assert parse_label(text) is None


def test_parse_label_accepts_only_the_template_label_set():
    binary = ["0", "1"]
    assert parse_label("1", binary) == 1
    assert parse_label("Final score: 0", binary) == 0
    assert parse_label("2", binary) is None  # a grade, but not a label of this template
    assert parse_label("Score: 3", binary) is None
    ab = ["A", "B"]
    assert parse_label("B", ab) == "B"
    assert parse_label("[A].", ab) == "A"
    assert parse_label("Answer: B", ab) == "B"
    assert parse_label("C", ab) is None
    assert parse_label("A passage about B", ab) is None  # no explicit answer: ambiguous
    assert parse_label("2", ab) is None


@pytest.mark.parametrize(
    "text,value",
    [
        ("85", 85.0),
        ("85%", 85.0),
        ("Confidence: 90.5", 90.5),
        ("0", 0.0),
        ("100", 100.0),
        (" 100\n\nThe answer is", 100.0),
        ("My confidence score is 70.", 70.0),
        ("[95]", 95.0),
    ],
)
def test_parse_confidence(text, value):
    assert parse_confidence(text) == value


@pytest.mark.parametrize(
    "text",
    ["150", "none", "", "Your given relevance score is 0,", "The passage scores 2 of 3 and I am 80 sure"],
)
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


def test_fill_equals_one_regex_substitution_pass():
    """fill (the template split once, then joined) gives what one ``re.sub`` pass over the tokens
    gives, errors included: every shipped template and 3,000 random strings of braces and
    placeholders, with no value, every value (values holding braces) and some values."""
    import random

    from judgelab.data.resources import resources_dir
    from judgelab.llm.prompts import _TOKEN

    def by_regex(template, /, **values):
        def sub(m):
            tok, name = m.group(0), m.group(1)
            if tok in ("{{", "}}"):
                return tok[0]
            if name is not None and name in values:
                return str(values[name])
            raise ValueError(f"template token {tok!r} has no value (given: {sorted(values)})")

        return _TOKEN.sub(sub, template)

    def outcome(f, template, values):
        try:
            return f(template, **values)
        except ValueError as exc:
            return str(exc).split(";")[0]

    texts = [p.read_text(encoding="utf-8") for p in (resources_dir() / "prompts").rglob("*.yaml")]
    rng = random.Random(1)
    parts = [
        "{",
        "}",
        "{{",
        "}}",
        "{q}",
        "{query}",
        "{ q }",
        "{}",
        "a",
        "\n",
        "{a\nb}",
        "}{",
        "{{q}}",
        "{{{q}",
    ]
    texts += ["".join(rng.choice(parts) for _ in range(rng.randint(0, 12))) for _ in range(3000)]
    for text in texts:
        names = {m.group(1) for m in _TOKEN.finditer(text) if m.group(1)}
        for values in ({}, {n: f"<{n}:{{x}}>" for n in names}, {"q": 1, "query": "Q"}):
            assert outcome(fill, text, values) == outcome(by_regex, text, values), (text, values)


def test_persona_concatenation():
    task = fill("Q: {query} D: {document} {{kept}}", query="q{x}", document="d")
    assert task == "Q: q{x} D: d {kept}"  # one pass: values are inserted as they are
    assert fill("{query}", query="{{document}}") == "{{document}}"
    with pytest.raises(ValueError, match="has no value"):
        fill("Q: {query} {kept}", query="q")
    assert build_messages("", task) == [{"role": "user", "content": task}]
    assert build_messages("Be blunt.", task) == [{"role": "user", "content": "Be blunt.\n\n" + task}]
    assert build_messages("Be blunt.", task, "system") == [
        {"role": "system", "content": "Be blunt."},
        {"role": "user", "content": task},
    ]
    with pytest.raises(InputError, match="persona_placement"):
        build_messages("x", task, "middle")


def test_custom_personas_and_errors():
    def cfg(**personas):  # a validated config: the schema's defaults filled in
        minimal = {
            "datasets": {"d": {"source": "sample", "format": "trec"}},
            "models": {"m": {"backend": "local"}},
        }
        return validate({**minimal, "judges": ["m"], "personas": personas})

    got = resolve_personas(cfg(include=["default", "LA"], custom={"skeptic": "Doubt everything."}))
    assert list(got) == ["default", "LA", "skeptic"]
    assert got["skeptic"].instruction == "Doubt everything." and got["skeptic"].origin == "custom"
    with pytest.raises(InputError, match="personas.include"):
        resolve_personas(cfg(include=["XX"]))
    with pytest.raises(InputError, match="personas.custom.LA"):
        resolve_personas(cfg(custom={"LA": "shadow"}))


def test_bad_persona_yaml_names_file_and_line(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("personas:\n  A: {instruction: 'x'\n  B: [\n")
    with pytest.raises(InputError, match=r"p\.yaml:\d+"):
        load_persona_file(str(bad))


def write_template(tmp_path, body, kind="judgment", extra=""):
    f = tmp_path / "t.yaml"
    text = "# a test template\n"
    if kind:
        text += f"kind: {kind}\n"
    f.write_text(text + extra + "template: |-\n" + "".join("  " + line + "\n" for line in body.split("\n")))
    return f


def test_template_checks_name_file_line_and_placeholder(tmp_path):
    # the YAML's lines: 1 comment, 2 kind, 3 `template: |-`, 4 first text line
    f = write_template(tmp_path, "Judge this.\nPassage: {document}")
    with pytest.raises(
        InputError, match=r"t\.yaml: the judgment template lacks the placeholder\(s\) \{query\}"
    ):
        load_template(str(f))
    f = write_template(tmp_path, "Query: {query}\nPassage: {document}\nAlso {qurey}")
    with pytest.raises(InputError, match=r"t\.yaml:6: unknown placeholder \{qurey\}.*did you mean \{query\}"):
        load_template(str(f))
    f = write_template(tmp_path, "Query: {query}\nPassage: {document} {")
    with pytest.raises(InputError, match=r"t\.yaml:5: stray '\{'"):
        load_template(str(f))
    f = write_template(tmp_path, 'Query: {query} {document} answer as {"score": 2}')
    with pytest.raises(InputError, match=r"t\.yaml:4: '\{\"score\": 2\}' is not a placeholder"):
        load_template(str(f))
    # the escape: doubled braces are literal, and the filled text has single ones
    f = write_template(tmp_path, 'Query: {query} {document} answer as {{"score": 2}} not {{query}}')
    t = load_template_spec(str(f))
    assert t.fill(query="q", document="d") == 'Query: q d answer as {"score": 2} not {query}'
    # the kind the caller needs
    with pytest.raises(
        InputError,
        match=r"t\.yaml: is a 'judgment' template, but a 'confidence' template "
        r"is needed here \(config key 'peras.confidence.template'\)",
    ):
        load_template_spec(str(f), kind="confidence", key="peras.confidence.template")
    with pytest.raises(
        InputError,
        match=r"t\.yaml: the confidence template lacks the placeholder\(s\) "
        r"\{predicted_score\}",
    ):
        load_template_spec(str(write_template(tmp_path, "{query} {document}", kind=None)), kind="confidence")
    with pytest.raises(InputError, match="declares no `kind:`"):
        load_template_spec(str(write_template(tmp_path, "{query} {document}", kind=None)))
    with pytest.raises(InputError, match="unknown template kind 'nope'.*register_kind"):
        load_template_spec(str(write_template(tmp_path, "{query}", kind="nope")))
    with pytest.raises(
        InputError, match=r"config key 'peras.templates.x.template': no prompt template 'peras/nope'"
    ):
        load_template_spec("peras/nope", kind="judgment", key="peras.templates.x.template")


def test_template_labels(tmp_path):
    assert load_template_spec("peras/wo_cot").labels == ("0", "1", "2", "3")
    assert load_template_spec("peras/confidence").labels is None
    t = load_template_spec(str(write_template(tmp_path, "{query} {document}", extra="labels: [0, 1]\n")))
    assert t.labels == ("0", "1")
    with pytest.raises(InputError, match="lists a label twice"):
        load_template_spec(str(write_template(tmp_path, "{query} {document}", extra="labels: [A, A]\n")))
    with pytest.raises(InputError, match="takes no `labels:`"):
        load_template_spec(
            str(
                write_template(
                    tmp_path, "{query} {document} {predicted_score}", kind="confidence", extra="labels: [A]\n"
                )
            )
        )


def test_register_kind_is_extensible(tmp_path):
    register_kind("pairwise_test", ["query", "document_a", "document_b"], labels=["A", "B"])
    assert (
        register_kind("pairwise_test", ["query", "document_a", "document_b"], labels=["A", "B"]) is not None
    )  # the same definition again: fine
    with pytest.raises(ValueError, match="already registered"):
        register_kind("pairwise_test", ["query"])
    f = write_template(tmp_path, "{query}\nA: {document_a}\nB: {document_b}", kind="pairwise_test")
    t = load_template_spec(str(f))
    assert (t.kind, t.labels) == ("pairwise_test", ("A", "B"))
    with pytest.raises(InputError, match=r"t\.yaml:4: unknown placeholder \{document\}"):
        load_template_spec(str(write_template(tmp_path, "{query} {document}", kind="pairwise_test")))
    del KINDS["pairwise_test"]
