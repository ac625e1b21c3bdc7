"""The ranking study as a unit: the workflow's own systems against hand-computed scores, the pool
and its labels, the tables, the plan's resolution and its errors naming the full key, the jobs
(scores against pytrec_eval called directly), and `judgelab estimate` (the judge's requests are
PERAS's; exact with the runs at hand, an upper bound before)."""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
import yaml
from conftest import ROOT
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from judgelab.data.imported import ImportReading
from judgelab.data.readers import read_run
from judgelab.data.tables import write_dataset
from judgelab.errors import InputError
from judgelab.studies.ranking import jobs
from judgelab.studies.ranking.plan import Plan
from judgelab.studies.ranking.pool import (
    fill_holes,
    human_qrels,
    judge_pairs,
    label_agreement,
    labels_on_pool,
    pool_table,
)
from judgelab.studies.ranking.section import measure_slug
from judgelab.studies.ranking.settings import (
    Comparisons,
    CorrelationSettings,
    Figure,
    Pooling,
    Scoring,
    System,
)
from judgelab.studies.ranking.systems import check_system, ql_score, rank, tokenize, write_run
from judgelab.studies.ranking.tables import (
    CORRELATION_COLUMNS,
    LEADERBOARD_COLUMNS,
    compare,
    leaderboard,
    render_leaderboard,
    topic_table,
)
from judgelab.studies.ranking.values import BLAND_ALTMAN_COLUMNS, read_bland_altman
from judgelab.wiring.estimate import estimate
from judgelab.wiring.facade import Project

TEST_CONFIG = yaml.safe_load((ROOT / ".test" / "ranking" / "config" / "config.yaml").read_text())
API = {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None}


def table(rows=None) -> pd.DataFrame:
    """Two topics: q1 "cat fish" judged d1 (2), d2 (1); q2 "bird" judged d3 (3)."""
    rows = rows or [
        ("q1", "cat fish", "d1", "Cat dog cat.", 2),
        ("q1", "cat fish", "d2", "The dog and a fish", 1),
        ("q2", "bird", "d3", "Bird", 3),
    ]
    return pd.DataFrame(
        [("t", q, qt, d, p, g) for q, qt, d, p, g in rows],
        columns=["dataset", "qid", "query", "docid", "passage", "grade"],
    ).astype({"grade": "Int64"})


def scores_of(run: pd.DataFrame, qid: str) -> dict[str, float]:
    sel = run[run["qid"] == qid]
    return dict(zip(sel["docid"], sel["score"]))


# -- systems ------------------------------------------------------------------------------------


def test_tokenize_lower_case_words_and_lucene_stop_words():
    assert tokenize("The Dog and a fish_tank, 2 CATS!") == ["dog", "fish", "tank", "2", "cats"]
    assert tokenize("") == []


def test_bm25_by_hand():
    # analysed: d1 [cat, dog, cat], d2 [dog, fish], d3 [bird]; avgdl 2; query [cat, fish]
    run = rank(table(), {"kind": "bm25", "k1": 1.2, "b": 0.75}, candidates="all", depth=100)
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))  # cat and fish: df 1 of N 3 (Lucene's idf)

    def weight(tf, dl):
        return tf / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / 2))

    got = scores_of(run, "q1")
    assert got["d1"] == pytest.approx(idf * weight(2, 3), abs=1e-12)  # 0.53744
    assert got["d2"] == pytest.approx(idf * weight(1, 2), abs=1e-12)  # 0.44583
    assert got["d3"] == 0.0
    assert list(run[run["qid"] == "q1"]["docid"]) == ["d1", "d2", "d3"]


def test_query_likelihood_dirichlet_by_hand():
    # cf: cat 2, dog 2, fish 1, bird 1 of 6 tokens; mu 2; the unknown query word is left out
    t = table()
    t.loc[t["qid"] == "q1", "query"] = "cat fish zebra"
    run = rank(t, {"kind": "ql", "mu": 2}, candidates="all", depth=100)
    got = scores_of(run, "q1")
    p_cat, p_fish = 2 / 6, 1 / 6
    want = {
        "d1": math.log((2 + 2 * p_cat) / (3 + 2)) + math.log((0 + 2 * p_fish) / (3 + 2)),  # -3.3367
        "d2": math.log((0 + 2 * p_cat) / (2 + 2)) + math.log((1 + 2 * p_fish) / (2 + 2)),  # -2.8904
        "d3": math.log((0 + 2 * p_cat) / (1 + 2)) + math.log((0 + 2 * p_fish) / (1 + 2)),  # -3.7013
    }
    assert got == pytest.approx(want, abs=1e-12)
    assert list(run[run["qid"] == "q1"]["docid"]) == ["d2", "d1", "d3"]
    assert ql_score(["zebra"], {}, 3, {"cat": 1}, 1, 2.0) == 0.0


def test_tfidf_cosine_by_hand():
    run = rank(table(), {"kind": "tfidf"}, candidates="all", depth=100)
    idf = {w: math.log(4 / (1 + df)) + 1 for w, df in {"cat": 1, "dog": 2, "fish": 1}.items()}
    d1 = np.array([2 * idf["cat"], idf["dog"], 0.0])  # (cat, dog, fish)
    d2 = np.array([0.0, idf["dog"], idf["fish"]])
    q = np.array([idf["cat"], 0.0, idf["fish"]])

    def cos(a, b):
        return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))

    got = scores_of(run, "q1")
    assert got["d1"] == pytest.approx(cos(d1, q), abs=1e-12)  # 0.66093
    assert got["d2"] == pytest.approx(cos(d2, q), abs=1e-12)  # 0.56283
    assert got["d3"] == 0.0


def test_overlap_length_and_random():
    t = table()
    overlap = rank(t, {"kind": "overlap"}, candidates="all", depth=100)
    assert scores_of(overlap, "q1") == {"d1": 1.0, "d2": 1.0, "d3": 0.0}
    # the tie d1/d2 is broken as trec_eval breaks it: docid descending
    assert list(overlap[overlap["qid"] == "q1"]["docid"]) == ["d2", "d1", "d3"]
    assert scores_of(rank(t, {"kind": "length"}, candidates="all", depth=100), "q2") == {
        "d1": 3.0,
        "d2": 2.0,
        "d3": 1.0,
    }
    r0 = rank(t, {"kind": "random", "seed": 0}, candidates="all", depth=100)
    assert r0.equals(rank(t, {"kind": "random", "seed": 0}, candidates="all", depth=100))
    # a topic's random scores depend on the seed, the topic and its candidates only
    only_q1 = t[t["qid"] == "q1"]
    r_q1 = rank(only_q1, {"kind": "random", "seed": 0}, candidates="judged", depth=100)
    assert scores_of(r_q1, "q1") == scores_of(
        rank(t, {"kind": "random", "seed": 0}, candidates="judged", depth=100), "q1"
    )
    assert scores_of(r_q1, "q1") != scores_of(
        rank(only_q1, {"kind": "random", "seed": 1}, candidates="judged", depth=100), "q1"
    )


def test_rank_candidates_depth_and_ranks():
    t = table()
    judged = rank(t, {"kind": "bm25", "k1": 0.9, "b": 0.4}, candidates="judged", depth=100, tag="b")
    assert list(zip(judged["qid"], judged["docid"])) == [("q1", "d1"), ("q1", "d2"), ("q2", "d3")]
    assert list(judged["rank"]) == [1, 2, 1] and set(judged["tag"]) == {"b"}
    every = rank(t, {"kind": "bm25", "k1": 0.9, "b": 0.4}, candidates="all", depth=2)
    assert every.groupby("qid").size().to_dict() == {"q1": 2, "q2": 2}
    assert list(every[every["qid"] == "q2"]["docid"])[0] == "d3"
    with pytest.raises(ValueError, match="candidates"):
        rank(t, {"kind": "overlap"}, candidates="pool", depth=100)


def test_write_run_reads_back_the_same_run(tmp_path):
    run = rank(table(), {"kind": "random", "seed": 3}, candidates="all", depth=100, tag="rnd")
    write_run(run, tmp_path / "rnd.txt")
    back = read_run(tmp_path / "rnd.txt")
    assert back.attrs["name"] == "rnd"
    assert back.reset_index(drop=True).equals(run.reset_index(drop=True))


@pytest.mark.parametrize(
    "spec, key, message",
    [
        ({"kind": "bm42"}, "s.kind", "'bm42' is not one of ['bm25', 'tfidf', 'ql'"),
        ({"kind": "bm25", "k1": 0.9}, "s.b", "a bm25 system needs `b`"),
        ({"kind": "bm25", "k1": 0.9, "b": 0.4, "mu": 3}, "s.mu", "a bm25 system takes k1, b, method"),
        ({"kind": "bm25", "k1": 0.9, "b": 1.4}, "s.b", "1.4 is greater than the maximum of 1"),
        (
            {"kind": "bm25", "k1": 0.9, "b": 0.4, "method": "bm99"},
            "s.method",
            "'bm99' is not one of ['lucene',",
        ),
        ({"kind": "ql", "mu": 0}, "s.mu", "0 is less than or equal to the minimum of 0"),
        ({"kind": "random", "seed": None}, "s.seed", "None is not of type 'integer'"),
        ({"kind": "random", "seed": -1}, "s.seed", "-1 is less than the minimum of 0"),
        ({"kind": "tfidf", "k1": 1}, "s.k1", "a tfidf system takes no parameter"),
    ],
)
def test_check_system_names_the_key(spec, key, message):
    with pytest.raises(InputError) as err:
        check_system("s", spec, "s")
    assert err.value.key == key and message in err.value.message


# -- the pool and its labels --------------------------------------------------------------------


def runs_for_pool() -> dict[str, pd.DataFrame]:
    a = pd.DataFrame(
        {
            "qid": ["q1", "q1", "q1", "q2", "q9"],
            "docid": ["d1", "d3", "x7", "d3", "d1"],
            "rank": 1,
            "score": [3.0, 2.0, 1.0, 1.0, 1.0],
            "tag": "a",
        }
    )
    b = pd.DataFrame({"qid": ["q1", "q1"], "docid": ["d2", "d1"], "rank": 1, "score": [2.0, 1.0], "tag": "b"})
    return {"a": a, "b": b}


def test_pool_table_grades_and_known_texts():
    p = pool_table(runs_for_pool(), table(), k=2)
    # top 2: a q1 -> d1, d3; a q2 -> d3; b q1 -> d2, d1; q9 is no topic of the table
    assert list(zip(p["qid"], p["docid"], p["n_runs"])) == [
        ("q1", "d1", 2),
        ("q1", "d2", 1),
        ("q1", "d3", 1),
        ("q2", "d3", 1),
    ]
    assert list(p["human"]) == [2, 1, pd.NA, 3]  # d3 is judged for q2 only: a hole of q1
    assert p["text_known"].all() and p.loc[2, "passage"] == "Bird" and p.loc[2, "query"] == "cat fish"
    deeper = pool_table(runs_for_pool(), table(), k=3)
    row = deeper[(deeper["qid"] == "q1") & (deeper["docid"] == "x7")].iloc[0]
    assert not row["text_known"] and row["passage"] == "" and pd.isna(row["human"])
    shown = judge_pairs(deeper, "t")
    assert list(shown.columns) == ["dataset", "qid", "query", "docid", "passage"]
    assert ("q1", "x7") not in set(zip(shown["qid"], shown["docid"])) and len(shown) == len(deeper) - 1


def test_fill_holes_adds_only_the_pairs_humans_did_not_judge():
    human = human_qrels(table())
    labels = pd.DataFrame(
        {
            "qid": ["q1", "q1", "q2", "q1"],
            "docid": ["d1", "d3", "d9", "x7"],
            "label": pd.array([0, 3, 1, None], dtype="Int64"),
        }
    )
    filled, n = fill_holes(human, labels)
    assert n == 2  # (q1, d3) and (q2, d9); (q1, d1) keeps its human grade; x7 is unlabelled
    got = dict(zip(zip(filled["qid"], filled["docid"]), filled["relevance"]))
    assert got == {("q1", "d1"): 2, ("q1", "d2"): 1, ("q2", "d3"): 3, ("q1", "d3"): 3, ("q2", "d9"): 1}


def test_label_agreement_against_sklearn_and_krippendorff():
    pool_ = pd.DataFrame(
        {
            "qid": list("aaaaaab"),
            "docid": list("1234567"),
            "human": pd.array([0, 1, 2, 3, 3, None, 1], dtype="Int64"),
        }
    )
    judge = pd.Series(pd.array([0, 1, 2, 2, 3, 1, None], dtype="Int64"))
    got = label_agreement(pool_, judge)
    h, j = [0, 1, 2, 3, 3], [0, 1, 2, 2, 3]  # the pairs both labelled
    assert (got["n_pool"], got["n_pairs"], got["n_labelled"]) == (7, 6, 5)
    assert got["coverage"] == pytest.approx(5 / 6)
    assert got["kappa"] == pytest.approx(cohen_kappa_score(h, j), abs=1e-12)
    assert got["qwk"] == pytest.approx(cohen_kappa_score(h, j, weights="quadratic"), abs=1e-12)
    want = krippendorff.alpha(
        reliability_data=[h, j], value_domain=[0, 1, 2, 3], level_of_measurement="ordinal"
    )
    assert got["alpha"] == pytest.approx(want, abs=1e-12)
    none = label_agreement(pool_, pd.Series(pd.array([None] * 7, dtype="Int64")))
    assert none["n_labelled"] == 0 and math.isnan(none["kappa"]) and math.isnan(none["alpha"])


def test_labels_on_pool_aligns_and_refuses_a_pair_twice():
    pool_ = pd.DataFrame({"qid": ["a", "a"], "docid": ["1", "2"]})
    labels = pd.DataFrame({"qid": ["a", "b"], "docid": ["2", "1"], "label": pd.array([3, 1], dtype="Int64")})
    assert list(labels_on_pool(pool_, labels)) == [pd.NA, 3]
    with pytest.raises(ValueError, match="twice"):
        labels_on_pool(pool_, pd.concat([labels, labels]))


# -- tables -------------------------------------------------------------------------------------


def tidy(values: dict[tuple[str, str, str], float], measure: str = "nDCG@10") -> pd.DataFrame:
    """A scores table from {(qrels, run, topic): value} (plus each run's ``all`` mean)."""
    rows = [(r, q, measure, t, v, 1.0) for (q, r, t), v in values.items()]
    df = pd.DataFrame(rows, columns=["run", "qrels", "measure", "topic", "value", "judged_at_k"])
    means = (
        df.groupby(["run", "qrels", "measure"], as_index=False)["value"]
        .mean()
        .assign(topic="all", judged_at_k=1.0)
    )
    return pd.concat([df, means], ignore_index=True)


def test_topic_table_a_run_without_a_topic_scores_zero_there():
    s = tidy({("human", "a", "1"): 0.5, ("human", "a", "2"): 0.7, ("human", "b", "1"): 0.4})
    wide = topic_table(s, "human", "nDCG@10")
    assert wide.loc["2", "b"] == 0.0 and wide.loc["2", "a"] == 0.7 and list(wide.columns) == ["a", "b"]


def test_compare_without_a_common_topic_is_undefined():
    s = tidy({("human", "a", "1"): 0.5, ("human", "b", "1"): 0.4, ("j", "a", "2"): 0.1, ("j", "b", "2"): 0.2})
    row = compare(s, "human", "j", "nDCG@10", CorrelationSettings())
    assert row["n_systems"] == 2 and row["n_topics"] == 0
    assert math.isnan(row["kendall_tau"]) and math.isnan(row["sig_agreement"])


def test_compare_equals_scipy_on_the_common_topics():
    vals = {}
    rng = np.random.default_rng(5)
    for r in "abcdef":
        for t in "123":
            vals[("human", r, t)] = float(rng.random())
            vals[("j", r, t)] = float(rng.random())
    del vals[("j", "a", "3")]  # run a retrieved nothing for topic 3 under j: it scores 0 there
    row = compare(tidy(vals), "human", "j", "nDCG@10", CorrelationSettings(n_boot=50))
    h = pd.Series({r: np.mean([vals[("human", r, t)] for t in "123"]) for r in "abcdef"})
    j = pd.Series({r: np.mean([vals.get(("j", r, t), 0.0) for t in "123"]) for r in "abcdef"})
    assert row["kendall_tau"] == pytest.approx(stats.kendalltau(h, j).statistic, abs=1e-12)
    assert row["spearman"] == pytest.approx(stats.spearmanr(h, j).statistic, abs=1e-12)
    assert (row["n_systems"], row["n_topics"]) == (6, 3)


def test_leaderboard_renders_llmjudge_table3_with_na():
    corr = pd.DataFrame(
        [
            {
                "dataset": "dl21",
                "judge": "j",
                "reference": "human",
                "measure": "nDCG@10",
                "kappa": 0.25,
                "alpha": 0.5,
                "kendall_tau": 0.9,
                "spearman": 0.95,
            },
            {
                "dataset": "dl21",
                "judge": "k",
                "reference": "human+k",
                "measure": "nDCG@10",
                "kappa": float("nan"),
                "alpha": 0.1,
                "kendall_tau": 0.8,
                "spearman": None,
            },
        ]
    )
    board = leaderboard(corr)
    assert list(board.columns) == LEADERBOARD_COLUMNS
    assert list(board.columns[:9]) == [
        "dataset",
        "measure",
        "judge",
        "reference",
        "kappa",
        "alpha",
        "alpha_map",
        "tau",
        "rho",
    ]
    md = render_leaderboard(board, "md")
    assert "α map" not in md  # no judge gives scores: no map to name
    assert (
        "| Cohen's κ | Krippendorff's α | Kendall's τ | Spearman's ρ | τ_gap | τ_gap@k | Bias | LoA low "
        "| LoA high | Calls | $ / 1k judgments | Model s |" in md
    )
    # a correlations table without cost, tau_gap or Bland-Altman columns (written before them):
    # n/a there
    assert "| dl21 | nDCG@10 | j | human | 0.250 | 0.500 | 0.900 | 0.950 | n/a | n/a | n/a |" in md
    assert "|  |  | k | human+k | n/a | 0.100 | 0.800 | n/a |" in md
    tex = render_leaderboard(board, "tex")
    assert (
        r"Cohen's $\kappa$ & Krippendorff's $\alpha$ & Kendall's $\tau$ & Spearman's $\rho$ & "
        r"$\tau_{\mathrm{gap}}$ & $\tau_{\mathrm{gap}}@k$ & Bias & LoA low & LoA high & Calls & "
        r"\$ / 1k judgments & Model s \\" in tex
    )
    assert "<table" in render_leaderboard(board, "html") and "n/a" in render_leaderboard(board, "html")


# -- the plan -----------------------------------------------------------------------------------


def config(**ranking) -> dict:
    """The `.test/ranking` config with an API judge `a` (no model file needed); ``ranking`` keys
    replace the section's."""
    cfg = copy.deepcopy(TEST_CONFIG)
    cfg["models"] = {"a": dict(API)}
    cfg["judges"] = ["a"]
    cfg["ranking"].update(ranking)
    return cfg


def project(cfg: dict) -> Project:
    return Project(cfg, ROOT)


def test_the_default_config_ranks_the_dl21_sample_with_its_systems():
    p = Project.load([], ROOT)
    plan = p.plan("ranking")
    assert "ranking" in p.studies and plan.datasets == ["dl21"] and plan.source("dl21") == "systems"
    assert list(plan.systems) == ["bm25", "bm25_robertson", "qld", "tfidf", "overlap", "length", "random"]
    assert plan.judges == ["smollm2"] and plan.comparisons("dl21") == [("smollm2", "human")]
    assert plan.qrels_names("dl21") == ["human", "smollm2"]
    assert plan.run_files("dl21")["bm25"] == "results/ranking/dl21/runs/bm25.txt"
    # the live judge's requests are PERAS's: its template text, labels, max_tokens
    peras = p.plan("peras")
    judge = plan.judge("smollm2")
    assert judge.template == peras.template_texts["w_cot"]
    assert judge.max_tokens == peras.max_tokens("w_cot")
    # it waits for the PERAS judge job of the same cell, which PERAS runs
    assert plan.peras_judgments("dl21", "smollm2") == [
        "results/peras/judgments/dl21/smollm2/w_cot/default.tsv"
    ]
    assert [(j.rule, j.wc) for j in plan.llm_jobs()] == [
        ("ranking_judge", {"dataset": "dl21", "model": "smollm2"})
    ]
    targets = plan.targets()
    assert (
        "results/ranking/dl21/correlations.tsv" in targets
        and "results/ranking/tables/leaderboard.tex" in targets
    )
    assert "results/ranking/dl21/figures/ranks/smollm2/nDCG@10.pdf" in targets
    # figures: false - no figure per judge x measure (nor the circularity's), the rest stays
    cfg = p.config
    without = (
        Project({**cfg, "ranking": {**cfg["ranking"], "figures": False}}, ROOT).plan("ranking").targets()
    )
    per_judge = [t for t in targets if "/figures/" in t and "/ranking/dl21/" in t]
    assert per_judge and not set(per_judge) & set(without)
    assert set(without) == set(targets) - set(per_judge)


def test_schema_default_leaves_the_study_off():
    cfg = copy.deepcopy(TEST_CONFIG)
    del cfg["ranking"]
    p = project(cfg)
    assert "ranking" not in p.studies and p.targets("ranking") == []


def test_qrels_and_references_with_fill():
    plan = project(config()).plan("ranking")
    assert plan.judges_of("fx") == ["a", "flip"]
    assert plan.comparisons("fx") == [("a", "human+a"), ("flip", "human")]  # imported judges fill nothing
    assert plan.qrels_names("fx") == ["human", "a", "flip", "human+a"]
    assert plan.score_qrels("fx")[-1] == ("human+a", "filled", "a")
    inputs = plan.score_inputs("fx")
    assert inputs["runs"] == [f"results/ranking/fx/runs/{r}.txt" for r in plan.run_names("fx")]
    assert inputs["pairs"] == "results/datasets/fx.tsv"
    assert inputs["labels"] == ["results/ranking/fx/labels/a.tsv", "results/ranking/fx/labels/flip.tsv"]
    assert plan.scoring("fx").run_names == tuple(plan.run_names("fx"))
    assert plan.score_cache("fx") == "results/ranking/fx/scores/cache"
    plain = project(config(unjudged="nonrelevant")).plan("ranking")
    assert plain.comparisons("fx") == [("a", "human"), ("flip", "human")]
    assert plain.measure_slugs == {"nDCG@10": "nDCG@10", "P_rel_2_@5": "P(rel=2)@5"}


def test_run_sources_names_and_urls(tmp_path, monkeypatch):
    cfg = config(runs={"fx": {"source": "download", "names": ["r1", "r2"]}})
    cfg["datasets"]["dl21"] = {"source": "sample", "format": "trec"}
    cfg["ranking"]["runs"]["dl21"] = {"source": "download", "url": "file:///m/dl21/"}
    plan = project(cfg).plan("ranking")
    assert plan.run_names("fx") == ["r1", "r2"] and len(plan.run_names("dl21")) == 63
    assert plan.run_url("fx", "r1").endswith(
        "/Narabzad/llm-relevance-judgement-comparison/main/runs/fx/input.r1.txt"
    )
    assert plan.run_url("dl21", "p_bm25") == "file:///m/dl21/input.p_bm25.txt"
    # urls: one URL per run, named by its key, in the config's order
    urls = {"BM25": "https://example.org/BM25/trec_results_fx.txt", "ICT": "file:///m/input.ICT.txt"}
    plan = project(config(runs={"fx": {"source": "download", "urls": urls}})).plan("ranking")
    assert plan.run_names("fx") == ["BM25", "ICT"]
    assert [plan.run_url("fx", r) for r in ("BM25", "ICT")] == list(urls.values())
    # files: globs in sorted order, named after the file; errors name the key
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    for name in ("input.b.txt", "a.run", "input.c.txt"):
        (tmp_path / "runs" / name).write_text("q1 Q0 d1 1 1.0 x\n")
    files = project(config(runs={"fx": {"source": "files", "paths": ["runs/input.*.txt", "runs/a.run"]}}))
    assert files.plan("ranking").run_files("fx") == {
        "b": "runs/input.b.txt",
        "c": "runs/input.c.txt",
        "a": "runs/a.run",
    }
    for paths, key, message in (
        (["runs/*.trec"], "ranking.runs.fx.paths[0]", "matches no file"),
        (["runs/a.run", "runs/nope.txt"], "ranking.runs.fx.paths[1]", "does not exist"),
        (["runs/a.run", "runs/*.run"], "ranking.runs.fx.paths[1]", "are both named 'a'"),
    ):
        plan = project(config(runs={"fx": {"source": "files", "paths": paths}})).plan("ranking")
        with pytest.raises(InputError) as err:
            plan.run_files("fx")
        assert err.value.key == key and message in err.value.message


@pytest.mark.parametrize(
    "ranking, key, message",
    [
        ({"runs": {}}, "ranking.runs", "the study is enabled but ranks nothing"),
        ({"runs": {"nope": {"source": "systems"}}}, "ranking.runs.nope", "'nope' is not a key of `datasets`"),
        ({"runs": {"fx": {"source": "download"}}}, "ranking.runs.fx.names", "name the runs to download"),
        (
            {"runs": {"fx": {"source": "systems", "names": ["a"]}}},
            "ranking.runs.fx.names",
            "only read with source 'download'",
        ),
        (
            {"runs": {"fx": {"source": "download", "names": ["a"], "paths": ["x"]}}},
            "ranking.runs.fx.paths",
            "only read with source 'files'",
        ),
        ({"runs": {"fx": {"source": "files"}}}, "ranking.runs.fx.paths", "needs the run files"),
        (
            {"runs": {"fx": {"source": "download", "urls": {"a": "file:///a"}, "names": ["a"]}}},
            "ranking.runs.fx.names",
            "either by `urls` or by `names` and `url`",
        ),
        ({"runs": {"fx": {"source": "download", "urls": {}}}}, "ranking.runs.fx.urls", "no run named"),
        (
            {"runs": {"fx": {"source": "download", "urls": {"a": "ftp://x/a"}}}},
            "ranking.runs.fx.urls.a",
            "not an http(s):// or file:// URL",
        ),
        (
            {"runs": {"fx": {"source": "files", "paths": ["x"], "urls": {"a": "file:///a"}}}},
            "ranking.runs.fx.urls",
            "only read with source 'download'",
        ),
        (
            {"runs": {"fx": {"source": "download", "names": ["a", "a"]}}},
            "ranking.runs.fx.names",
            "named twice",
        ),
        (
            {"runs": {"fx": {"source": "download", "names": ["a b"]}}},
            "ranking.runs.fx.names[0]",
            "path component",
        ),
        ({"systems": {"bm25": {"kind": "bm25", "k1": 1}}}, "ranking.systems.bm25.b", "needs `b`"),
        ({"systems": {}}, "ranking.systems", "no system is configured"),
        ({"template": "nope"}, "ranking.template", "'nope' is not a PERAS template"),
        ({"persona": "HX"}, "ranking.persona", "'HX' is not a persona of the run"),
        ({"judges": ["nope"]}, "ranking.judges[0]", "'nope' is not a key of `models`"),
        ({"judges": [], "imported_judges": []}, "ranking.judges", "no judge to compare"),
        ({"imported_judges": ["nope"]}, "ranking.imported_judges[0]", "not a key of `imported_judges`"),
        ({"imported_judges": ["flip", "flip"]}, "ranking.imported_judges[1]", "listed twice"),
        (
            {"imported_judges": [{"name": "flip", "persona": "HA"}]},
            "ranking.imported_judges[0].persona",
            "'HA' is not among",
        ),
        (
            {"measures": ["nDCG@10", "nope@3"]},
            "ranking.measures",
            "ir-measures cannot read the measure 'nope@3'",
        ),
        ({"measures": ["P(rel=2)@10", "P(rel = 2)@10"]}, "ranking.measures[1]", "share the file name"),
        ({"unjudged": "zero"}, "ranking.unjudged", "'zero' is not one of"),
        ({"candidates": "pool"}, "ranking.candidates", "'pool' is not one of"),
        ({"correlation": {"test": "z"}}, "ranking.correlation.test", "'z' is not one of"),
        ({"pool_depth": 0}, "ranking.pool_depth", "0 is less than the minimum of 1"),
    ],
)
def test_bad_sections_name_the_full_key(ranking, key, message):
    with pytest.raises(InputError) as err:
        project(config(**ranking))
    assert f"config key '{key}'" in str(err.value) and message in err.value.message, str(err.value)


def test_a_binary_imported_judge_is_refused():
    cfg = config()
    cfg["imported_judges"]["flip"]["scale"] = "binary"
    with pytest.raises(InputError) as err:
        project(cfg)
    assert err.value.key == "ranking.imported_judges[0]" and "binary scale" in err.value.message


def test_a_judge_cannot_be_called_human():
    cfg = config(judges=["human"])
    cfg["models"]["human"] = dict(API)
    with pytest.raises(InputError, match="cannot be called 'human'"):
        project(cfg)


def test_measure_slug():
    assert measure_slug("P(rel=2)@10") == "P_rel_2_@10" and measure_slug("nDCG@10") == "nDCG@10"
    assert Plan.paths["ranking_figure"].endswith("{measure}.{ext}")


# -- jobs ---------------------------------------------------------------------------------------


def fixture_table(tmp_path) -> Path:
    t = table(
        [
            ("1", "cat fish", "d1", "Cat dog cat.", 3),
            ("1", "cat fish", "d2", "The dog and a fish", 1),
            ("1", "cat fish", "d4", "fish fish", 0),
            ("2", "bird", "d3", "Bird", 2),
            ("2", "bird", "d5", "bird bird bird cat", 1),
        ]
    )
    path = tmp_path / "t.tsv"
    write_dataset(t, path)
    return path


def pytrec_scores(run_file: Path, qrels: dict, measure: str = "ndcg_cut.10") -> dict[str, float]:
    run = read_run(run_file)
    as_dict: dict[str, dict[str, float]] = {}
    for r in run.itertuples():
        as_dict.setdefault(r.qid, {})[r.docid] = float(r.score)
    per_topic = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(as_dict)
    key = measure.replace(".", "_")
    return {t: v[key] for t, v in per_topic.items()}


def test_score_job_human_judge_and_filled_against_pytrec_eval(tmp_path):
    pairs = fixture_table(tmp_path)
    run_file = tmp_path / "runs" / "bm25.txt"
    jobs.system_run_job(
        str(pairs),
        str(run_file),
        System("bm25", {"kind": "bm25", "k1": 0.9, "b": 0.4}, candidates="all", depth=10),
    )
    # a judge that labels (1, d3) - judged for topic 2 only, a hole of topic 1 - and misses (2, d5)
    labels = pd.DataFrame(
        {
            "qid": ["1", "1", "1", "1", "2", "2"],
            "docid": ["d1", "d2", "d4", "d3", "d3", "d5"],
            "label": pd.array([2, 2, 0, 3, 2, None], dtype="Int64"),
        }
    )
    labels.to_csv(tmp_path / "j.tsv", sep="\t", index=False)
    qrels = [["human", "human", ""], ["j", "judge", "j"], ["human+j", "filled", "j"]]
    out = jobs.score_job(
        str(pairs),
        [str(run_file)],
        [str(tmp_path / "j.tsv")],
        str(tmp_path / "s.tsv"),
        Scoring.from_param(
            json.dumps({"qrels": qrels, "judges": ["j"], "measures": ["nDCG@10"], "run_names": ["bm25"]})
        ),
        str(tmp_path / "cache"),
    )
    human = {"1": {"d1": 3, "d2": 1, "d4": 0}, "2": {"d3": 2, "d5": 1}}
    judge = {"1": {"d1": 2, "d2": 2, "d4": 0, "d3": 3}, "2": {"d3": 2}}
    filled = {"1": {"d1": 3, "d2": 1, "d4": 0, "d3": 3}, "2": {"d3": 2, "d5": 1}}
    for name, q in (("human", human), ("j", judge), ("human+j", filled)):
        want = pytrec_scores(run_file, q)
        got = out[(out["qrels"] == name) & (out["topic"] != "all")].set_index("topic")["value"].to_dict()
        assert got == pytest.approx(want, abs=1e-12), name
        mean = out[(out["qrels"] == name) & (out["topic"] == "all")]["value"].item()
        assert mean == pytest.approx(np.mean(list(want.values())), abs=1e-12)
    # judged@10: topic 1's run has 5 documents (every passage), 3 graded by the humans
    human_1 = out[(out["qrels"] == "human") & (out["topic"] == "1")]["judged_at_k"].item()
    assert human_1 == pytest.approx(3 / 5)
    assert list(out.columns) == ["run", "qrels", "measure", "topic", "value", "judged_at_k"]


def test_correlations_job_and_tables(tmp_path):
    pairs = fixture_table(tmp_path)
    systems = {
        "bm25": {"kind": "bm25", "k1": 0.9, "b": 0.4},
        "qld": {"kind": "ql", "mu": 10},
        "length": {"kind": "length"},
        "random": {"kind": "random", "seed": 0},
    }
    runs = {}
    for name, spec in systems.items():
        runs[name] = str(tmp_path / "runs" / f"{name}.txt")
        jobs.system_run_job(str(pairs), runs[name], System(name, spec, candidates="judged", depth=10))
    (tmp_path / "j.tsv").write_text("qid\tdocid\tlabel\n1\td1\t3\n1\td2\t0\n1\td4\t1\n2\td3\t2\n2\td5\t\n")
    out = {k: str(tmp_path / f"{k}.tsv") for k in ("scores", "correlations", "pool", "bland_altman")}
    out["bland_altman_figures"] = str(tmp_path / "ba")
    jobs.score_job(
        str(pairs),
        list(runs.values()),
        [str(tmp_path / "j.tsv")],
        out["scores"],
        Scoring(
            qrels=[["human", "human", ""], ["j", "judge", "j"]],
            judges=["j"],
            measures=["nDCG@10", "P(rel=2)@2"],
            run_names=list(runs),
        ),
        str(tmp_path / "cache"),
    )
    corr = jobs.correlations_job(
        jobs.DatasetFiles(str(pairs), list(runs.values()), out["scores"]),
        [str(tmp_path / "j.tsv")],
        {k: out[k] for k in ("correlations", "pool", "bland_altman", "bland_altman_figures")},
        Pooling(run_names=list(runs), depth=10),
        Comparisons(
            dataset="t", judges=["j"], references=[["j", "human"]], measures=["nDCG@10", "P(rel=2)@2"]
        ),
        CorrelationSettings(n_boot=50),
    )
    assert list(corr.columns) == CORRELATION_COLUMNS and len(corr) == 2
    pool_ = pd.read_csv(out["pool"], sep="\t", dtype={"qid": str})
    assert list(pool_.columns) == ["qid", "docid", "n_runs", "human", "text_known", "j"] and len(pool_) == 5
    row = corr.iloc[0]
    scores = pd.read_csv(out["scores"], sep="\t", dtype={"topic": str})
    means = scores[(scores["topic"] == "all") & (scores["measure"] == "nDCG@10")].pivot(
        index="run", columns="qrels", values="value"
    )
    assert row["kendall_tau"] == pytest.approx(
        stats.kendalltau(means["human"], means["j"]).statistic, abs=1e-12
    )
    assert (row["n_systems"], row["n_topics"], row["n_pool"], row["n_pairs"], row["n_labelled"]) == (
        4,
        2,
        5,
        5,
        4,
    )
    assert row["kappa"] == pytest.approx(cohen_kappa_score([3, 1, 0, 2], [3, 0, 1, 2]), abs=1e-12)
    # the value agreement: the systems' mean nDCG@10 (4 points) and every run x topic (8), numpy's
    ba = read_bland_altman(out["bland_altman"]).set_index(["measure", "level"])
    assert list(ba.reset_index().columns) == ["measure", "level"] + [
        c for c in BLAND_ALTMAN_COLUMNS if c not in ("measure", "level")
    ]
    per_topic = scores[(scores["topic"] != "all") & (scores["measure"] == "nDCG@10")]
    per_topic = per_topic.pivot(index=["run", "topic"], columns="qrels", values="value")
    for level, points in (("system", means), ("response", per_topic)):
        d = (points["j"] - points["human"]).to_numpy()
        got = ba.loc[("nDCG@10", level)]
        assert got["n"] == len(d) == {"system": 4, "response": 8}[level]
        assert got["bias"] == pytest.approx(d.mean(), abs=1e-12)
        assert got["sd"] == pytest.approx(d.std(ddof=1), abs=1e-12)
        assert got["loa_high"] == pytest.approx(d.mean() + 1.96 * d.std(ddof=1), abs=1e-12)
        assert (got["range_low"], got["range_high"], got["range_known"]) == (0.0, 1.0, True)
    assert row["ba_bias"] == ba.loc[("nDCG@10", "system"), "bias"]
    assert row["ba_loa_low"] == ba.loc[("nDCG@10", "system"), "loa_low"]
    board_out = {e: str(tmp_path / f"lb.{e}") for e in ("tsv", "md", "tex", "html")}
    board = jobs.leaderboard_job([out["correlations"]], board_out)
    assert (
        list(board["measure"]) == ["nDCG@10", "P(rel=2)@2"]
        and Path(board_out["md"]).read_text().count("\n") == 4
    )
    fig = {
        k: str(tmp_path / f"{k}.{k.split('_')[1]}")
        for k in ("scores_png", "scores_pdf", "ranks_png", "ranks_pdf")
    }
    jobs.figures_job(out["scores"], out["correlations"], fig, Figure("t", "j", "human", "nDCG@10"))
    assert all(Path(f).stat().st_size > 1000 for f in fig.values())
    # each judge's mean-difference figure, drawn by the job
    assert all((tmp_path / "ba" / f"j.{e}").stat().st_size > 1000 for e in ("png", "pdf"))
    # ranking.figures: false - the same tables, the figures' folder empty
    out["bland_altman_figures"] = str(tmp_path / "ba_none")
    again = jobs.correlations_job(
        jobs.DatasetFiles(str(pairs), list(runs.values()), out["scores"]),
        [str(tmp_path / "j.tsv")],
        {k: out[k] for k in ("correlations", "pool", "bland_altman", "bland_altman_figures")},
        Pooling(run_names=list(runs), depth=10),
        Comparisons(
            dataset="t",
            judges=["j"],
            references=[["j", "human"]],
            measures=["nDCG@10", "P(rel=2)@2"],
            figures=False,
        ),
        CorrelationSettings(n_boot=50),
    )
    assert again.equals(corr) and list((tmp_path / "ba_none").iterdir()) == []


def test_import_labels_job_names_file_and_line(tmp_path):
    pairs = fixture_table(tmp_path)
    good = tmp_path / "ok.qrels"
    good.write_text("1 Q0 d1 3\n1 Q0 d2 2\n2 Q0 d3 0\n")
    got = jobs.import_labels_job(
        str(pairs), str(good), str(tmp_path / "l.tsv"), ImportReading(scale="graded")
    )
    assert list(got["label"]) == [3, 2, 0]
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 Q0 d1 3\n1 Q0 d9 1\n")
    with pytest.raises(InputError) as err:
        jobs.import_labels_job(str(pairs), str(bad), str(tmp_path / "l2.tsv"), ImportReading(scale="graded"))
    assert err.value.path == str(bad) and err.value.line == 2


def test_a_run_naming_no_topic_of_the_dataset_is_an_error_with_its_line(tmp_path):
    pairs = fixture_table(tmp_path)
    run = tmp_path / "other.txt"
    run.write_text("\n77 Q0 d1 1 1.0 x\n")
    with pytest.raises(InputError) as err:
        jobs.score_job(
            str(pairs),
            [str(run)],
            [],
            str(tmp_path / "s.tsv"),
            Scoring(qrels=[["human", "human", ""]], judges=[], measures=["nDCG@10"], run_names=["other"]),
            str(tmp_path / "cache"),
        )
    assert (
        err.value.path == str(run)
        and err.value.line == 2
        and "none of the 2 judged topics" in err.value.message
    )


# -- the estimate -------------------------------------------------------------------------------


def test_estimate_default_counts_the_pool_as_peras_requests(tmp_path):
    """With the default config the systems are ranked in memory: the judge's requests are the
    DL21 sample's 12 pairs, each the very request of PERAS's w_cot/default judge job."""
    wd = tmp_path / "default"
    (wd / "config").mkdir(parents=True)
    shutil.copy(ROOT / "config" / "config.yaml", wd / "config" / "config.yaml")
    p = Project.load([], wd)
    table_, notes = estimate(p, directory=wd)
    row = table_[(table_["stage"] == "ranking_judge")].iloc[0]
    assert (row["dataset"], row["jobs"], row["calls"]) == ("dl21", 1, 12) and bool(row["exact"])
    assert any("pool of 7 runs at depth 10: 12 pairs, 12 with a known passage text" in n for n in notes)
    from judgelab.project.plan import LLMJob
    from judgelab.wiring.estimate import EstimateContext

    ctx = EstimateContext(p, wd, {}, None, {}, [])
    ranking = [
        r
        for _, r, _ in p.plan("ranking").requests(
            LLMJob("ranking_judge", "smollm2", (("dataset", "dl21"), ("model", "smollm2")), "ranking"), ctx
        )
    ]
    wc = (("dataset", "dl21"), ("model", "smollm2"), ("template", "w_cot"), ("persona", "default"))
    peras = [r for _, r, _ in p.plan("peras").requests(LLMJob("peras_judge", "smollm2", wc, "peras"), ctx)]
    assert len(ranking) == len(peras) == 12 and set(ranking) == set(peras)


def test_estimate_of_the_paper_config_before_the_download_is_an_upper_bound(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-key")
    p = Project.load([ROOT / "config" / "paper-ranking.yaml"], tmp_path, ROOT)
    assert p.studies == ["ranking"] and len(p.plan("ranking").run_names("dl21")) == 63
    table_, notes = estimate(p, directory=tmp_path)
    row = table_.set_index("stage").loc["ranking_judge"]
    assert row["calls"] == 53 * 10 * 63 and row["cached"] == 0
    assert any("an upper bound" in n for n in notes)


def test_estimate_counts_the_dl21_pool_exactly_with_the_runs_at_hand(tmp_path, shared_data, monkeypatch):
    """The 63 DL21 runs as files and an API judge: the estimate reads them and counts the top-10
    pool's pairs with a known passage text (7,363 of 7,447), exactly as the judge job asks them."""
    from snakerun import make_workdir

    wd = make_workdir(tmp_path / "dl21", "ranking_dl21")
    (wd / "shared").symlink_to(shared_data)
    (wd / "runs").mkdir()
    for f in sorted((shared_data / "trec-dl-runs" / "dl21").glob("input.*.txt")):
        (wd / "runs" / f.name).symlink_to(f)
    cfg = yaml.safe_load((wd / "config" / "config.yaml").read_text())
    cfg["models"] = {"gpt": dict(API)}
    cfg["judges"], cfg["ranking"]["judges"], cfg["ranking"]["imported_judges"] = ["gpt"], None, []
    monkeypatch.chdir(wd)
    table_, notes = estimate(Project(cfg, ROOT), directory=wd)
    row = table_.set_index("stage").loc["ranking_judge"]
    assert (row["calls"], row["cached"], bool(row["exact"])) == (7363, 0, True)
    assert any(
        "pool of 63 runs at depth 10: 7,447 pairs, 7,363 with a known passage text" in n for n in notes
    )
