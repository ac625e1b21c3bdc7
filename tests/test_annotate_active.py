"""The active choosing strategy and the weighted PPI estimate it needs: the designs' inclusion
probabilities by hand and by drawing, the weighted estimator by hand, against ``ppi-python``'s
weighted interval and unbiased by Monte Carlo on a toy population, determinism for a seed, the
coverage of a synthetic population whose answer is known, and the rule that picks the default
strategy (docs/annotate.md, "Which strategy")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.analysis.ppi import summarise, weighted_lambda, weighted_ppi_mean
from judgelab.annotate.choose import (
    active_design,
    choose,
    choose_topics,
    pps_inclusion,
    random_design,
    stratified_design,
    systematic_pps,
)
from judgelab.annotate.simulation import WEIGHTED, default_strategy, draw_samples, simulate_design
from judgelab.errors import InputError


def test_pps_inclusion_by_hand():
    # shares 1/8, 1/8, 2/8, 4/8; half uniform (1/4 each): p = 3/16, 3/16, 1/4, 3/8; pi = 2p
    assert pps_inclusion(np.array([1.0, 1, 2, 4]), 2, 0.5) == pytest.approx([0.375, 0.375, 0.5, 0.75])
    # 0.2 uniform: pi = 0.1, 0.1, 0.1, 1.7 -> the last certain, the others rescaled to sum 1
    assert pps_inclusion(np.array([0.0, 0, 0, 10]), 2, 0.2) == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1])
    # floor 1, or no size at all: uniform
    assert pps_inclusion(np.array([5.0, 0, 1]), 2, 1.0) == pytest.approx([2 / 3] * 3)
    assert pps_inclusion(np.zeros(4), 1, 0.5) == pytest.approx([0.25] * 4)
    with pytest.raises(InputError, match="floor must lie in"):
        pps_inclusion(np.ones(3), 1, 0.0)
    with pytest.raises(InputError, match="finite and non-negative"):
        pps_inclusion(np.array([1.0, -1, 1]), 1, 0.5)


def test_the_stratified_and_random_designs_by_hand():
    # mix order: 1 (0.1), 2 (0.2), 0 (0.3), 4 (0.5), 3 (0.9): strata (1, 2, 0) and (4, 3)
    design = stratified_design(np.array([0.3, 0.1, 0.2, 0.9, 0.5]), 2)
    assert design.inclusion == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1 / 2, 1 / 2])
    assert [list(s) for s in design.strata] == [[1, 2, 0], [4, 3]]
    assert random_design(8, 2).inclusion == pytest.approx([0.25] * 8)


def test_systematic_pps_draws_each_topic_with_its_inclusion_probability():
    pi = pps_inclusion(np.array([0.0, 0.1, 0.3, 0.5, 0.9, 2.0, 0.2]), 3, 0.3)
    rng = np.random.default_rng(0)
    draws = 6000
    counts = np.zeros(len(pi))
    for _ in range(draws):
        picked = systematic_pps(pi, rng)
        assert len(picked) == 3 == len(set(picked.tolist()))
        counts[picked] += 1
    se = np.sqrt(pi * (1 - pi) / draws)
    assert np.all(np.abs(counts / draws - pi) <= 4 * se + 1e-9), (counts / draws, pi)


def test_weighted_ppi_by_hand():
    # T = 4, judge on all: 1, 1, 0, 2 (mean 1); labelled: y 1, 2; yhat 1, 1; pi 0.5, 0.25
    y, yhat, population, pi = (
        np.array([1.0, 2]),
        np.array([1.0, 1]),
        np.array([1.0, 1, 0, 2]),
        np.array([0.5, 0.25]),
    )
    e = weighted_ppi_mean(y, yhat, population, pi, alpha=0.05, lam=1.0, student=False)
    # Horvitz-Thompson rectifier: (0 / 0.5 + 1 / 0.25) / 4 = 1; z = 2 (y - yhat) / (4 pi) = 0, 2
    assert float(e.estimate) == pytest.approx(2.0)
    assert float(e.high - e.estimate) == pytest.approx(1.959963985 * 1.0)  # sqrt(var(0, 2; ddof 1) / 2)
    student = weighted_ppi_mean(y, yhat, population, pi, alpha=0.05, lam=1.0)
    assert float(student.high - student.estimate) == pytest.approx(12.7062047)  # t_0.975 with 1 df
    # lambda 0: the Horvitz-Thompson estimate of the gold mean, (1 / 0.5 + 2 / 0.25) / 4
    assert float(weighted_ppi_mean(y, yhat, population, pi, lam=0.0).estimate) == pytest.approx(2.5)
    # equal probabilities: lambda is the regression slope cov(y, yhat) / var(yhat), clipped
    a, b = np.array([0.1, 0.4, 0.5, 0.9]), np.array([0.2, 0.3, 0.7, 0.6])
    slope = np.cov(a, b, ddof=0)[0, 1] / b.var()
    assert float(weighted_lambda(a, b, np.full(4, 0.4))) == pytest.approx(min(1.0, slope))
    assert float(weighted_lambda(a, np.full(4, 0.3), np.full(4, 0.4))) == 0.0
    with pytest.raises(InputError, match="inclusion probability must lie in"):
        weighted_ppi_mean(y, yhat, population, np.array([0.5, 0.0]))


@pytest.mark.parametrize("seed", [0, 1])
def test_weighted_ppi_equals_the_reference_library_weighted(seed):
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (a test dependency) is not installed")
    rng = np.random.default_rng(seed)
    big_t, lam = 12, 0.7
    population = rng.random(big_t)
    # one topic from strata of 2, 3, 3, 4 topics: sum of 1 / pi over the sample = T, where
    # ppi_py's weights (rescaled to sum n) are Horvitz-Thompson's
    pi = np.array([1 / 2, 1 / 3, 1 / 3, 1 / 4])
    yhat = population[[0, 3, 6, 9]]
    y = np.clip(yhat + rng.normal(0, 0.2, 4), 0, 1)
    ours = weighted_ppi_mean(y, yhat, population, pi, alpha=0.1, lam=lam, student=False)
    low, high = ppi_py.ppi_mean_ci(y, yhat, np.full(big_t, population.mean()), alpha=0.1, lam=lam, w=1 / pi)
    assert float(ours.estimate) == pytest.approx(float((low[0] + high[0]) / 2))
    # ppi_py's standard deviation has ddof 0, ours ddof 1
    assert float(ours.high - ours.low) == pytest.approx(float(high[0] - low[0]) * np.sqrt(4 / 3))


def test_the_weighted_estimate_is_unbiased_under_the_active_design_and_the_unweighted_is_not():
    rng = np.random.default_rng(3)
    big_t, n = 15, 4
    judge = rng.random(big_t)
    # people's values differ from the judge's most where the judge's values are low
    human = judge + (1 - judge) ** 2 * rng.normal(0.4, 0.3, big_t)
    design = active_design(1 - judge, n, 0.3)
    assert design.inclusion.sum() == pytest.approx(n) and design.inclusion.min() > 0
    idx = draw_samples(design, 20000, seed=5)
    pi = design.inclusion[idx]
    e = weighted_ppi_mean(human[idx], judge[idx], judge, pi, lam=1.0)
    truth = human.mean()
    se = e.estimate.std() / np.sqrt(len(idx))
    assert abs(e.estimate.mean() - truth) < 4 * se
    naive = weighted_ppi_mean(human[idx], judge[idx], judge, np.full_like(pi, n / big_t), lam=1.0)
    assert abs(naive.estimate.mean() - truth) > 10 * se


def test_a_synthetic_population_is_covered_at_the_nominal_level():
    rng = np.random.default_rng(11)
    big_t, systems = 80, 3
    judge = rng.random((big_t, systems))
    human = judge + rng.normal(0.05, 0.1, (big_t, systems))
    for design in (
        random_design(big_t, 30),
        stratified_design(judge.mean(1), 30),
        active_design(1 - judge.mean(1), 30, 0.5),
    ):
        sim = simulate_design(human, judge, design, draws=400, seed=0, alpha=0.05)
        cover = summarise(sim)[WEIGHTED]["coverage"]
        assert 0.93 <= cover <= 0.995, (design.strategy, cover)  # conservative: no finite-population term
        assert sim.estimates[WEIGHTED].estimate.shape == (400, systems)
    again = simulate_design(human, judge, design, draws=50, seed=0, alpha=0.05)
    assert np.array_equal(again.estimates[WEIGHTED].low, sim.estimates[WEIGHTED].low[:50])


def test_the_rule_that_picks_the_default_strategy():
    def table(rows):
        return pd.DataFrame(rows, columns=["strategy", "n", "coverage", "width"])

    rows = [
        ("random", 5, 0.90, 0.30),
        ("active", 5, 0.89, 0.29),
        ("random", 10, 0.94, 0.20),
        ("active", 10, 0.925, 0.18),  # narrower but below 0.93: cannot be the default
        ("random", 20, 0.96, 0.14),
        ("active", 20, 0.97, 0.13),
    ]
    assert default_strategy(table(rows), 0.95, 0.02) == "random"
    # at n = 5 no strategy covers: that n does not count against either
    better = [r if r[:2] != ("active", 10) else ("active", 10, 0.935, 0.18) for r in rows]
    assert default_strategy(table(better), 0.95, 0.02) == "active"
    assert default_strategy(table([("random", 5, 0.8, 0.3)]), 0.95, 0.02) is None


def test_active_choice_is_the_same_for_a_seed_and_writes_its_probabilities():
    topics = [f"t{i}" for i in range(8)]
    pool = pd.DataFrame([(q, f"{q}-d{j}") for q in topics for j in range(2)], columns=["qid", "docid"])
    pool = pool.assign(query="q", passage="p", text_known=True)
    scores = pd.Series(np.linspace(0.0, 0.9, 8), index=topics)
    first = choose(pool, pool.assign(label=1), 3, "active", seed=4, topic_scores=scores, floor=0.5)
    again = choose(pool, pool.assign(label=1), 3, "active", seed=4, topic_scores=scores, floor=0.5)
    pd.testing.assert_frame_equal(first, again)
    expected = pps_inclusion(1 - scores.to_numpy(), 3, 0.5)
    by_topic = first.groupby("qid")["topic_inclusion"].first()
    assert by_topic.to_dict() == pytest.approx({q: expected[topics.index(q)] for q in by_topic.index})
    assert (first["strategy"] == "active").all() and first["qid"].nunique() == 3
    picks = {
        tuple(
            choose_topics(pool, pool, 3, "active", np.random.default_rng(s), topic_scores=scores, floor=0.5)
        )
        for s in range(6)
    }
    assert len(picks) > 1
    with pytest.raises(
        InputError, match="needs the systems' scores under the judge on every candidate topic"
    ):
        choose(pool, pool, 2, "active", seed=0, topic_scores=scores.iloc[:-1])


def test_the_command_chooses_actively_from_the_runs_scores_under_the_judge(tmp_path, capsys):
    from judgelab.cli import main

    table = pd.DataFrame(
        [("toy", q, f"query {q}", d, f"passage {d}", 1) for q in "1234" for d in "abc"],
        columns=["dataset", "qid", "query", "docid", "passage", "grade"],
    )
    table.to_csv(tmp_path / "toy.tsv", sep="\t", index=False)
    for run, docs in (("r1", "abc"), ("r2", "cba")):
        (tmp_path / f"{run}.run").write_text(
            "".join(f"{q} Q0 {d} {i + 1} {10 - i} {run}\n" for q in "1234" for i, d in enumerate(docs))
        )
    # topics 1, 2: every passage relevant to the judge (nDCG 1, shortfall 0); 3, 4: only c (shortfall > 0)
    grades = {"1": "333", "2": "333", "3": "003", "4": "003"}
    (tmp_path / "judge.qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, gs in grades.items() for d, g in zip("abc", gs))
    )
    args = ["annotate", "choose", str(tmp_path / "toy.tsv"), "--run", str(tmp_path / "r1.run")]
    args += ["--run", str(tmp_path / "r2.run"), "--labels", str(tmp_path / "judge.qrels"), "--topics", "2"]
    args += ["--strategy", "active", "--floor", "0.5", "--seed", "3", "--out", str(tmp_path / "pairs.tsv")]
    assert main(args) == 0
    assert "warning: 2 topics" in capsys.readouterr().err  # fewer than MIN_TOPICS
    out = pd.read_csv(tmp_path / "pairs.tsv", sep="\t", dtype={"qid": str})
    by_topic = out.groupby("qid")["topic_inclusion"].first()
    # half uniform (2 x 0.5 / 4 = 0.25 each), half by shortfall (topics 3 and 4 alike: 0.5 each)
    assert all(by_topic[q] == pytest.approx(0.25 if q in "12" else 0.75) for q in by_topic.index)
