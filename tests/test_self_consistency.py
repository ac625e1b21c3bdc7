"""Self-consistency (``models.<m>.temperature``, ``peras.repeats``): the cache key of a repeated
request (sample 0 keeps the key of before), the draws of a judge read from the logits, and the flip
rate, kappa and alpha between repeats and their majority on hand-made tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from judgelab.analysis.consistency import (
    draw_label,
    flip_rate,
    majority,
    pair_seed,
    repeat_alpha,
    repeat_kappa,
    tempered,
    wide_labels,
)
from judgelab.cache.keys import request_key
from judgelab.llm.backends import make_backend
from judgelab.llm.backends.base import Request
from judgelab.llm.client import cache_request, decoding

SPEC = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None}
#: the key of this request before temperature and samples were keys (computed at commit 8d4c399)
KEY_BEFORE = "c139edb7208f78f2de7dd9cb9e58e82b48972ddec6dc171ecaf3bc33a9a72078"


def request(sample: int = 0) -> Request:
    return Request.from_messages(
        [{"role": "user", "content": "Judge: q / p"}], 16, ("0", "1", "2", "3"), sample=sample
    )


@pytest.mark.parametrize("temperature", [None, 0, 0.0])
def test_sample_0_at_the_default_temperature_keeps_the_key_of_before(temperature):
    spec = SPEC if temperature is None else {**SPEC, "temperature": temperature}
    backend = make_backend(spec, "m", need_key=False)
    assert request_key(cache_request(backend, request(0))) == KEY_BEFORE
    assert "sample" not in cache_request(backend, request(0))
    assert decoding(backend, request(0)) == "max_tokens=16 temperature=0.0 top_logprobs=20 top_p=1.0"


def test_each_sample_and_the_temperature_are_keys_of_their_own():
    warm = make_backend({**SPEC, "temperature": 0.7}, "m", need_key=False)
    cold = make_backend(SPEC, "m", need_key=False)
    keys = {request_key(cache_request(b, request(s))) for b in (warm, cold) for s in range(3)}
    assert len(keys) == 6
    assert cache_request(warm, request(2))["sample"] == 2
    assert cache_request(warm, request(2))["sampling"]["temperature"] == 0.7
    with pytest.raises(ValueError, match="sample"):
        request(-1)


def test_tempered_distribution_by_hand():
    assert tempered([0.5, 0.25, 0.25, 0.0], 1.0) == pytest.approx([0.5, 0.25, 0.25, 0.0])
    # T = 0.5: p^2 renormalised: 0.25, 0.0625, 0.0625 over 0.375
    assert tempered([0.5, 0.25, 0.25, 0.0], 0.5) == pytest.approx([2 / 3, 1 / 6, 1 / 6, 0.0])
    # T = 2: sqrt(p) renormalised
    s = math.sqrt(0.5) + 2 * math.sqrt(0.25)
    assert tempered([0.5, 0.25, 0.25, 0.0], 2.0) == pytest.approx([math.sqrt(0.5) / s, 0.5 / s, 0.5 / s, 0])
    with pytest.raises(ValueError, match="temperature"):
        tempered([1.0], 0)


def test_draws_are_seeded_repeatable_and_follow_the_tempered_distribution():
    probs = [0.1, 0.2, 0.3, 0.4]
    seed = pair_seed("q1", "d1")
    first = [draw_label(probs, [0, 1, 2, 3], 0.7, s, seed) for s in range(8)]
    assert first == [draw_label(probs, [0, 1, 2, 3], 0.7, s, seed) for s in range(8)]
    assert len(set(first)) > 1  # the sample index changes the draw
    assert draw_label([0.0, 0.0, 1.0, 0.0], [0, 1, 2, 3], 0.7, 5, seed) == 2  # a sure label stays
    assert draw_label([0.5, 0.0, 0.5, 0.0], [0, 1], 0.7, 3, seed) == 0  # the template's labels only
    assert draw_label([None, None, None, None], [0, 1, 2, 3], 0.7, 0, seed) is None
    # over many pairs the draws follow p^(1/T)
    n = 2000  # the SD of a share is at most 0.011: 0.04 is 3.5 of it
    got = np.bincount([draw_label(probs, [0, 1, 2, 3], 0.7, 1, pair_seed("q", str(i))) for i in range(n)])
    assert got / n == pytest.approx(tempered(probs, 0.7), abs=0.04)


def repeats_table(rows: dict[str, list]) -> pd.DataFrame:
    """A hand-made repeats table: pair -> its k labels (None: missing)."""
    return pd.DataFrame(
        [
            {"qid": pair, "docid": "d", "sample": s, "label": pd.NA if v is None else v}
            for pair, labels in rows.items()
            for s, v in enumerate(labels)
        ]
    ).astype({"label": "Int64"})


HAND = {"a": [1, 1, 1], "b": [1, 2, 1], "c": [0, 0, None], "d": [3, 3, 3], "e": [2, 0, 0], "f": [0, 0, 0]}


def test_flip_rate_on_a_hand_table():
    wide = wide_labels(repeats_table(HAND))
    assert list(wide.columns) == [0, 1, 2]
    # complete pairs a, b, d, e, f (c has a missing label); b and e flip
    assert flip_rate(wide) == (pytest.approx(2 / 5), 5)
    assert flip_rate(wide_labels(repeats_table({"a": [1, None]}))) == (
        pytest.approx(math.nan, nan_ok=True),
        0,
    )


def test_kappa_and_alpha_between_repeats():
    wide = wide_labels(repeats_table(HAND))
    pairs = [(0, 1), (0, 2), (1, 2)]
    expected = []
    for i, j in pairs:
        both = wide[[i, j]].dropna()
        expected.append(cohen_kappa_score(both[i].astype(int), both[j].astype(int), labels=[0, 1, 2, 3]))
    assert repeat_kappa(wide) == pytest.approx(np.mean(expected))
    same = wide_labels(repeats_table({"a": [1, 1], "b": [2, 2], "c": [0, 0]}))
    assert repeat_kappa(same) == pytest.approx(1.0) and repeat_alpha(same) == pytest.approx(1.0)
    one = wide_labels(repeats_table({"a": [1, 1], "b": [1, 1]}))
    assert math.isnan(repeat_kappa(one)) and math.isnan(repeat_alpha(one))


def test_alpha_between_repeats_by_hand():
    # two repeats, units (0,0), (1,1), (0,1): interval/ordinal on 2 values reduce to nominal:
    # coincidences o00 = 2, o11 = 2, o01 = o10 = 1; n = 6, n0 = n1 = 3
    # D_o = (1 + 1) / 6, D_e = 2 * 3 * 3 / (6 * 5); alpha = 1 - (1/3) / (3/5) = 4/9
    wide = wide_labels(repeats_table({"a": [0, 0], "b": [1, 1], "c": [0, 1]}))
    assert repeat_alpha(wide) == pytest.approx(4 / 9)


def test_majority_of_the_repeats_breaks_ties_as_committees_do():
    wide = wide_labels(repeats_table({"a": [1, 1, 2, 2], "b": [3, 2, 3, 0], "c": [1, None, None, None]}))
    voted = majority(wide).set_index("qid")["label"]
    assert voted["a"] == 1  # a tie goes to the lower label
    assert voted["b"] == 3
    assert pd.isna(voted["c"])  # one label of four: below the quorum (more than half)
