"""Committees as judges (judgelab.analysis.committee; issue 28, item 6) by hand: each rule's label
(ties to the lower label), the quorum (a pair too few members labelled stays unlabelled), the
members' labels kept; and the ranking study's committees: a judge of the study beside the
others, its cost its members', bad config naming the key."""

from __future__ import annotations

import copy

import pandas as pd
import pytest
import yaml
from conftest import ROOT

from judgelab.analysis.committee import Committee, combine, committee_labels
from judgelab.errors import InputError
from judgelab.studies.ranking.settings import JudgeCost
from judgelab.wiring.facade import Project


@pytest.mark.parametrize(
    "labels, majority, median, mean",
    [
        ([2, 2, 0], 2, 2, 1),  # mean 1.33 -> 1
        ([0, 3], 0, 0, 2),  # a tie: the lower label; the lower middle; mean 1.5 -> 2 (half up)
        ([1, 2, 2, 3], 2, 2, 2),
        ([3, 0, 3, 0], 0, 0, 2),
        ([1], 1, 1, 1),
        ([0, 1, 2], 0, 1, 1),  # three-way tie: the lowest
    ],
)
def test_rules_by_hand(labels, majority, median, mean):
    assert combine(labels, "majority") == majority
    assert combine(labels, "median") == median
    assert combine(labels, "mean") == mean


def test_committee_labels_with_a_quorum():
    a = pd.DataFrame({"qid": ["1", "1", "2"], "docid": ["x", "y", "x"], "label": [2, 0, 1]})
    b = pd.DataFrame({"qid": ["1", "1"], "docid": ["x", "y"], "label": [3, None]}).astype({"label": "Int64"})
    c = pd.DataFrame({"qid": ["1", "2"], "docid": ["x", "x"], "label": [2, 3]})
    got = committee_labels({"a": a, "b": b, "c": c}, "majority").set_index(["qid", "docid"])
    assert got.loc[("1", "x"), "label"] == 2 and got.loc[("1", "x"), "labels"] == "2 3 2"
    assert pd.isna(got.loc[("1", "y"), "label"]) and got.loc[("1", "y"), "n_labelled"] == 1  # 1 of 3 < 2
    assert got.loc[("2", "x"), "label"] == 1 and got.loc[("2", "x"), "labels"] == "1 - 3"  # 1 vs 3: lower
    one = committee_labels({"a": a, "b": b, "c": c}, "mean", quorum=1).set_index(["qid", "docid"])
    assert one.loc[("1", "y"), "label"] == 0 and one.loc[("2", "x"), "label"] == 2
    with pytest.raises(ValueError, match="unknown committee rule"):
        committee_labels({"a": a}, "vote")


TEST_CONFIG = yaml.safe_load((ROOT / ".test" / "ranking" / "config" / "config.yaml").read_text())


def config(committees):
    cfg = copy.deepcopy(TEST_CONFIG)
    cfg["ranking"]["committees"] = committees
    return cfg


def test_a_committee_is_a_judge_of_the_ranking_study():
    plan = Project(config({"pair": {"judges": ["smollm2", "flip"], "rule": "mean"}}), ROOT).plan("ranking")
    assert plan.judges_of("fx") == ["smollm2", "flip", "pair"]
    assert ("pair", "human") in plan.comparisons("fx") and plan.qrels_kind("pair") == ("judge", "pair")
    assert plan.committee("pair") == Committee(name="pair", members=("smollm2", "flip"), rule="mean")
    assert plan.judge_cost("pair") == JudgeCost(
        judge="pair", backend="committee", members=("smollm2", "flip")
    )
    assert plan.labels_file("fx", "pair") == "results/ranking/fx/labels/pair.tsv"
    assert ("pair", "human") in plan.circularity("fx").references


@pytest.mark.parametrize(
    "committees, key",
    [
        ({"pair": {"judges": ["smollm2", "nobody"]}}, r"ranking.committees.pair.judges\[1\]"),
        ({"pair": {"judges": ["smollm2"]}}, "ranking.committees.pair.judges"),
        ({"smollm2": {"judges": ["smollm2", "flip"]}}, "ranking.committees.smollm2"),
        ({"pair": {"judges": ["smollm2", "flip"], "quorum": 3}}, "ranking.committees.pair.quorum"),
    ],
)
def test_bad_committees_name_the_key(committees, key):
    with pytest.raises(InputError, match=key):
        Project(config(committees), ROOT)


def test_an_unknown_rule_names_the_key():
    with pytest.raises(InputError, match="ranking.committees.pair.rule"):
        Project(config({"pair": {"judges": ["smollm2", "flip"], "rule": "vote"}}), ROOT)


def test_a_persona_committee_of_the_ranking_study():
    """`personas`: the live judge under each persona, `<judge>@<persona>`; under the study's own
    persona it is the judge's label file; the others come from ranking_persona_judge jobs (LLM
    jobs of the estimate) and their cost counts in the committee's."""
    plan = Project(config({"pc": {"judges": ["smollm2"], "personas": ["default", "LA", "HN"]}}), ROOT).plan(
        "ranking"
    )
    assert plan.judges_of("fx") == ["smollm2", "flip", "pc"]
    assert plan.committee("pc").members == ("smollm2", "smollm2@LA", "smollm2@HN")
    assert [plan.member_file("fx", m) for m in plan.committee("pc").members] == [
        "results/ranking/fx/labels/smollm2.tsv",
        "results/ranking/fx/labels/smollm2/LA.tsv",
        "results/ranking/fx/labels/smollm2/HN.tsv",
    ]
    assert plan.persona_members("fx") == [("smollm2@LA", "smollm2", "LA"), ("smollm2@HN", "smollm2", "HN")]
    costs = plan.compared("fx").member_costs
    assert [(c.judge, c.persona, c.backend) for c in costs] == [
        ("smollm2@LA", "LA", "local"),
        ("smollm2@HN", "HN", "local"),
    ]
    assert [
        dict(j.wildcards).get("persona") for j in plan.llm_jobs() if j.rule == "ranking_persona_judge"
    ] == [
        "LA",
        "HN",
    ]
    # the judge under LA: PERAS's judge of the template and that persona
    assert plan.judge("smollm2", "LA") == Project(config({}), ROOT).plan("peras").judge(
        "smollm2", "wo_cot", "LA"
    )


@pytest.mark.parametrize(
    "committees, key",
    [
        ({"pc": {"judges": ["flip"], "personas": ["default", "LA"]}}, r"ranking.committees.pc.judges\[0\]"),
        (
            {"pc": {"judges": ["smollm2"], "personas": ["default", "ZZ"]}},
            r"ranking.committees.pc.personas\[1\]",
        ),
        ({"pc": {"judges": ["smollm2"], "personas": ["LA", "LA"]}}, r"ranking.committees.pc.personas\[1\]"),
        ({"pc": {"judges": ["smollm2"], "personas": ["LA"]}}, "ranking.committees.pc.personas"),
        (
            {"pc": {"judges": ["smollm2"], "personas": ["LA", "HN"], "quorum": 3}},
            "ranking.committees.pc.quorum",
        ),
    ],
)
def test_bad_persona_committees_name_the_key(committees, key):
    with pytest.raises(InputError, match=key):
        Project(config(committees), ROOT)
