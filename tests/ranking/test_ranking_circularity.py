"""The run built by the judge (judgelab.studies.ranking.circularity): the re-ordering rule by hand
(ties, unlabelled passages, depth, trec_eval's base order), the written run file read back in
the new order, the bad base run and depth named by their keys; over the 63 DL21 runs with an
imported judge (the human qrels with a seeded 20% of the grades changed; no LLM call) the
judge-built run's ranks and scores under both qrels equal an independent computation:
ir-measures called directly on the written run file and the 63 others (skipped without the
shared data)."""

from __future__ import annotations

import copy

import ir_measures
import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import ROOT
from scipy import stats
from test_ranking_correlation import shared_folder
from test_ranking_scorecache import changed_grades

from judgelab.data.prepare import build_trec_table
from judgelab.data.readers import read_run
from judgelab.data.tables import write_dataset, write_tsv
from judgelab.errors import InputError
from judgelab.studies.ranking import jobs
from judgelab.studies.ranking.circularity import (
    CIRCULARITY_COLUMNS,
    as_run,
    best_run,
    built_name,
    judge_order,
    labelled_share,
    write_judge_run,
)
from judgelab.studies.ranking.correlation import tau_ap
from judgelab.studies.ranking.runs import trec_order
from judgelab.studies.ranking.scores import read_qrels_table
from judgelab.studies.ranking.settings import Circularity, CircularityFigure, Scoring
from judgelab.wiring.facade import Project

TEST_CONFIG = yaml.safe_load((ROOT / ".test" / "ranking" / "config" / "config.yaml").read_text())


def run_table(rows) -> pd.DataFrame:
    """(qid, docid, score) rows as a run table (ranks in the given order)."""
    t = pd.DataFrame(rows, columns=["qid", "docid", "score"])
    t["rank"] = t.groupby("qid").cumcount() + 1
    t["tag"] = "base"
    return t[["qid", "docid", "rank", "score", "tag"]].astype({"score": float})


def labels(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["qid", "docid", "label"]).astype({"label": "Int64"})


def new_order(order: pd.DataFrame, qid: str) -> list[str]:
    return order[order["qid"] == qid]["docid"].tolist()


BASE = run_table(
    [("1", f"d{i}", 7.0 - i) for i in range(1, 7)]  # trec order d1 .. d6
    # topic 2: every score tied: trec_eval orders by docid descending, c b a
    + [("2", "a", 1.0), ("2", "b", 1.0), ("2", "c", 1.0)]
)
LABELS = labels(
    [
        ("1", "d1", 1),
        ("1", "d2", 3),
        ("1", "d3", 1),  # d4: no row
        ("1", "d5", None),  # a row without a label: unlabelled too
        ("1", "d6", 3),  # below the depth: stays where it is
        ("2", "a", 2),
        ("2", "b", 2),
        ("2", "c", 0),
        ("9", "x", 3),  # a topic the run does not have
    ]
)


def test_reordering_by_hand_ties_unlabelled_and_depth():
    order = judge_order(BASE, LABELS, depth=5)
    # top 5: d2 (3), then d1 and d3 (1, base order kept), then d4 and d5 unlabelled in base order;
    # d6 below the depth keeps its place although the judge gave it 3
    assert new_order(order, "1") == ["d2", "d1", "d3", "d4", "d5", "d6"]
    # base order c, b, a (tied scores, docid descending): b and a (2) keep it, c (0) last
    assert new_order(order, "2") == ["b", "a", "c"]
    assert order[order["qid"] == "1"]["base_rank"].tolist() == [2, 1, 3, 4, 5, 6]
    assert order["rank"].tolist() == [1, 2, 3, 4, 5, 6, 1, 2, 3]
    assert order["label"].isna().tolist() == [False, False, False, True, True, False, False, False, False]
    # depth 1: nothing moves; depth 2: only d1 and d2 swap, and in topic 2 c and b swap
    assert new_order(judge_order(BASE, LABELS, depth=1), "1") == [f"d{i}" for i in range(1, 7)]
    two = judge_order(BASE, LABELS, depth=2)
    assert new_order(two, "1") == ["d2", "d1", "d3", "d4", "d5", "d6"] and new_order(two, "2") == [
        "b",
        "c",
        "a",
    ]
    # a depth past every topic's length: every labelled document moves up, d6 to the top
    assert new_order(judge_order(BASE, LABELS, depth=100), "1") == ["d2", "d6", "d1", "d3", "d4", "d5"]
    # no label at all: the base order
    assert new_order(judge_order(BASE, labels([]), depth=5), "1") == [f"d{i}" for i in range(1, 7)]
    assert labelled_share(order, 5, ["1", "2"]) == pytest.approx((3 / 5 + 3 / 3) / 2)


def test_the_written_run_reads_back_in_the_new_order(tmp_path):
    order = judge_order(BASE, LABELS, depth=5)
    path = tmp_path / "built.txt"
    write_judge_run(as_run(order, built_name("base", "j")), path)
    back = trec_order(read_run(path))  # score descending, ties by docid descending
    assert back["docid"].tolist() == order["docid"].tolist()
    assert back["rank"].tolist() == order["rank"].tolist() and set(back["tag"]) == {"base+j"}
    assert back.groupby("qid")["score"].apply(lambda s: s.is_unique).all()


def test_bad_labels_and_depth():
    twice = labels([("1", "d1", 1), ("1", "d1", 2)])
    with pytest.raises(InputError, match="twice"):
        judge_order(BASE, twice, depth=3)
    with pytest.raises(ValueError):
        judge_order(BASE, LABELS, depth=0)


def test_best_run_ties_by_name():
    scores = pd.DataFrame(
        {
            "run": ["b", "b", "a", "a", "c", "c"],
            "qrels": "human",
            "measure": "nDCG@10",
            "topic": ["1", "2"] * 3,
            "value": [0.5, 0.7, 0.7, 0.5, 0.1, 0.9],
            "judged_at_k": 1.0,
        }
    )
    assert best_run(scores, "nDCG@10") == "a"  # a and b tie at 0.6, c 0.5


# -- the plan ---------------------------------------------------------------------------------------


def config(**circularity) -> dict:
    cfg = copy.deepcopy(TEST_CONFIG)
    cfg["models"] = {
        "a": {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None}
    }
    cfg["judges"] = ["a"]
    cfg["ranking"]["circularity"] = circularity
    return cfg


def test_plan_defaults_targets_and_settings():
    plan = Project(config(), ROOT).plan("ranking")
    assert plan.circularity_enabled and plan.circularity_depth == plan.pool_depth == 10
    assert plan.circularity("fx") == Circularity(
        dataset="fx",
        base="",
        depth=10,
        references=(("a", "human+a"), ("flip", "human")),
        measures=("nDCG@10", "P(rel=2)@5"),
    )
    targets = plan.targets()
    for t in (
        "results/ranking/fx/circularity.tsv",
        "results/ranking/fx/circularity.html",
        "results/ranking/fx/circularity/scores.tsv",
        "results/ranking/fx/circularity/figures/flip/P_rel_2_@5.pdf",
    ):
        assert t in targets, t
    assert plan.circularity_figure("fx", "a", "P_rel_2_@5") == CircularityFigure(
        "fx", "a", "human+a", "P(rel=2)@5"
    )
    named = Project(config(base="qld", depth=3), ROOT).plan("ranking").circularity("fx")
    assert (named.base, named.depth) == ("qld", 3)
    off = Project(config(enabled=False), ROOT).plan("ranking")
    assert not any("circularity" in t for t in off.targets())


def test_a_base_run_that_does_not_exist_is_one_error_naming_the_key():
    with pytest.raises(InputError) as err:
        Project(config(base="nope"), ROOT)
    assert err.value.key == "ranking.circularity.base"
    assert "'nope' is not a run of dataset fx" in err.value.message and "bm25" in err.value.message


def test_a_depth_past_the_pool_gives_each_live_judge_a_labelling_job():
    plan = Project(config(depth=11), ROOT).plan("ranking")
    assert plan.circularity_labelled == ["a"] and plan.circularity("fx").labelled == ("a",)
    jobs = {(j.rule, j.wildcards) for j in plan.llm_jobs()}
    assert ("ranking_circularity_judge", (("dataset", "fx"), ("model", "a"))) in jobs
    assert plan.circularity_labels("fx") == ["results/ranking/fx/circularity/labels/a.tsv"]
    at_pool = Project(config(depth=10), ROOT).plan("ranking")
    assert at_pool.circularity_labelled == [] and not any(
        j.rule == "ranking_circularity_judge" for j in at_pool.llm_jobs()
    )
    cfg = config(depth=11)
    cfg["ranking"]["judges"] = []  # an imported judge's labels are its file's: no job
    assert Project(cfg, ROOT).plan("ranking").circularity_labelled == []
    with pytest.raises(InputError) as err:
        Project(config(depth=0), ROOT)
    assert err.value.key == "ranking.circularity.depth"


def test_the_pairs_a_live_judge_labels_past_the_pool():
    from judgelab.studies.ranking.circularity import base_top, unlabelled_pairs

    base = pd.DataFrame(
        {
            "qid": ["1"] * 4 + ["2"] * 2,
            "docid": ["a", "b", "c", "x", "a", "d"],
            "rank": [1, 2, 3, 4, 1, 2],
            "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0],
            "tag": "r",
        }
    )
    top = base_top(base, 3)
    assert list(zip(top["qid"], top["docid"])) == [("1", "a"), ("1", "b"), ("1", "c"), ("2", "a"), ("2", "d")]
    table = pd.DataFrame(
        {
            "dataset": "t",
            "qid": ["1", "1", "2", "2"],
            "query": ["q one", "q one", "q two", "q two"],
            "docid": ["a", "b", "a", "d"],
            "passage": ["pa", "pb", "pa", "pd"],
            "grade": [1, 0, 2, 0],
        }
    )
    pool = pd.DataFrame({"qid": ["1", "2"], "docid": ["a", "a"], "label": [2, 1]})
    todo = unlabelled_pairs(top, pool, table)
    # (1, a) and (2, a) are in the pool; c has no known text; x is below the depth
    assert list(zip(todo["qid"], todo["docid"], todo["query"], todo["passage"])) == [
        ("1", "b", "q one", "pb"),
        ("2", "d", "q two", "pd"),
    ]


def test_the_job_names_the_key_of_a_base_run_missing_from_the_files(tmp_path):
    pairs = tmp_path / "t.tsv"
    write_dataset(
        pd.DataFrame(
            {"dataset": "t", "qid": ["1"], "query": ["q"], "docid": ["d1"], "passage": ["p"], "grade": [1]}
        ).astype({"grade": "Int64"}),
        pairs,
    )
    run = tmp_path / "r.txt"
    run.write_text("1 Q0 d1 1 1.0 r\n")
    write_tsv(labels([("1", "d1", 1)]), tmp_path / "j.tsv")
    scoring = Scoring(
        qrels=[["human", "human", ""], ["j", "judge", "j"]],
        judges=["j"],
        measures=["nDCG@10"],
        run_names=["r"],
    )
    jobs.score_job(
        str(pairs),
        [str(run)],
        [str(tmp_path / "j.tsv")],
        str(tmp_path / "s.tsv"),
        scoring,
        str(tmp_path / "c"),
    )
    outputs = {k: str(tmp_path / "out" / f"{k}.x") for k in ("runs", "scores", "tsv", "md", "html")}
    with pytest.raises(InputError) as err:
        jobs.circularity_job(
            jobs.DatasetFiles(str(pairs), [str(run)], str(tmp_path / "s.tsv")),
            [str(tmp_path / "j.tsv")],
            outputs,
            scoring,
            Circularity("t", "other", 10, [["j", "human"]], ["nDCG@10"]),
            str(tmp_path / "c"),
        )
    assert err.value.key == "ranking.circularity.base" and "no run 'other'" in err.value.message


# -- the 63 DL21 runs with an imported judge --------------------------------------------------------


def irm_means(run_files: dict, qrels: pd.DataFrame, topics: list[str]) -> pd.Series:
    """Each run's nDCG@10 mean over ``topics`` (0 where it has no document), by ir-measures
    called directly on the run files."""
    q = qrels.rename(columns={"qid": "query_id", "docid": "doc_id"})
    evaluator = ir_measures.evaluator([ir_measures.nDCG @ 10], q)  # the qrels read once for every run
    out = {}
    for name, path in run_files.items():
        per = {m.query_id: m.value for m in evaluator.iter_calc(ir_measures.read_trec_run(str(path)))}
        out[name] = float(np.mean([per.get(t, 0.0) for t in topics]))
    return pd.Series(out)


def rank_of(means: pd.Series, run: str) -> int:
    """1 + the runs scoring more, or as much with a smaller name."""
    v = means[run]
    return 1 + int(((means > v) | ((means == v) & (means.index < run))).sum())


def test_dl21_the_judge_built_run_ranks_as_ir_measures_ranks_it(tmp_path):
    shared = shared_folder()
    d = shared / "trec-dl"
    files = sorted((shared / "trec-dl-runs" / "dl21").glob("input.*.txt"))
    runs = {f.name[len("input.") : -len(".txt")]: f for f in files}
    assert len(runs) == 63
    table = build_trec_table(
        "dl21", d / "qrels.dl21-passage.txt", d / "topics.dl21.txt", d / "qrels_text.dl21.tsv"
    )
    pairs = tmp_path / "dl21.tsv"
    write_dataset(table, pairs)
    human = read_qrels_table(d / "qrels.dl21-passage.txt")
    judge = changed_grades(human, 0.2, seed=11)
    write_tsv(judge.rename(columns={"relevance": "label"}), tmp_path / "flip.tsv")
    scoring = Scoring(
        qrels=[["human", "human", ""], ["flip", "judge", "flip"]],
        judges=["flip"],
        measures=["nDCG@10"],
        run_names=list(runs),
    )
    paths = [str(p) for p in runs.values()]
    scores = str(tmp_path / "scores.tsv")
    jobs.score_job(str(pairs), paths, [str(tmp_path / "flip.tsv")], scores, scoring, str(tmp_path / "cache"))
    out = {"runs": str(tmp_path / "circ" / "runs"), "scores": str(tmp_path / "circ" / "scores.tsv")}
    out |= {e: str(tmp_path / f"circularity.{e}") for e in ("tsv", "md", "html")}
    settings = Circularity("dl21", "", 10, [["flip", "human"]], ["nDCG@10"])
    got = jobs.circularity_job(
        jobs.DatasetFiles(str(pairs), paths, scores),
        [str(tmp_path / "flip.tsv")],
        out,
        scoring,
        settings,
        str(tmp_path / "cache"),
    )
    assert list(got.columns) == CIRCULARITY_COLUMNS and len(got) == 1
    row = got.iloc[0]

    # independently: the base is the best run under the human qrels (ir-measures on the files)
    topics = sorted(human["qid"].unique())
    h_means, j_means = irm_means(runs, human, topics), irm_means(runs, judge, topics)
    base = sorted(h_means.index, key=lambda r: (-h_means[r], r))[0]
    assert row["base"] == base and row["run"] == f"{base}+flip"

    # the written run: the base's top 10 re-ordered by the judge's label, by hand
    written = tmp_path / "circ" / "runs" / "flip.txt"
    lines = [line.split() for line in written.read_text().splitlines()]
    grade = {(q, dd): g for q, dd, g in zip(judge["qid"], judge["docid"], judge["relevance"])}
    base_lines = [line.split() for line in runs[base].read_text().splitlines()]
    for qid in sorted({x[0] for x in base_lines}):
        # trec_eval's order: score descending, ties by docid descending (two stable sorts)
        docs = sorted((x for x in base_lines if x[0] == qid), key=lambda x: x[2], reverse=True)
        ids = [x[2] for x in sorted(docs, key=lambda x: -float(x[4]))]
        top = ids[:10]
        want = (
            sorted(top, key=lambda dd: ((qid, dd) not in grade, -grade.get((qid, dd), 0), top.index(dd)))
            + ids[10:]
        )
        assert [x[2] for x in lines if x[0] == qid] == want, qid

    # its ranks and scores among the 64 systems under both qrels, and the agreement with it
    h_all = pd.concat([h_means, irm_means({row["run"]: written}, human, topics)])
    j_all = pd.concat([j_means, irm_means({row["run"]: written}, judge, topics)])
    assert row["n_systems"] == 64 and row["n_topics"] == 53
    assert row["reference_score"] == pytest.approx(h_all[row["run"]], abs=1e-12)
    assert row["judge_score"] == pytest.approx(j_all[row["run"]], abs=1e-12)
    assert row["reference_rank"] == rank_of(h_all, row["run"])
    assert row["judge_rank"] == rank_of(j_all, row["run"])
    assert row["rank_gap"] == row["reference_rank"] - row["judge_rank"]
    assert (row["base_reference_rank"], row["base_judge_rank"]) == (
        rank_of(h_all, base),
        rank_of(j_all, base),
    )
    assert row["kendall_tau"] == pytest.approx(
        stats.kendalltau(h_all, j_all[h_all.index]).statistic, abs=1e-12
    )
    assert row["spearman"] == pytest.approx(stats.spearmanr(h_all, j_all[h_all.index]).statistic, abs=1e-12)
    order_h = sorted(h_all.index, key=lambda r: (-h_all[r], r))
    order_j = sorted(j_all.index, key=lambda r: (-j_all[r], r))
    assert row["tau_ap"] == pytest.approx(tau_ap(order_h, order_j), abs=1e-12)
    assert row["kendall_tau_without"] == pytest.approx(
        stats.kendalltau(h_means, j_means[h_means.index]).statistic, abs=1e-12
    )
    # the judge puts the run it built at the top: it promotes what it labels relevant
    assert row["judge_rank"] == 1 and row["rank_gap"] >= 0
    assert 0.9 < row["judged_at_k"] <= 1.0 and row["labelled_at_depth"] == pytest.approx(
        row["judged_at_k"], abs=1e-12
    )
    # the study's scores are not touched, and the new run's are the job's (cache hits the second time)
    assert set(pd.read_csv(scores, sep="\t")["run"]) == set(runs)
    assert "| flip | human | nDCG@10 |" in (tmp_path / "circularity.md").read_text()
