"""A judge's cost beside its quality (issue 28, item 4): the cost columns of a judge's label
table by hand (tokens once per request, cache hit or not; the model entry's prices, batch at its
factor; 0 dollars for a local model and its model seconds; NaN dollars for an API model listing
no prices; imported judges no call, marked so), how the plan counts each judge, and the
correlations job writing them into correlations.tsv and the leaderboard."""

from __future__ import annotations

import copy
import math

import pandas as pd
import pytest
import yaml
from conftest import ROOT

from judgelab.llm.pricing import COST_COLUMNS, Prices, judgment_cost
from judgelab.studies.ranking.settings import JudgeCost
from judgelab.wiring.facade import Project

TEST_CONFIG = yaml.safe_load((ROOT / ".test" / "ranking" / "config" / "config.yaml").read_text())


def table(hits):
    return pd.DataFrame(
        {
            "qid": ["1", "1", "2"],
            "docid": ["a", "b", "a"],
            "prompt_tokens": [1000, 2000, 3000],
            "completion_tokens": [10, 20, None],  # an answer whose count the backend gave not
            "latency_s": [0.5, 0.25, 1.0],
            "cache_hit": hits,
        }
    )


def test_cost_by_hand():
    prices = Prices(input=0.15, output=0.60, batch_factor=0.5)
    got = judgment_cost(table([False, True, True]), prices, backend="openai")
    assert list(got) == COST_COLUMNS
    usd = (6000 * 0.15 + 30 * 0.60) / 1e6  # cache hits count: a fresh run pays them
    assert got["calls"] == 3 and got["input_tokens"] == 6000 and got["output_tokens"] == 30
    assert got["usd"] == pytest.approx(usd) and got["usd_per_1k"] == pytest.approx(usd / 3 * 1000)
    assert got["model_s"] == pytest.approx(1.75) and got["cost_source"] == "live (openai)"
    batch = judgment_cost(table([False] * 3), prices, backend="openai", batch=True)
    assert batch["usd"] == pytest.approx(usd * 0.5) and batch["cost_source"] == "live (openai, batch)"
    local = judgment_cost(table([False] * 3), None, backend="local")
    assert local["usd"] == 0.0 and local["model_s"] == pytest.approx(1.75)
    assert math.isnan(judgment_cost(table([False] * 3), None, backend="openai")["usd"])
    imported = judgment_cost(table([False] * 3), None, backend=None, imported=True)
    assert (
        imported["calls"] == 0 and imported["usd"] == 0.0 and imported["cost_source"].startswith("imported")
    )


def test_the_plan_counts_each_judge_as_it_runs():
    cfg = copy.deepcopy(TEST_CONFIG)
    cfg["models"]["gpt"] = {
        "backend": "openai",
        "model": "gpt-4o-mini-2024-07-18",
        "api_key_env": "OPENAI_API_KEY",
        "batch": True,
        "prices": {"input": 0.15, "output": 0.6},
    }
    cfg["judges"] = ["smollm2", "gpt"]
    plan = Project(cfg, ROOT).plan("ranking")
    costs = {c.judge: c for c in plan.compared("fx").costs}
    assert costs["gpt"] == JudgeCost(
        judge="gpt",
        backend="openai",
        prices=(0.15, 0.6, 0.5),
        batch=True,
        template="wo_cot",
        persona="default",
    )
    assert costs["smollm2"].backend == "local" and costs["smollm2"].prices == ()
    assert costs["flip"].imported
    # a price change reruns the correlations job only (its param), not a judge job
    assert JudgeCost.from_param(costs["gpt"].param()) == costs["gpt"]
