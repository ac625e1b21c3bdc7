"""Prediction-powered estimates in the ranking study (issue 28, item 3): the PPI++ interval of one
DL21 system's mean nDCG@10 (human qrels, a synthetic judge with a known share of grades changed)
equals the reference library ``ppi-python``'s ``ppi_mean_ci``; the study's table on a hand scores
table (its rows, population, separation counts); the job's files; bad n naming the key."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import ROOT
from test_ranking_correlation import shared_folder
from test_ranking_scorecache import changed_grades, dl21

from judgelab.analysis.ppi import METHODS, ppi_mean, topic_draws
from judgelab.errors import InputError
from judgelab.studies.ranking.jobs import ppi_job
from judgelab.studies.ranking.ppi import PPI_COLUMNS, ppi_table
from judgelab.studies.ranking.settings import PPISettings
from judgelab.wiring.facade import Project


def test_equals_the_reference_library_on_dl21_ndcg_with_a_synthetic_judge():
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (a test dependency) is not installed")
    from judgelab.data.readers import read_run
    from judgelab.studies.ranking.scores import score_runs

    runs, human = dl21(shared_folder())
    judge = changed_grades(human, 0.2, seed=3)
    name = sorted(runs)[0]
    run = {name: read_run(runs[name])}

    def per_topic(qrels):
        s = score_runs(run, qrels, ["nDCG@10"])
        return s[s["topic"] != "all"].set_index("topic")["value"]

    h, j = per_topic(human), per_topic(judge)
    topics = sorted(set(h.index) & set(j.index))
    assert len(topics) == 53
    h, j = h.loc[topics].to_numpy(float), j.loc[topics].to_numpy(float)
    for n, seed in ((5, 1), (10, 7), (30, 2)):
        labelled = topic_draws(len(topics), n, 1, seed=seed)[0]
        rest = np.setdiff1d(np.arange(len(topics)), labelled)
        e = ppi_mean(h[labelled], j[labelled], j[rest], alpha=0.05)
        low, high = ppi_py.ppi_mean_ci(h[labelled], j[labelled], j[rest], alpha=0.05)
        assert (float(e.low), float(e.high)) == pytest.approx(
            (float(np.ravel(low)[0]), float(np.ravel(high)[0]))
        )
        assert float(e.estimate) == pytest.approx(
            float(np.ravel(ppi_py.ppi_mean_pointestimate(h[labelled], j[labelled], j[rest]))[0])
        )
        assert 0.0 < float(e.lam) <= 1.0


def scores_table(human: np.ndarray, judge: np.ndarray) -> pd.DataFrame:
    """A scores table (tables.read_scores' columns) of topic x run matrices under two qrels."""
    rows = []
    for qrels, m in (("human", human), ("flip", judge)):
        for t in range(m.shape[0]):
            for r in range(m.shape[1]):
                rows.append(
                    {
                        "run": f"r{r}",
                        "qrels": qrels,
                        "measure": "nDCG@10",
                        "topic": f"t{t:02d}",
                        "value": m[t, r],
                    }
                )
        for r in range(m.shape[1]):
            rows.append(
                {
                    "run": f"r{r}",
                    "qrels": qrels,
                    "measure": "nDCG@10",
                    "topic": "all",
                    "value": m[:, r].mean(),
                }
            )
    return pd.DataFrame(rows).assign(judged_at_k=1.0)


def settings(**kw) -> PPISettings:
    base = {
        "comparisons": (("d", "flip", "human"),),
        "measures": ("nDCG@10",),
        "n": (3, 6),
        "draws": 50,
        "seed": 1,
    }
    return PPISettings(**{**base, **kw})


def matrices():
    rng = np.random.default_rng(4)
    base = rng.random((12, 1)) * 0.3
    # r0 0.3 above r1 on every topic; r2 is r1 with noise (no significant difference)
    human = np.hstack([base + 0.6, base + 0.3, base + 0.3 + rng.normal(0, 0.05, (12, 1))])
    judge = np.clip(human + rng.normal(0, 0.03, human.shape) + 0.1, 0, 1)
    return human, judge


def test_the_table_on_a_hand_scores_table():
    human, judge = matrices()
    table = ppi_table({"d": scores_table(human, judge)}, settings())
    assert list(table.columns) == PPI_COLUMNS
    assert len(table) == 2 * 2 * 3  # n x (systems, pairs) x methods
    assert set(table["method"]) == set(METHODS)
    assert (table["n_topics"] == 12).all()
    assert table["population"].str.contains("12 topics").all()
    systems = table[table["target"] == "systems"].set_index(["n", "method"])
    # the judge's +0.1 shift is judge-only's bias on the systems' means; PPI removes most of it
    assert systems.loc[(3, "judge_only"), "bias"] == pytest.approx((judge - human).mean(), abs=1e-12)
    assert abs(systems.loc[(6, "ppi"), "bias"]) < 0.03
    assert systems.loc[(6, "ppi"), "width"] < systems.loc[(6, "human_only"), "width"]
    assert systems.loc[(3, "human_only"), "width"] > systems.loc[(6, "human_only"), "width"]
    assert 0.0 <= systems.loc[(6, "ppi"), "coverage"] <= 1.0
    assert np.isnan(systems.loc[(6, "judge_only"), "coverage"])
    pairs = table[table["target"] == "pairs"].set_index(["n", "method"])
    # r0 - r1 and r0 - r2 (about +0.3 on every topic) are separated; r1 - r2 is not
    assert (pairs["n_separated"] == 2).all() and (pairs["n_targets"] == 3).all()
    assert pairs.loc[(6, "human_only"), "separated_alike"] == 1.0
    assert pairs.loc[(6, "judge_only"), "separated_alike"] == 1.0


def test_the_job_writes_the_table_and_the_figure(tmp_path):
    human, judge = matrices()
    folder = tmp_path / "d"
    folder.mkdir()
    scores_table(human, judge).to_csv(folder / "scores.tsv", sep="\t", index=False)
    outputs = {
        "tsv": str(tmp_path / "ppi.tsv"),
        "md": str(tmp_path / "ppi.md"),
        "html": str(tmp_path / "ppi.html"),
        "png": str(tmp_path / "ppi.png"),
        "pdf": str(tmp_path / "ppi.pdf"),
    }
    table = ppi_job([str(folder / "scores.tsv")], settings(), outputs)
    back = pd.read_csv(outputs["tsv"], sep="\t")
    assert len(back) == len(table) == 12
    md = (tmp_path / "ppi.md").read_text()
    assert "| d | flip vs human | nDCG@10 | 3 of 12 | systems (3) |" in md
    assert "finite population" in md
    assert (tmp_path / "ppi.png").stat().st_size > 0 and (tmp_path / "ppi.pdf").stat().st_size > 0


@pytest.mark.parametrize("n", [(12,), (2, 13)])
def test_n_not_below_the_topics_names_the_key(n):
    human, judge = matrices()
    with pytest.raises(InputError, match=r"ranking\.ppi\.n.*below the dataset's 12 topics"):
        ppi_table({"d": scores_table(human, judge)}, settings(n=n))


TEST_CONFIG = yaml.safe_load((ROOT / ".test" / "ranking" / "config" / "config.yaml").read_text())


def project(ppi: dict, **dataset) -> Project:
    cfg = copy.deepcopy(TEST_CONFIG)
    cfg["ranking"]["ppi"] = ppi
    cfg["datasets"]["fx"].update(dataset)
    return Project(cfg, ROOT)


def qrels_file(folder, n_topics: int) -> str:
    path = folder / "qrels.txt"
    path.write_text("".join(f"{100 + t} 0 d{t} 1\n{100 + t} 0 e{t} 0\n" for t in range(n_topics)))
    return str(path)


def test_the_plan_checks_n_before_any_job_against_the_topics_the_config_bounds(tmp_path):
    plan = project({"enabled": True, "n": [2, 5]}, qrels=qrels_file(tmp_path, 6)).plan("ranking")
    s = plan.ppi()
    assert s.n == (2, 5) and s.draws == 200 and s.alpha == 0.05
    assert ("fx", "flip", plan.reference("flip")) in s.comparisons
    assert any(t.endswith("ranking/tables/ppi.tsv") for t in plan.targets())
    assert not any("ppi" in t for t in project({"enabled": False}).plan("ranking").targets())
    # the qrels file's 6 topics, max_queries, a public dataset's judged queries before a download
    with pytest.raises(InputError, match=r"ranking\.ppi\.n.*n = 6 .* below the dataset's 6 topics"):
        project({"n": [2, 6]}, qrels=qrels_file(tmp_path, 6))
    with pytest.raises(InputError, match=r"ranking\.ppi\.n.*below the dataset's 4 topics"):
        project({"n": [2, 4]}, qrels=qrels_file(tmp_path, 6), max_queries=4)
    with pytest.raises(InputError, match=r"ranking\.ppi\.n.*non-unique elements"):
        project({"n": [2, 2]})


@pytest.mark.parametrize("ppi", [{"n": [1]}, {"n": []}, {"alpha": 1.0}, {"draws": 0}])
def test_bad_ppi_values_name_the_key(ppi):
    with pytest.raises(InputError, match=r"ranking\.ppi"):
        project(ppi)
