"""A tiny version of the choosing strategies' DL21 simulation (the benchmark
workflow/benchmarks/choose_strategies.py runs the whole one with the published judges): 13 of the
63 runs, a judge made from the human qrels with a fifth of the grades moved, every strategy's
weighted PPI estimate of the runs' mean nDCG@10 over 100 seeded draws of 10 topics. Skips without
the shared data."""

from __future__ import annotations

import numpy as np
import pytest
from test_ranking_correlation import shared_folder
from test_ranking_scorecache import changed_grades, dl21

from judgelab.analysis.ppi import summarise
from judgelab.annotate.choose import active_design, random_design, stratified_design
from judgelab.annotate.simulation import WEIGHTED, simulate_design


@pytest.mark.slow
def test_every_strategy_covers_the_dl21_runs_scores_and_is_the_same_for_a_seed():
    from judgelab.data.readers import read_run
    from judgelab.studies.ranking.correlation import align, topic_matrix
    from judgelab.studies.ranking.scores import score_runs

    files, human = dl21(shared_folder())
    runs = {name: read_run(files[name]) for name in sorted(files)[::5]}
    judge = changed_grades(human, 0.2, seed=3)
    human_t, judge_t = align(*(topic_matrix(score_runs(runs, q, ["nDCG@10"])) for q in (human, judge)))
    h, j = human_t.to_numpy(float), judge_t.to_numpy(float)
    assert h.shape == (53, 13)
    # the stratified design's label mix: the judge's mean grade on the topic's judged pairs
    grades = judge.assign(qid=judge["qid"].astype(str)).groupby("qid")["relevance"].mean()
    mix = grades.loc[list(human_t.index)].to_numpy(float)
    designs = [random_design(53, 10), stratified_design(mix, 10), active_design(1 - j.mean(1), 10, 0.5)]
    for design in designs:
        sim = simulate_design(h, j, design, draws=100, seed=0, alpha=0.05)
        summary = summarise(sim)[WEIGHTED]
        # 1300 (draw, run) cells: the weighted interval covers near its level, the estimate centred
        assert summary["coverage"] >= 0.9, (design.strategy, summary)
        assert abs(summary["bias"]) < 0.01, (design.strategy, summary)
        again = simulate_design(h, j, design, draws=100, seed=0, alpha=0.05)
        assert np.array_equal(again.estimates[WEIGHTED].estimate, sim.estimates[WEIGHTED].estimate)
