"""``judgelab annotate choose``: the next topics by the random and the stratified strategy
(deterministic for a seed, the inclusion probabilities they write checked by drawing), a chosen
topic's pool pairs with a cap, and the command from a dataset table and run files to a pairs file
the server reads."""

from __future__ import annotations

import collections

import numpy as np
import pandas as pd
import pytest

from judgelab.annotate.choose import choose, choose_topics, label_mix, read_labels
from judgelab.annotate.pairs import read_pairs
from judgelab.errors import InputError

#: Six topics whose judge label mixes are 0, 0.5, 1, 2, 2.5, 3 (t1 .. t6; t4 has five pool pairs),
#: and t7, whose passages are unknown (never a candidate).
MIX = {"t1": [0, 0], "t2": [0, 1], "t3": [1, 1], "t4": [2, 2, 2, 2, 2], "t5": [2, 3], "t6": [3, 3], "t7": [1]}


@pytest.fixture
def pool_and_labels():
    rows = [(q, f"{q}-d{i}", len(ls)) for q, ls in MIX.items() for i in range(len(ls))]
    pool = pd.DataFrame(rows, columns=["qid", "docid", "n"]).drop(columns="n")
    pool = pool.assign(query="q " + pool["qid"], passage="p " + pool["docid"], text_known=pool["qid"] != "t7")
    labels = pd.DataFrame(
        [(q, f"{q}-d{i}", v) for q, ls in MIX.items() for i, v in enumerate(ls)],
        columns=["qid", "docid", "label"],
    )
    return pool, labels


def test_the_label_mix_is_the_judge_mean_label_per_topic(pool_and_labels):
    pool, labels = pool_and_labels
    assert label_mix(pool, labels).to_dict() == {
        "t1": 0,
        "t2": 0.5,
        "t3": 1,
        "t4": 2,
        "t5": 2.5,
        "t6": 3,
        "t7": 1,
    }


@pytest.mark.parametrize("strategy", ["random", "stratified"])
def test_a_choice_is_the_same_for_a_seed(pool_and_labels, strategy):
    pool, labels = pool_and_labels
    first = choose(pool, labels, 3, strategy, seed=7)
    pd.testing.assert_frame_equal(first, choose(pool, labels, 3, strategy, seed=7))
    picks = {tuple(dict.fromkeys(choose(pool, labels, 3, strategy, seed=s)["qid"])) for s in range(8)}
    assert len(picks) > 1 and all("t7" not in p for p in picks)


def test_random_topics_and_their_inclusion(pool_and_labels):
    pool, labels = pool_and_labels
    out = choose(pool, labels, 2, "random", seed=1, exclude=["t1", "t2"])
    assert set(out["qid"]) <= {"t3", "t4", "t5", "t6"} and out["qid"].nunique() == 2
    assert (out["topic_inclusion"] == 0.5).all() and (out["strategy"] == "random").all()


def test_stratified_takes_one_topic_per_stratum_with_its_probability(pool_and_labels):
    pool, labels = pool_and_labels
    out = choose(pool, labels, 3, "stratified", seed=0)
    assert (out["topic_inclusion"] == 0.5).all() and (out["strategy"] == "stratified").all()
    counts: collections.Counter[str] = collections.Counter()
    draws = 100
    for seed in range(draws):
        chosen = choose_topics(pool, labels, 3, "stratified", np.random.default_rng(seed))
        # strata by mix: (t1, t2), (t3, t4), (t5, t6); one of each, each with probability 1/2
        assert [sum(t in s for t in chosen) for s in (("t1", "t2"), ("t3", "t4"), ("t5", "t6"))] == [1, 1, 1]
        assert set(chosen.values()) == {0.5}
        counts.update(list(chosen))
    assert all(abs(counts[t] / draws - 0.5) < 0.15 for t in ("t1", "t2", "t3", "t4", "t5", "t6")), counts
    # two strata of three: probability 1/3 each
    assert set(choose_topics(pool, labels, 2, "stratified", np.random.default_rng(0)).values()) == {1 / 3}


def test_a_topic_pairs_are_capped_uniformly_in_pool_order(pool_and_labels):
    pool, labels = pool_and_labels
    for seed in range(10):
        out = choose(pool, labels, 6, "random", seed=seed, cap=3)
        t4 = out[out["qid"] == "t4"]
        assert len(t4) == 3 and list(t4["docid"]) == sorted(t4["docid"])
        assert (t4["pair_inclusion"] == 0.6).all() and (out[out["qid"] == "t1"]["pair_inclusion"] == 1).all()
    assert list(out.columns[:4]) == ["qid", "docid", "query", "passage"]


def test_what_cannot_be_chosen_is_one_clear_error(pool_and_labels):
    pool, labels = pool_and_labels
    with pytest.raises(InputError, match="7 topics asked for: between 1 and the 6 candidate topics"):
        choose(pool, labels, 7, "random", seed=0)
    with pytest.raises(
        InputError,
        match="needs a judge label on its pool on every candidate topic, and 1 have none \\(e.g. t6\\)",
    ):
        choose(pool, labels[labels["qid"] != "t6"], 2, "stratified", seed=0)
    with pytest.raises(InputError, match="unknown strategy 'bogus'"):
        choose(pool, labels, 2, "bogus", seed=0)
    with pytest.raises(InputError, match="the active strategy needs the systems' scores"):
        choose(pool, labels, 2, "active", seed=0)
    with pytest.raises(InputError, match="cap 0"):
        choose(pool, labels, 2, "random", seed=0, cap=0)


def test_the_command_writes_a_pairs_file_the_server_reads(tmp_path):
    from judgelab.cli import main

    table = pd.DataFrame(
        [("toy", q, f"query {q}", d, f"passage {d}", 1) for q in ("1", "2", "3") for d in ("a", "b", "c")],
        columns=["dataset", "qid", "query", "docid", "passage", "grade"],
    )
    table.to_csv(tmp_path / "toy.tsv", sep="\t", index=False)
    for run, docs in (("r1", "abc"), ("r2", "cbx")):  # x: retrieved, text unknown
        (tmp_path / f"{run}.run").write_text(
            "".join(f"{q} Q0 {d} {i + 1} {10 - i} {run}\n" for q in "123" for i, d in enumerate(docs))
        )
    judge = "qid\tdocid\tlabel\n" + "".join(
        f"{q}\t{d}\t{v}\n" for q, v in (("1", 0), ("2", 2), ("3", 3)) for d in "ab"
    )
    (tmp_path / "judge.tsv").write_text(judge + "3\tc\t\n")  # a missing label stays missing
    assert read_labels(tmp_path / "judge.tsv")["label"].isna().sum() == 1
    (tmp_path / "ana.qrels").write_text("1 0 a 1\n")
    args = ["annotate", "choose", str(tmp_path / "toy.tsv"), "--run", str(tmp_path / "r1.run")]
    args += ["--run", str(tmp_path / "r2.run"), "--labels", str(tmp_path / "judge.tsv"), "--topics", "2"]
    args += ["--strategy", "stratified", "--depth", "2", "--exclude", str(tmp_path / "ana.qrels")]
    assert main([*args, "--out", str(tmp_path / "pairs.tsv")]) == 0
    pairs = read_pairs(tmp_path / "pairs.tsv")
    # depth 2: r1 retrieves a, b and r2 c, b (x is third); topic 1 is excluded; 2 and 3 in a random order
    assert sorted({p.qid for p in pairs}) == ["2", "3"]
    assert sorted(p.docid for p in pairs if p.qid == "2") == ["a", "b", "c"]
    assert pairs[0].query == f"query {pairs[0].qid}"
