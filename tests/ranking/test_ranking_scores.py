"""judgelab.studies.ranking.scores: runs scored with ir-measures under qrels or a judge's labels,
checked by hand on the fixture and against trec_eval's nDCG@10 of the 63 TREC DL 2021 runs."""

from __future__ import annotations

import os
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest

from judgelab.data.readers import read_run
from judgelab.errors import InputError
from judgelab.studies.ranking.runs import dl21_run_names, read_runs
from judgelab.studies.ranking.scores import (
    SCORE_COLUMNS,
    judged_share,
    measure_depth,
    parse_measures,
    qrels_from_labels,
    read_qrels_table,
    score_labels,
    score_runs,
)

ROOT = Path(__file__).resolve().parents[2]
RANKING = ROOT / "tests" / "fixtures" / "ranking"
L2 = np.log2


def shared_folder() -> Path:
    """The shared real data: ``ROOT.parent/shared/data``, else ``$JUDGELAB_SHARED``; skip if neither."""
    for folder in (ROOT.parent / "shared" / "data", os.environ.get("JUDGELAB_SHARED")):
        if folder and Path(folder).is_dir():
            return Path(folder)
    pytest.skip(f"no shared data: {ROOT.parent / 'shared' / 'data'} is absent and JUDGELAB_SHARED is unset")


@pytest.fixture
def runs():
    return read_runs([RANKING / "input.sysA.txt", RANKING / "sysB.run"])


@pytest.fixture
def qrels():
    return read_qrels_table(RANKING / "qrels.txt")


def value(scores: pd.DataFrame, run: str, measure: str, topic: str, column: str = "value") -> float:
    row = scores[(scores["run"] == run) & (scores["measure"] == measure) & (scores["topic"] == topic)]
    assert len(row) == 1, (run, measure, topic)
    return float(row[column].iloc[0])


def test_ndcg10_by_hand(runs, qrels):
    scores = score_runs(runs, qrels, ["nDCG@10"])
    assert list(scores.columns) == SCORE_COLUMNS
    # sysA topic 1 in trec_eval order: d3 (0), d1 (3), dX (unjudged: 0), d4 (1), d2 (2)
    ideal_1 = 3 / L2(2) + 2 / L2(3) + 2 / L2(4) + 1 / L2(5)  # grades 3, 2, 2, 1
    ndcg_a1 = (3 / L2(3) + 1 / L2(5) + 2 / L2(6)) / ideal_1
    ndcg_a2 = (1 / L2(3)) / 1.0  # e2 (0) before e1 (1): the tie broken by docid descending
    assert value(scores, "sysA", "nDCG@10", "1") == pytest.approx(ndcg_a1, abs=1e-12)
    assert value(scores, "sysA", "nDCG@10", "2") == pytest.approx(ndcg_a2, abs=1e-12)
    # topic 99 is in the run but not in the qrels: not scored, not in the mean
    assert value(scores, "sysA", "nDCG@10", "all") == pytest.approx((ndcg_a1 + ndcg_a2) / 2, abs=1e-12)
    assert set(scores["topic"]) == {"1", "2", "all"}
    assert scores.loc[scores["run"] == "sysB", "value"].tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert value(scores, "sysA", "nDCG@10", "1", "judged_at_k") == pytest.approx(4 / 5)
    assert value(scores, "sysA", "nDCG@10", "2", "judged_at_k") == 1.0
    assert value(scores, "sysA", "nDCG@10", "all", "judged_at_k") == pytest.approx(0.9)


def test_other_measures_by_hand(runs, qrels):
    measures = ["P(rel=2)@10", "RBP(rel=2)", "R(rel=2)@100"]
    scores = score_runs(runs, qrels, measures)
    assert scores["measure"].unique().tolist() == measures
    # sysA topic 1: grade >= 2 at ranks 2 (d1) and 5 (d2); 3 such documents judged (d1, d2, d5)
    assert value(scores, "sysA", "P(rel=2)@10", "1") == pytest.approx(2 / 10)
    # RBP, p = 0.8 (ir-measures' default): (1 - p) * sum of p^(rank - 1) over the relevant ranks;
    # the d4/d2 tie broken the other way would put d2 at rank 4 (0.2 * (0.8 + 0.512))
    assert value(scores, "sysA", "RBP(rel=2)", "1") == pytest.approx(0.2 * (0.8 + 0.8**4), abs=1e-9)
    assert value(scores, "sysA", "R(rel=2)@100", "1") == pytest.approx(2 / 3)
    for measure in measures:  # topic 2 has no document of grade >= 2
        assert value(scores, "sysA", measure, "2") == 0.0
    assert value(scores, "sysB", "P(rel=2)@10", "1") == pytest.approx(3 / 10)
    assert value(scores, "sysB", "RBP(rel=2)", "1") == pytest.approx(0.2 * (1 + 0.8 + 0.64), abs=1e-9)
    assert value(scores, "sysB", "R(rel=2)@100", "all") == pytest.approx(0.5)
    # judged_at_k at depth 10 for RBP (no cutoff) and 100 for R@100: all 5 documents of topic 1
    assert value(scores, "sysA", "RBP(rel=2)", "1", "judged_at_k") == pytest.approx(0.8)
    assert value(scores, "sysA", "R(rel=2)@100", "1", "judged_at_k") == pytest.approx(0.8)


def test_judged_share_depth(qrels):
    run = read_run(RANKING / "input.sysA.txt")
    # topic 1 in trec_eval order: d3 (judged, grade 0), d1 (judged), dX (unjudged), d4, d2
    assert judged_share(run, qrels, 2).to_dict() == {"1": 1.0, "2": 1.0, "99": 0.0}
    assert judged_share(run, qrels, 3).to_dict() == pytest.approx({"1": 2 / 3, "2": 1.0, "99": 0.0})


def test_measure_depth():
    parsed = parse_measures(["nDCG@10", "RBP(rel=2)", "R(rel=2)@100", "P@5"])
    assert [measure_depth(m) for m in parsed.values()] == [10, 10, 100, 5]


@pytest.mark.parametrize("name", ["nDCG@", "NoSuchMeasure@10", "nDCG@ten"])
def test_unknown_measure(name, runs, qrels):
    with pytest.raises(InputError, match="config key 'ranking.measures': ir-measures cannot read"):
        score_runs(runs, qrels, [name], key="ranking.measures")


def test_label_table_unlabelled_pairs_are_non_relevant(runs, qrels):
    labels = qrels.rename(columns={"relevance": "label"}).astype({"label": object})
    labels.loc[(labels["docid"] == "d1"), "label"] = None
    labels.loc[(labels["docid"] == "d5"), "label"] = np.nan
    labels.loc[(labels["docid"] == "e2"), "label"] = pd.NA
    by_labels = score_labels(runs, labels, ["nDCG@10"])
    absent = qrels[~qrels["docid"].isin(["d1", "d5", "e2"])]
    pd.testing.assert_frame_equal(by_labels, score_runs(runs, absent, ["nDCG@10"]))
    # sysA topic 1: d3 (0), d1 (unlabelled: 0), dX, d4 (1), d2 (2); ideal from d2 (2), d4 (1)
    expected = (1 / L2(5) + 2 / L2(6)) / (2 / L2(2) + 1 / L2(3))
    assert value(by_labels, "sysA", "nDCG@10", "1") == pytest.approx(expected, abs=1e-12)
    assert value(by_labels, "sysA", "nDCG@10", "1", "judged_at_k") == pytest.approx(3 / 5)


def test_qrels_from_labels_checks():
    ok = qrels_from_labels(pd.DataFrame({"qid": [1, 1], "docid": ["a", "b"], "label": [2.0, None]}))
    assert ok.to_dict("records") == [{"qid": "1", "docid": "a", "relevance": 2}]
    with pytest.raises(InputError, match=r"pair \(qid 1, docid b\) the relevance 1.5, not an integer"):
        qrels_from_labels(pd.DataFrame({"qid": ["1", "1"], "docid": ["a", "b"], "label": [2, 1.5]}))
    with pytest.raises(InputError, match=r"docid a\) the relevance 'high', not"):
        qrels_from_labels(pd.DataFrame({"qid": ["1"], "docid": ["a"], "label": ["high"]}))
    with pytest.raises(InputError, match=r"lists the pair \(qid 1, docid a\) twice"):
        qrels_from_labels(pd.DataFrame({"qid": ["1", "1"], "docid": ["a", "a"], "label": [1, 1]}))
    with pytest.raises(InputError, match=r"no column\(s\) \['label'\]"):
        qrels_from_labels(pd.DataFrame({"qid": ["1"], "docid": ["a"], "grade": [1]}))


def test_read_qrels_table_conflicting_grades(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("1 0 a 1\n1 0 b 0\n1 0 a 1\n1 0 a 2\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read_qrels_table(path)
    assert str(exc.value) == (
        f"{path}:4: pair (qid 1, docid a) is judged twice with different grades (1 at line 1, 2 here)"
    )
    path.write_text("1 0 a 1\n1 0 b 0\n1 0 a 1\n", encoding="utf-8")
    assert read_qrels_table(path).to_dict("list") == {
        "qid": ["1", "1"],
        "docid": ["a", "b"],
        "relevance": [1, 0],
    }


def test_run_without_qrels_topic(qrels, tmp_path):
    path = tmp_path / "input.far.txt"
    path.write_text("99 Q0 z 1 1.0 far\n", encoding="utf-8")
    scores = score_runs(read_runs([path]), qrels, ["nDCG@10", "P@5"])
    assert scores["topic"].tolist() == ["all", "all"]
    assert scores["value"].isna().all() and scores["judged_at_k"].isna().all()


def test_dl21_ndcg10_equals_trec_eval():
    """Must-show: every one of the 63 DL21 runs' nDCG@10, per topic and averaged, is trec_eval 9's
    (``dl21.ndcg_cut10``, 4 decimals) to 1e-4."""
    shared = shared_folder()
    folder = shared / "trec-dl-runs" / "dl21"
    runs = read_runs([folder / f"input.{name}.txt" for name in dl21_run_names()])
    scores = score_runs(runs, read_qrels_table(shared / "trec-dl" / "qrels.dl21-passage.txt"), ["nDCG@10"])
    ref = pd.read_csv(shared / "trec-dl-runs" / "dl21.ndcg_cut10", dtype={"runid": str, "topic": str})
    ref["topic"] = ref["topic"].replace({"average": "all"})
    both = scores.merge(
        ref,
        left_on=["run", "topic"],
        right_on=["runid", "topic"],
        how="outer",
        indicator=True,
        validate="one_to_one",
    )
    assert (both["_merge"] == "both").all(), both[both["_merge"] != "both"]
    assert both["run"].nunique() == 63 and len(both) == 63 * (53 + 1)
    diff = (both["value"] - both["ndcg_cut_10"]).abs()
    assert diff.max() <= 1e-4, both.loc[diff.idxmax()].to_dict()


@pytest.mark.parametrize("name", ["Compat", "Compat(p=0.8)", "Compat(p=0.5,normalize=False)"])
def test_compat_is_ir_measures_compat_provider(name):
    """The one-pass compatibility equals ir-measures' compat provider on seeded topics with tied
    scores, graded and unjudged documents, a qrels topic the run lacks and one without any
    relevant document; score_runs gives it per topic and the mean over the run's topics."""
    rng = np.random.default_rng(7)
    qrels_rows, run_rows = [], []
    for t in range(12):
        docs = [f"d{i}" for i in range(rng.integers(5, 60))]
        for d in docs:
            if rng.random() < 0.7:  # judged
                grade = 0 if t == 3 else int(rng.integers(0, 4))
                qrels_rows.append((f"q{t}", d, grade))
        if t != 11:  # q11: a qrels topic the run lacks
            for d in docs[: rng.integers(1, len(docs) + 1)]:
                run_rows.append((f"q{t}", d, float(rng.integers(0, 6))))  # many ties
    qrels = pd.DataFrame(qrels_rows, columns=["qid", "docid", "relevance"])
    run = pd.DataFrame(run_rows, columns=["qid", "docid", "score"])
    measure = ir_measures.parse_measure(name)
    irm_qrels = [ir_measures.Qrel(q, d, int(r)) for q, d, r in qrels_rows]
    ordered = run.sort_values(["qid", "score", "docid"], ascending=[True, False, False])
    irm_run = [ir_measures.ScoredDoc(q, d, s) for q, d, s in ordered.itertuples(index=False)]
    want = {m.query_id: m.value for m in ir_measures.compat.iter_calc([measure], irm_qrels, irm_run)}
    scores = score_runs({"r": run.assign(rank=1)}, qrels, [name])
    got = scores[scores["topic"] != "all"].set_index("topic")["value"].to_dict()
    assert set(got) == {f"q{t}" for t in range(11)} and got["q3"] == 0.0
    assert got == pytest.approx({q: v for q, v in want.items() if q in got}, abs=1e-12)
    mean = scores[scores["topic"] == "all"]["value"].item()
    assert mean == pytest.approx(np.mean(list(got.values())), abs=1e-12)
