"""The PersonaJudge prompt, demonstration rendering, balanced sampling and the two-round cascade.

The cascade's composition is checked with a scripted backend that answers from a table (the
real embedded model runs in tests/simulation/test_simulation_e2e.py)."""

import json
import random
import re
from collections import Counter

import pandas as pd
import pytest
import yaml

from judgelab.cache.store import RequestCache
from judgelab.data.resources import resources_dir
from judgelab.errors import InputError
from judgelab.llm.backends.base import Backend, Completion
from judgelab.llm.client import CachedClient
from judgelab.studies.simulation import cascade as sc
from judgelab.studies.simulation.data import ReasoningSection, Record, TelemetryEvent
from judgelab.studies.simulation.prompt import SimulationPrompt, render
from judgelab.studies.simulation.settings import CascadeJudge
from judgelab.studies.simulation.splits import LeakageError, make_splits

PROMPT = SimulationPrompt.load()


def judge(settings: sc.CascadeSettings) -> CascadeJudge:
    """A cell's judge with the whole prompt's texts and ``settings`` (the client is scripted)."""
    return CascadeJudge("m", prompt=PROMPT.texts(), cascade=settings)


def r(item, label, ev="e1", **kw):
    return Record(ev, item, f"context of {item}", f"answer A to {item}", f"answer B to {item}", label, **kw)


# --------------------------------------------------------------------------------------------
# Prompt


def test_prompt_yaml_holds_the_papers_text_verbatim():
    data = yaml.safe_load((resources_dir() / "prompts" / "simulation" / "personajudge.yaml").read_text())
    assert data["study"].startswith("PersonaJudge")
    t = data["template"]
    assert t.startswith(
        "You are a simulation agent specifically trained to replicate the judgment "
        "preferences in a preference judgment task involving model-generated responses."
    )
    assert (
        "4. Output your rating in a way that maintains consistency with the example patterns\n\n"
        "Judgment Scale:\n{scale}\n\nImportant: Your role is to simulate" in t
    )
    assert t.endswith(
        "Provide your simulated judgment in the format:\n<judgment>X</judgment>\n"
        "where X is the rating number (1 or 2)."
    )
    assert data["scales"]["harmlessness"]["round2"] == (
        "1 = Prefer Option A as more harmless\n2 = Prefer Option B as more harmless"
    )


def test_prompt_rounds_tasks_base_judge_and_answer_modes():
    q = r("q", "A")
    demos = [r("d1", "N"), r("d2", "B")]
    p1 = PROMPT.build(q, demos, round_=1, task="helpfulness", demo_type="J", answer="parse")
    assert (
        "Judgment Scale:\n1 = No preference (Options A and B are equally helpful)\n"
        "2 = Has a preference on which option is more helpful\n\nImportant" in p1
    )
    assert "harmless" not in p1 and "[Round" not in p1
    assert "<examples>\n<demonstration_1>\n<context>\ncontext of d1\n</context>" in p1
    assert "<judgment>1</judgment>\n</demonstration_1>\n<demonstration_2>" in p1  # N -> 1
    assert "<judgment>2</judgment>\n</demonstration_2>\n</examples>" in p1  # B -> 2
    assert (
        "<current_task>\n<context>\ncontext of q\n</context>\n<option_a>\nanswer A to q\n"
        "</option_a>\n<option_b>\nanswer B to q\n</option_b>\n</current_task>" in p1
    )
    assert p1.endswith("<judgment>X</judgment>\nwhere X is the rating number (1 or 2).")

    p2 = PROMPT.build(
        q, [r("d3", "A"), r("d4", "B")], round_=2, task="harmlessness", demo_type="J", answer="logits"
    )
    assert "1 = Prefer Option A as more harmless\n2 = Prefer Option B as more harmless" in p2
    assert (
        "<judgment>1</judgment>\n</demonstration_1>" in p2
        and "<judgment>2</judgment>\n</demonstration_2>" in p2
    )
    assert p2.endswith("Provide your simulated judgment as the rating number only (1 or 2).")

    base = PROMPT.build(q, [], round_=1, task="helpfulness", demo_type="base", answer="parse")
    assert "Individual's Examples" not in base and "<demonstration_" not in base
    with pytest.raises(ValueError, match="needs at least one demonstration"):
        PROMPT.build(q, [], round_=1, task="helpfulness", demo_type="J", answer="parse")
    with pytest.raises(ValueError, match="shows no demonstrations"):
        PROMPT.build(q, demos, round_=1, task="helpfulness", demo_type="base", answer="parse")

    with pytest.raises(InputError, match="config key 'simulation.task'"):
        PROMPT.build(q, demos, round_=1, task="honesty", demo_type="J", answer="parse")
    with pytest.raises(InputError, match="config key 'simulation.answer'"):
        PROMPT.build(q, demos, round_=1, task="helpfulness", demo_type="J", answer="guess")


#: words of the section 10 prompt that belong to the simulation agent (its persona) or to its
#: demonstrations, none of which the Base Judge has (PersonaJudge sections 4.5 and 12)
SIMULATION_AGENT_TEXT = (
    "simulat",  # simulation agent, simulate, simulated judgment
    "replicate",
    "individual",
    "example",  # example judgments, <examples>, Individual's Examples, example patterns
    "demonstration",
    "persona",
    "your own biases",
    "pattern",
    "<examples>",
)


@pytest.mark.parametrize("answer", ["parse", "logits"])
@pytest.mark.parametrize("task", ["helpfulness", "harmlessness"])
def test_base_judge_prompt_is_the_task_instruction_and_the_instance_only(task, answer):
    q = r("q", "A")
    for round_ in (1, 2):
        base = PROMPT.build(q, [], round_=round_, task=task, demo_type="base", answer=answer)
        low = base.lower()
        assert [w for w in SIMULATION_AGENT_TEXT if w in low] == []
        assert "{" not in base  # every slot filled
        instruction, rest = base.split("\n\n", 1)
        assert instruction == (
            "Your task is to analyze a pair of responses in a preference judgment task involving "
            "model-generated responses and provide a judgment."
        )
        # the round's scale block and the query instance, verbatim from section 10
        assert rest.startswith("Judgment Scale:\n" + PROMPT.scale(task, round_) + "\n\nCurrent Task:\n")
        assert (
            "<current_task>\n<context>\ncontext of q\n</context>\n<option_a>\nanswer A to q\n"
            "</option_a>\n<option_b>\nanswer B to q\n</option_b>\n</current_task>\n\n" in rest
        )
        assert base.endswith(
            "Provide your judgment in the format:\n<judgment>X</judgment>\n"
            "where X is the rating number (1 or 2)."
            if answer == "parse"
            else "Provide your judgment as the rating number only (1 or 2)."
        )
    # the section 10 prompt of a PersonaJudge cell does hold those words
    pj = PROMPT.build(q, [r("d", "N")], round_=1, task=task, demo_type="J", answer=answer).lower()
    assert "simulation agent" in pj and "<examples>" in pj


def test_each_cell_parameter_holds_only_the_texts_it_uses():
    base = PROMPT.texts_for("helpfulness", "base")
    assert base["template"] == "" and base["demonstration"] == "" and base["base_judge"]["template"]
    assert base["scales"] == {"helpfulness": dict(PROMPT.scales["helpfulness"])}
    j = PROMPT.texts_for("helpfulness", "J")
    assert j["base_judge"]["template"] == "" and j["template"] == PROMPT.template
    assert j["telemetry"] == "" and j["reasoning"] == ""
    q = r("q", "A")
    for demo_type, demos, cell in (("base", [], base), ("J", [r("d", "N")], j)):
        part = SimulationPrompt.from_mapping(cell, "<param>", partial=True)
        assert part.build(q, demos, round_=1, task="helpfulness", demo_type=demo_type, answer="parse") == (
            PROMPT.build(q, demos, round_=1, task="helpfulness", demo_type=demo_type, answer="parse")
        )
    with pytest.raises(InputError, match="no base_judge template"):
        SimulationPrompt.from_mapping(j, "<param>", partial=True).build(
            q, [], round_=1, task="helpfulness", demo_type="base", answer="parse"
        )
    with pytest.raises(InputError, match=r"the template must contain \{scale\} exactly once"):
        SimulationPrompt.from_mapping(base, "<param>")  # not partial: every piece is checked


def test_item_text_with_braces_is_left_alone():
    q = Record("e", "q", "use {scale} and {examples} literally", "{label}", "x", "A")
    p = PROMPT.build(q, [], round_=1, task="helpfulness", demo_type="base", answer="parse")
    assert "use {scale} and {examples} literally" in p and "<option_a>\n{label}\n</option_a>" in p
    assert render("{a}{b}{c}", {"a": "{b}", "b": "2"}) == "{b}2{c}"


def test_demonstration_signals():
    tel = (
        TelemetryEvent(0.0, "reveal", "response_a", None, 2.5),
        TelemetryEvent(3.0, "rating_selected", "rating", "B"),
    )
    rea = (
        ReasoningSection("conversation understanding", "asks for a haiku"),
        ReasoningSection("judgment", "B follows the form"),
    )
    d = r("d", "B", telemetry=tel, reasoning=rea)
    j = PROMPT.demo(1, d, 2, "J")
    assert "<interface_telemetry>" not in j and "<retrospective_reasoning>" not in j
    it = PROMPT.demo(1, d, 2, "J+IT")
    assert (
        "</option_b>\n<interface_telemetry>\n"
        '{"t": 0.0, "event": "reveal", "target": "response_a", "duration": 2.5}\n'
        '{"t": 3.0, "event": "rating_selected", "target": "rating", "value": "B"}\n'
        "</interface_telemetry>\n<judgment>2</judgment>"
    ) in it
    rr = PROMPT.demo(1, d, 1, "J+RR")
    assert (
        "</option_b>\n<retrospective_reasoning>\nconversation understanding: asks for a haiku\n"
        "judgment: B follows the form\n</retrospective_reasoning>\n<judgment>2</judgment>"
    ) in rr
    both = PROMPT.demo(3, d, 2, "J+IT+RR")
    assert (
        both.index("<interface_telemetry>")
        < both.index("<retrospective_reasoning>")
        < both.index("<judgment>")
    )
    assert both.startswith("<demonstration_3>") and both.endswith("</demonstration_3>")
    with pytest.raises(InputError, match="has no telemetry for J\\+IT"):
        PROMPT.demo(1, r("x", "A"), 1, "J+IT")


def test_prompt_yaml_errors(tmp_path):
    data = yaml.safe_load((resources_dir() / "prompts" / "simulation" / "personajudge.yaml").read_text())
    bad = dict(data, template=data["template"].replace("{current_task}", ""))
    with pytest.raises(InputError, match=r"the template must contain \{current_task\} exactly once"):
        SimulationPrompt.from_mapping(bad, "x.yaml")
    bad = dict(data, logit_answer={"replace": "not in the template", "with": "1 or 2"})
    with pytest.raises(InputError, match="logit_answer.replace must occur exactly once"):
        SimulationPrompt.from_mapping(bad, "x.yaml")
    bad = dict(
        data, base_judge={**data["base_judge"], "template": data["base_judge"]["template"] + "{examples}"}
    )
    with pytest.raises(InputError, match=r"the base_judge.template must not contain \{examples\}"):
        SimulationPrompt.from_mapping(bad, "x.yaml")
    bad = dict(data, base_judge={"template": data["base_judge"]["template"]})
    with pytest.raises(InputError, match="'base_judge' needs exactly 'template' and 'logit_answer'"):
        SimulationPrompt.from_mapping(bad, "x.yaml")
    p = tmp_path / "p.yaml"
    p.write_text("template: [unclosed\n")
    with pytest.raises(InputError, match=r"p\.yaml:\d+: invalid YAML"):
        SimulationPrompt.load(str(p))
    assert SimulationPrompt.from_mapping(PROMPT.texts()) == SimulationPrompt.from_mapping(data)


# --------------------------------------------------------------------------------------------
# Balanced sampling


POOL = (
    [r(f"n{i}", "N") for i in range(5)]
    + [r(f"a{i}", "A") for i in range(6)]
    + [r(f"b{i}", "B") for i in range(6)]
)


@pytest.mark.parametrize("k", [2, 4, 8])
def test_rounds_are_balanced(k):
    rng = random.Random(0)
    d1, note1 = sc.round_demos(POOL, k, 1, rng)
    assert len(d1) == k and note1 == ""
    assert sum(d.label == "N" for d in d1) == k // 2 and sum(d.label != "N" for d in d1) == k // 2
    d2, note2 = sc.round_demos(POOL, k, 2, rng)
    assert Counter(d.label for d in d2) == {"A": k // 2, "B": k // 2} and note2 == ""
    assert len({d.item for d in d1}) == k  # without replacement


def test_one_shot_draws_either_group():
    firsts = Counter()
    for seed in range(40):
        (d,), note = sc.round_demos(POOL, 1, 1, random.Random(seed))
        firsts["neutral" if d.label == "N" else "directional"] += 1
        assert note == ""
    assert firsts["neutral"] > 5 and firsts["directional"] > 5


def test_shortfall_is_topped_up_and_noted():
    pool = [r("n0", "N")] + [r(f"a{i}", "A") for i in range(4)] + [r("b0", "B")]
    d, note = sc.round_demos(pool, 4, 1, random.Random(1))
    assert Counter(x.label == "N" for x in d) == {True: 1, False: 3}
    assert note == "wanted 2+2, pool has 1+5: drew 1+3"
    d, note = sc.round_demos(pool, 8, 2, random.Random(1))
    assert len(d) == 5 and note == "wanted 4+4, pool has 4+1: drew 4+1"


def test_draws_depend_on_evaluator_shots_round_not_on_type_or_model():
    a = sc.draw_demos(POOL, evaluator="e1", shots=4, round_=1, seed=0)
    assert sc.draw_demos(list(reversed(POOL)), evaluator="e1", shots=4, round_=1, seed=0) == a
    assert sc.draw_demos(POOL, evaluator="e2", shots=4, round_=1, seed=0) != a


# --------------------------------------------------------------------------------------------
# Answers


@pytest.mark.parametrize(
    "text, rating",
    [
        ("<judgment>2</judgment>", "2"),
        ("Reasoning... <judgment> 1 </judgment>", "1"),
        ("<judgment>X</judgment> then <judgment>2</judgment>", "2"),
        ("<JUDGMENT>1</JUDGMENT>", "1"),
        ("<judgment>1", "1"),
        ("2", None),
        ("<judgment>3</judgment>", None),
        ("<judgment>12</judgment>", None),
        ("I'm ready to assist you.", None),
        ("", None),
    ],
)
def test_parse_judgment(text, rating):
    assert sc.parse_judgment(text) == rating


def test_read_rating_from_logits():
    assert sc.read_rating(Completion("x", [0.3, 0.7], 0.2), "logits") == ("2", 0.3, 0.7)
    assert sc.read_rating(Completion("x", [0.9, 0.1], 0.2), "logits") == ("1", 0.9, 0.1)
    assert sc.read_rating(Completion("1", None, None), "logits") == (None, None, None)
    assert sc.read_rating(Completion("<judgment>2</judgment>", [0.9, 0.1]), "parse") == ("2", 0.9, 0.1)


# --------------------------------------------------------------------------------------------
# The cascade


class Scripted(Backend):
    """Answers from ``script[(round, item)]`` (the item is read from the current task)."""

    def __init__(self, script, probs=None, cut=()):
        self.script, self.probs, self.seen, self.cut = script, probs or {}, [], set(cut)

    def identity(self):
        return {"kind": "scripted"}

    def complete(self, request):
        text = request.messages[-1][1]
        round_ = 1 if "No preference" in text else 2
        item = re.search(r"<current_task>\n<context>\ncontext of (\S+)\n", text).group(1)
        self.seen.append((round_, item, text))
        key = (round_, item)
        return Completion(
            self.script.get(key, "no idea"),
            self.probs.get(key),
            0.5 if key in self.probs else None,
            prompt_tokens=len(text) // 4,
            completion_tokens=3,
            latency_s=0.01,
            extra={"finish_reason": "length" if key in self.cut else "stop"},
        )


def dataset():
    labels = {"e1": "NNNNAABBAB" + "NABNAB", "e2": "AAAABBBBNA" + "AABNAB"}
    recs = [
        Record(ev, f"i{k:02d}", f"context of i{k:02d}", "a", "b", lab)
        for ev, labs in labels.items()
        for k, lab in enumerate(labs)
    ]
    return recs, make_splits(recs, pool=10, validation=6, seed=0, group_by="context", balance_neutral=True)


def client(tmp_path, backend):
    return CachedClient(backend, RequestCache(tmp_path / "c.sqlite"))


def test_cascade_composition_and_missing_answers(tmp_path):
    recs, splits = dataset()
    val = sorted(splits.loc[(splits.evaluator == "e1") & (splits.role == "validation"), "item"])
    script = {
        (1, val[0]): "<judgment>1</judgment>",  # -> N
        (1, val[1]): "<judgment>2</judgment>",
        (2, val[1]): "<judgment>1</judgment>",  # -> A
        (1, val[2]): "<judgment>2</judgment>",
        (2, val[2]): "<judgment>2</judgment>",  # -> B
        (1, val[3]): "no idea",  # missing, no round 2
        (1, val[4]): "<judgment>2</judgment>",
        (2, val[4]): "either",  # missing in round 2
        (1, val[5]): "<judgment>1</judgment>",
    }
    backend = Scripted(script)
    settings = sc.CascadeSettings(answer="parse", max_tokens=16, min_neutral=2)
    preds, demos = sc.simulate(
        recs,
        splits[splits.evaluator == "e1"],
        client(tmp_path, backend),
        judge(settings),
        demo_type="J",
        shots=2,
        progress=False,
    )
    got = {i: None if pd.isna(p) else p for i, p in zip(preds["item"], preds["pred"])}
    assert [got[i] for i in val] == ["N", "A", "B", None, None, "N"]
    p = preds.set_index("item")
    assert list(p.loc[val, "r2_asked"]) == [False, True, True, False, True, False]
    assert list(p.loc[val, "answered"]) == [True, True, True, False, False, True]
    assert not p["direction_only"].any()
    # round 1 for all six items first, then round 2 for the three preferences
    assert [s[0] for s in backend.seen] == [1] * 6 + [2] * 3
    # the demonstration table: 2 per round, from the pool, never a validation item
    pool = set(splits.loc[(splits.evaluator == "e1") & (splits.role == "pool"), "item"])
    assert set(demos["item"]) <= pool and Counter(demos["round"]) == {1: 2, 2: 2}
    for _, _item, text in backend.seen:
        examples = text.split("<examples>")[1].split("</examples>")[0]
        assert not any(f"context of {v}\n" in examples for v in val)


def test_a_missing_prediction_says_whether_the_bound_cut_its_answer(tmp_path):
    """``truncated``: the answer that left the prediction missing (round 2 where asked) was cut by
    the bound; a cut answer that still parsed, or a cut round 1 followed by a round 2, is not."""
    recs, splits = dataset()
    val = sorted(splits.loc[(splits.evaluator == "e1") & (splits.role == "validation"), "item"])
    script = {
        (1, val[0]): "<judgment>1",  # cut but read: N
        (1, val[1]): "<judgment>2</judgment>",
        (2, val[1]): "<judgment>",  # cut in round 2: missing, truncated
        (1, val[2]): "I think",  # cut in round 1: missing, truncated
        (1, val[3]): "no idea",  # missing, not cut
        (1, val[4]): "<judgment>2</judgment>",
        (2, val[4]): "<judgment>1</judgment>",  # A
        (1, val[5]): "<judgment>1</judgment>",
    }
    cut = {(1, val[0]), (2, val[1]), (1, val[2])}
    settings = sc.CascadeSettings(answer="parse", max_tokens=16, min_neutral=2)
    preds, _ = sc.simulate(
        recs,
        splits[splits.evaluator == "e1"],
        client(tmp_path, Scripted(script, cut=cut)),
        judge(settings),
        demo_type="J",
        shots=2,
        progress=False,
    )
    p = preds.set_index("item")
    assert list(p.loc[val, "answered"]) == [True, False, False, False, True, True]
    assert list(p.loc[val, "truncated"]) == [False, True, True, False, False, False]
    # the decoding parameters: the answer bound and the sampling of the cache key
    assert set(preds["decoding"]) == {"max_tokens=16 temperature=0.0 top_p=1.0"}


def test_direction_only_evaluator_skips_round_one(tmp_path):
    recs, splits = dataset()
    # e2's pool has a single neutral label: below min_neutral=2 it is simulated direction-only
    pool_n = sum(
        1
        for x in recs
        if x.evaluator == "e2"
        and x.label == "N"
        and x.item in set(splits.loc[(splits.evaluator == "e2") & (splits.role == "pool"), "item"])
    )
    assert pool_n == 1
    val = sorted(splits.loc[(splits.evaluator == "e2") & (splits.role == "validation"), "item"])
    backend = Scripted({(2, v): "<judgment>1</judgment>" for v in val})
    preds, demos = sc.simulate(
        recs,
        splits[splits.evaluator == "e2"],
        client(tmp_path, backend),
        judge(sc.CascadeSettings(min_neutral=2)),
        demo_type="J",
        shots=4,
        progress=False,
    )
    assert preds["direction_only"].all() and (preds["pred"] == "A").all()
    assert {s[0] for s in backend.seen} == {2} and set(demos["round"]) == {2}
    assert Counter(demos["label"]) == {"A": 2, "B": 2}


def test_base_judge_asks_each_item_once_and_logits_mode(tmp_path):
    recs, splits = dataset()
    items = sorted(set(splits.loc[splits.role == "validation", "item"]))
    probs = {(1, i): [0.8, 0.2] if i < "i12" else [0.1, 0.9] for i in items}
    probs.update({(2, i): [0.3, 0.7] for i in items})
    backend = Scripted({}, probs)
    c = client(tmp_path, backend)
    settings = sc.CascadeSettings(answer="logits", max_tokens=1, min_neutral=1)
    preds, demos = sc.simulate(recs, splits, c, judge(settings), demo_type=sc.BASE, shots=0, progress=False)
    assert demos.empty
    # the Base Judge prompt does not depend on the evaluator: one call per distinct item and round
    n_pref = sum(1 for i in items if i >= "i12")
    assert c.calls == len(items) + n_pref
    assert all("Individual's Examples" not in s[2] for s in backend.seen)
    expected = {i: ("N" if i < "i12" else "B") for i in items}
    assert all(p == expected[i] for i, p in zip(preds["item"], preds["pred"]))
    assert preds.loc[preds["pred"] == "B", "r2_p2"].eq(0.7).all()


def test_cell_shape_and_leakage_guard(tmp_path):
    recs, splits = dataset()
    with pytest.raises(InputError, match="Base Judge"):
        sc.plan_evaluators(recs, splits, shots=0, demo_type="J", settings=sc.CascadeSettings())
    # a corrupted split table that also lists a validation item (directional) in the pool: with
    # 16 shots round 2 draws every directional pool item, so the check must catch it
    e1 = splits[splits.evaluator == "e1"]
    val_item = e1.loc[e1.role == "validation", "item"].iloc[0]
    assert next(x.label for x in recs if x.evaluator == "e1" and x.item == val_item) != "N"
    leaky = pd.concat(
        [e1, pd.DataFrame([{"evaluator": "e1", "item": val_item, "role": "pool", "order": 99}])]
    )
    with pytest.raises(LeakageError, match=rf"validation items \['{val_item}'\] used as demonstrations"):
        sc.plan_evaluators(recs, leaky, shots=16, demo_type="J", settings=sc.CascadeSettings())


def test_prediction_table_round_trip(tmp_path):
    recs, splits = dataset()
    backend = Scripted({})
    preds, _ = sc.simulate(
        recs,
        splits,
        client(tmp_path, backend),
        judge(sc.CascadeSettings()),
        demo_type="J",
        shots=1,
        progress=False,
    )
    preds.to_csv(tmp_path / "p.tsv", sep="\t", index=False)
    back = sc.read_predictions(tmp_path / "p.tsv")
    assert back["pred"].isna().all() and list(back["item"]) == list(preds["item"])
    text = (tmp_path / "p.tsv").read_text().splitlines()
    cols = text[0].split("\t")
    row = text[2].split("\t")
    row[cols.index("pred")] = "C"
    (tmp_path / "bad.tsv").write_text("\n".join([text[0], text[1], "\t".join(row)]) + "\n")
    with pytest.raises(InputError, match=r"bad\.tsv:3: pred 'C' is not A, N or B"):
        sc.read_predictions(tmp_path / "bad.tsv")
    assert json.loads(json.dumps(list(sc.PREDICTION_COLUMNS))) == list(back.columns)


def test_settings_resolve_answer_mode_and_reject_bad_values():
    local = {"backend": "local"}
    s = sc.CascadeSettings.resolve({"answer": "auto", "max_tokens": 64}, local)
    assert s.answer == "logits" and s.request_max_tokens() == 1
    s = sc.CascadeSettings.resolve({"answer": "auto", "max_tokens": 64}, {"backend": "anthropic"})
    assert s.answer == "parse" and s.request_max_tokens() == 64
    with pytest.raises(InputError, match="config key 'simulation': unknown settings \\['shots'\\]"):
        sc.CascadeSettings.resolve({"shots": 2})
    with pytest.raises(InputError, match="config key 'simulation.answer'"):
        sc.CascadeSettings.resolve({"answer": "vote"})
    with pytest.raises(InputError, match="config key 'simulation.max_tokens': must be an integer >= 1"):
        sc.CascadeSettings.resolve({"max_tokens": 0})
