"""Expected-gain qrels (issue 28, item 2): a judge's expected grade sum_g p(g) g as each pair's
gain, scaled to integers for ir-measures. By hand: the qrels of a hand distribution; nDCG@3 of a
hand run under them equals nDCG computed here with the unscaled float gains (the scale leaves
nDCG unchanged, the rounding moves it by < 1e-3); the plan adds `<judge>@expected` comparisons
(the judge's reference; not a judge-built run); thresholded measures and imported judges refuse it
naming the key."""

from __future__ import annotations

import copy
import math

import pandas as pd
import pytest
import yaml
from conftest import ROOT

from judgelab.errors import InputError
from judgelab.studies.ranking.scores import EXPECTED_SCALE, expected_qrels, score_runs
from judgelab.wiring.facade import Project

TEST_CONFIG = yaml.safe_load((ROOT / ".test" / "ranking" / "config" / "config.yaml").read_text())


def labels() -> pd.DataFrame:
    p = [  # p0..p3 of four pairs, and one without a distribution
        (0.1, 0.2, 0.3, 0.4),
        (0.7, 0.2, 0.1, 0.0),
        (0.0, 0.0, 0.5, 0.5),
        (0.25, 0.25, 0.25, 0.25),
    ]
    rows = [
        {"qid": "1", "docid": d, "label": 3, "expected_grade": sum(k * x for k, x in enumerate(ps))}
        for d, ps in zip("abcd", p)
    ]
    rows.append({"qid": "1", "docid": "e", "label": 1, "expected_grade": None})
    return pd.DataFrame(rows)


def test_expected_qrels_by_hand():
    q = expected_qrels(labels())
    assert dict(zip(q["docid"], q["relevance"])) == {"a": 2000, "b": 400, "c": 2500, "d": 1500}
    assert "e" not in set(q["docid"])  # no distribution: unlabelled, never a guess


def dcg(gains):
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def test_ndcg_under_expected_gains_equals_the_float_gains():
    run = pd.DataFrame(
        {
            "qid": "1",
            "docid": ["b", "d", "a", "c"],
            "rank": [1, 2, 3, 4],
            "score": [4.0, 3.0, 2.0, 1.0],
            "tag": "r",
        }
    )
    got = score_runs({"r": run}, expected_qrels(labels()), ["nDCG@3"])
    value = float(got[(got["topic"] == "all")]["value"].iloc[0])
    exp = {"a": 2.0, "b": 0.4, "c": 2.5, "d": 1.5}
    want = dcg([exp[d] for d in ("b", "d", "a")]) / dcg(sorted(exp.values(), reverse=True)[:3])
    assert value == pytest.approx(want, abs=1e-3)
    assert EXPECTED_SCALE == 1000


def config(**ranking):
    cfg = copy.deepcopy(TEST_CONFIG)
    cfg["ranking"].update(ranking)
    return cfg


def test_the_plan_adds_the_expected_comparisons():
    plan = Project(config(expected_gain=["smollm2"], measures=["nDCG@10"]), ROOT).plan("ranking")
    comps = plan.comparisons("fx")
    assert ("smollm2@expected", "human+smollm2") in comps and ("smollm2", "human+smollm2") in comps
    assert plan.qrels_kind("smollm2@expected") == ("expected", "smollm2")
    assert "smollm2@expected" in plan.qrels_names("fx")
    assert all(not j.endswith("@expected") for j, _ in plan.circularity("fx").references)
    assert any("figures/scores/smollm2@expected/nDCG@10.png" in t for t in plan.targets())


@pytest.mark.parametrize(
    "ranking, key",
    [
        ({"expected_gain": ["smollm2"], "measures": ["nDCG@10", "P(rel=2)@5"]}, "ranking.expected_gain"),
        ({"expected_gain": ["flip"], "measures": ["nDCG@10"]}, r"ranking.expected_gain\[0\]"),
    ],
)
def test_bad_expected_gain_names_the_key(ranking, key):
    with pytest.raises(InputError, match=key):
        Project(config(**ranking), ROOT)
