"""Prediction-powered inference (judgelab.analysis.ppi): hand cases, the reference library
``ppi-python`` (a test-only dependency) on random data (on DL21: tests/ranking/test_ranking_ppi.py),
the simulation's bookkeeping, and the bad input."""

from __future__ import annotations

import numpy as np
import pytest

from judgelab.analysis.ppi import (
    METHODS,
    classical_mean,
    pair_contrasts,
    ppi_lambda,
    ppi_mean,
    separation,
    simulate,
    summarise,
    topic_draws,
)
from judgelab.errors import InputError


def test_a_hand_case():
    # y = 1, 2, 3, 4 (n = 4), yhat = y + 1, unlabelled 2, 4 (N = 2)
    y, yhat, yu = np.array([1.0, 2, 3, 4]), np.array([2.0, 3, 4, 5]), np.array([2.0, 4])
    # cov(y, yhat) with 1/n = 1.25; pooled yhat 2,3,4,5,2,4: mean 10/3, var (ddof 1) = 7.3333/5
    pooled = np.array([2.0, 3, 4, 5, 2, 4])
    var = ((pooled - pooled.mean()) ** 2).sum() / 5
    lam = 1.25 / ((1 + 4 / 2) * var)
    assert ppi_lambda(y, yhat, yu) == pytest.approx(lam)
    e = ppi_mean(y, yhat, yu, alpha=0.05)
    theta = lam * 3.0 + (y - lam * yhat).mean()
    se = np.sqrt((lam * yu).var() / 2 + (y - lam * yhat).var() / 4)
    assert e.estimate == pytest.approx(theta)
    assert e.high - e.estimate == pytest.approx(1.959963985 * se)
    assert e.estimate - e.low == pytest.approx(1.959963985 * se)


def test_fixed_weights_give_the_classical_and_the_plain_ppi_estimates():
    y, yhat, yu = np.array([0.2, 0.4, 0.9]), np.array([0.3, 0.3, 0.6]), np.array([0.5, 0.1, 0.7, 0.3])
    zero = ppi_mean(y, yhat, yu, lam=0.0)
    classical = classical_mean(y)
    assert zero.estimate == pytest.approx(classical.estimate)
    assert (zero.low, zero.high) == pytest.approx((classical.low, classical.high))
    one = ppi_mean(y, yhat, yu, lam=1.0)
    assert one.estimate == pytest.approx(yu.mean() + (y - yhat).mean())


def test_a_constant_judge_gets_weight_zero_and_the_weight_is_clipped():
    y = np.array([0.1, 0.5, 0.9])
    assert ppi_lambda(y, np.full(3, 0.4), np.full(5, 0.4)) == 0.0
    # a judge anti-correlated with the gold values: weight clipped at 0
    assert ppi_lambda(y, -y, np.array([0.0, -1.0])) == 0.0
    # a judge equal to the gold values with many unlabelled items: weight near but at most 1
    rng = np.random.default_rng(0)
    big = rng.random(1000)
    assert 0.9 < float(ppi_lambda(y, y, big * 0.8 + 0.1)) <= 1.0


def test_the_functions_are_vectorised_over_leading_axes():
    rng = np.random.default_rng(1)
    y, yhat, yu = rng.random((3, 4, 6)), rng.random((3, 4, 6)), rng.random((3, 4, 9))
    e = ppi_mean(y, yhat, yu)
    assert e.estimate.shape == (3, 4)
    one = ppi_mean(y[2, 1], yhat[2, 1], yu[2, 1])
    assert e.estimate[2, 1] == pytest.approx(float(one.estimate))
    assert e.low[2, 1] == pytest.approx(float(one.low))
    assert e.lam[2, 1] == pytest.approx(float(one.lam))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_equals_the_reference_library_on_random_data(seed, alpha):
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (a test dependency) is not installed")
    rng = np.random.default_rng(seed)
    n, big_n = 10 + seed, 40
    y = rng.random(n)
    yhat = np.clip(y + rng.normal(0, 0.2, n), 0, 1)
    yu = rng.random(big_n)
    low, high = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=alpha)
    e = ppi_mean(y, yhat, yu, alpha=alpha)
    assert (float(e.low), float(e.high)) == pytest.approx((float(np.ravel(low)[0]), float(np.ravel(high)[0])))
    point = ppi_py.ppi_mean_pointestimate(y, yhat, yu)
    assert float(e.estimate) == pytest.approx(float(np.ravel(point)[0]))
    c_low, c_high = ppi_py.classical_mean_ci(y, alpha=alpha)
    c = classical_mean(y, alpha)
    assert (float(c.low), float(c.high)) == pytest.approx((float(c_low), float(c_high)))


def test_topic_draws_are_seeded_samples_without_replacement():
    a, b = topic_draws(10, 4, 50, seed=3), topic_draws(10, 4, 50, seed=3)
    assert (a == b).all()
    assert a.shape == (50, 4)
    assert all(len(set(row)) == 4 for row in a)
    assert not (a == topic_draws(10, 4, 50, seed=4)).all()
    # every topic is drawn at some point
    assert set(a.ravel()) == set(range(10))


@pytest.mark.parametrize("n", [1, 0, 10, 11])
def test_n_below_two_or_not_below_the_topics_is_an_error(n):
    with pytest.raises(InputError, match=r"at least 2 and below the dataset's 10 topics"):
        topic_draws(10, n, 5, seed=0)


def test_pair_contrasts():
    matrix, pairs = pair_contrasts(3)
    assert pairs == [(0, 1), (0, 2), (1, 2)]
    scores = np.array([[0.5, 0.2, 0.1]])
    assert np.allclose(scores @ matrix, [[0.3, 0.4, 0.1]])


def test_the_simulation_on_a_perfect_and_on_a_shifted_judge():
    rng = np.random.default_rng(5)
    human = rng.random((30, 4))
    # a perfect judge: PPI's weight is about 1 / (1 + n / N) = 0.83 (its estimate is not the judge's
    # mean on all topics: the tuned weight trades the n labels' noise for the N predictions')
    sim = simulate(human, human.copy(), n=5, draws=40, seed=1)
    assert set(sim.estimates) == set(METHODS)
    assert np.allclose(sim.estimates["judge_only"].estimate, human.mean(0))
    ppi = sim.estimates["ppi"]
    assert ppi.estimate.shape == (40, 4)
    assert 0.6 < ppi.lam.mean() < 1.0
    assert np.abs(ppi.estimate.mean(0) - human.mean(0)).max() < 0.05
    summary = summarise(sim)
    assert summary["judge_only"]["bias"] == pytest.approx(0.0, abs=1e-12)
    assert np.isnan(summary["judge_only"]["coverage"])
    assert summary["ppi"]["width"] < summary["human_only"]["width"]
    # a judge off by +0.3 everywhere, else perfect: judge-only's bias is +0.3, PPI removes it
    sim = simulate(human, human + 0.3, n=5, draws=40, seed=1)
    summary = summarise(sim)
    assert summary["judge_only"]["bias"] == pytest.approx(0.3)
    assert abs(summary["ppi"]["bias"]) < 0.02
    # the human-only estimate is unbiased over the draws of a finite population: its bias is the
    # mean of the sample means minus the population mean, small
    assert abs(summary["human_only"]["bias"]) < 0.05


def test_separation_counts_intervals_excluding_zero_on_the_human_side():
    rng = np.random.default_rng(2)
    base = rng.random((40, 1))
    human = np.hstack([base + 0.5, base, base + rng.normal(0, 0.01, (40, 1))])
    matrix, pairs = pair_contrasts(3)
    targets = np.hstack([human, human @ matrix])
    sim = simulate(targets, targets.copy(), n=10, draws=30, seed=0)
    columns = np.arange(3, 3 + len(pairs))
    # pair (0, 1) and (0, 2) differ by +0.5 on every topic: separated; (1, 2) not
    shares = separation(sim, columns, np.array([1, 1, 0]))
    assert shares["human_only"] == 1.0 and shares["ppi"] == 1.0
    assert np.isnan(shares["judge_only"])
    # the wrong sign is never "separated alike"
    assert separation(sim, columns, np.array([-1, -1, 0]))["ppi"] == 0.0
    assert np.isnan(separation(sim, columns, np.array([0, 0, 0]))["ppi"])


def test_bad_shapes_and_alpha_are_errors():
    with pytest.raises(InputError, match="differ in shape"):
        ppi_mean(np.zeros(3), np.zeros(4), np.zeros(2))
    with pytest.raises(InputError, match="at least 2 labelled and 1 unlabelled"):
        ppi_mean(np.zeros(1), np.zeros(1), np.zeros(2))
    with pytest.raises(InputError, match=r"alpha must lie in \(0, 1\)"):
        classical_mean(np.zeros(3), alpha=1.5)
    with pytest.raises(InputError, match="topics x targets alike"):
        simulate(np.zeros((5, 2)), np.zeros((5, 3)), n=2)
