"""Using the labels people collected (issue 43, "Using them"): the annotators' qrels merged by the
stated rule (the first file's label); the ranking study's estimate of the actual systems' scores
from them - PPI++ and human-only with their intervals, judge-only - on a hand-made collection
(tests/annotate_ppi.py), its numbers checked against ``ppi-python`` (``ppi_mean_ci``,
``classical_mean_ci``) on per-topic nDCG@10 computed by pytrec_eval (trec_eval's own code); the
chosen-pairs file's rules (complete topics only; with unequal inclusion the weighted estimate,
checked against ``weighted_ppi_mean`` on pytrec_eval's values); every bad input one error naming
its file and line or its config key; the plan's key, paths and checks."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import yaml
from annotate_ppi import JUDGE, MEASURE, ORDERS, estimate, runs
from conftest import FIXTURES, ROOT

from judgelab.annotate.labels import MERGE_RULE, read_annotated
from judgelab.errors import InputError
from judgelab.studies.ranking.annotated import annotated_topics
from judgelab.wiring.facade import Project

#: The hand-made labels of two annotators: ana labels topics 1001 and 2002 and two pairs of 3003;
#: bob labels 3003 whole (two of its pairs differently from ana) and one pair of 1001 differently.
ANA = [
    ("1001", "d1", 3),
    ("1001", "d2", 2),
    ("1001", "d3", 0),
    ("1001", "d4", 3),
    ("1001", "d5", 1),
    ("1001", "d6", 0),
    ("2002", "e1", 1),
    ("2002", "e2", 0),
    ("2002", "e3", 3),
    ("2002", "e4", 2),
    ("2002", "e5", 0),
    ("2002", "e6", 0),
    ("3003", "f1", 0),
    ("3003", "f2", 2),
]
BOB = [("1001", "d1", 1), ("3003", "f1", 2), ("3003", "f2", 3), ("3003", "f3", 1), ("3003", "f4", 0)]


def qrels_file(path, rows) -> str:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    return str(path)


def test_several_annotators_merge_by_the_first_file_that_labels_the_pair(tmp_path):
    ana, bob = qrels_file(tmp_path / "ana.qrels", ANA), qrels_file(tmp_path / "bob.qrels", BOB)
    merged = read_annotated([ana, bob], key="k")
    got = {(q, d): (g, a) for q, d, g, a in merged.itertuples(index=False)}
    assert len(got) == 16  # ana's 14 and bob's f3, f4
    assert got[("1001", "d1")] == (3, "ana") and got[("3003", "f1")] == (0, "ana")
    assert got[("3003", "f3")] == (1, "bob") and got[("3003", "f4")] == (0, "bob")
    swapped = read_annotated([bob, ana], key="k").set_index(["qid", "docid"])
    assert swapped.loc[("1001", "d1"), "relevance"] == 1 and swapped.loc[("3003", "f2"), "relevance"] == 3
    assert MERGE_RULE == "first file listed that labels the pair"


def test_bad_annotated_files_are_one_error_naming_the_file_and_line_or_the_key(tmp_path):
    bad = tmp_path / "bad.qrels"
    bad.write_text("1001 0 d1 3\n1001 0 d2 7\n")
    with pytest.raises(InputError, match=r"bad.qrels:2: grade 7 is outside 0-3"):
        read_annotated([str(bad)], key="k")
    twice = qrels_file(tmp_path / "twice.qrels", [("1001", "d1", 3), ("1001", "d1", 1)])
    with pytest.raises(InputError, match=r"twice.qrels:2: pair \(qid 1001, docid d1\)"):
        read_annotated([twice], key="k")
    empty = tmp_path / "none.qrels"
    empty.write_text("")
    with pytest.raises(InputError, match=r"config key 'k': none of the annotated qrels files"):
        read_annotated([str(empty)], key="k")
    other = read_annotated(
        [qrels_file(tmp_path / "other.qrels", [("77", "x1", 2), ("78", "x2", 1)])], key="k"
    )
    with pytest.raises(
        InputError,
        match=r"config key 'ranking.annotated.fx.qrels': the annotated labels cover no topic of dataset fx",
    ):
        annotated_topics(other, ["1001", "2002", "3003", "4004"], "fx")


def pytrec_values(qrels: dict[tuple[str, str], int]) -> pd.DataFrame:
    """topic x run nDCG@10 by pytrec_eval (trec_eval's ndcg_cut_10) under ``qrels``."""
    import pytrec_eval

    q: dict[str, dict[str, int]] = {}
    for (qid, docid), g in qrels.items():
        q.setdefault(qid, {})[docid] = int(g)
    out = {}
    for name, ranked in runs().items():
        run = {
            t: {d: float(100 - r) for r, d in enumerate(docs, start=1)}
            for t, docs in ranked.items()
            if t in q
        }
        res = pytrec_eval.RelevanceEvaluator(q, {"ndcg_cut.10"}).evaluate(run)
        out[name] = {t: v["ndcg_cut_10"] for t, v in res.items()}
    return pd.DataFrame(out)


@pytest.mark.slow  # importing ppi-python (numba) alone takes 2.5 s: out of the fast lane
def test_the_estimate_equals_ppi_python_on_trec_eval_values(tmp_path):
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (a test dependency) is not installed")
    ana, bob = qrels_file(tmp_path / "ana.qrels", ANA), qrels_file(tmp_path / "bob.qrels", BOB)
    table = estimate(tmp_path / "out", [ana, bob], alpha=0.1)
    merged = {(q, d): g for q, d, g in ANA}
    merged.update({(q, d): g for q, d, g in BOB if (q, d) not in merged})
    human = pytrec_values(merged)  # topics 1001, 2002, 3003
    judge = pytrec_values(JUDGE)  # every topic
    labelled, rest = ["1001", "2002", "3003"], ["4004"]
    assert list(table["system"]) == list(ORDERS) and set(table["judge"]) == {"judge"}
    assert (
        set(table["measure"]) == {MEASURE}
        and set(table["n_annotated"]) == {3}
        and set(table["n_topics"]) == {4}
    )
    assert set(table["annotators"]) == {"ana, bob"} and set(table["merge"]) == {MERGE_RULE}
    for row in table.itertuples():
        y, yhat = human.loc[labelled, row.system].to_numpy(), judge.loc[labelled, row.system].to_numpy()
        yu = judge.loc[rest, row.system].to_numpy()
        low, high = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=0.1)
        point = ppi_py.ppi_mean_pointestimate(y, yhat, yu)
        assert (row.ppi_low, row.ppi, row.ppi_high) == pytest.approx(
            (float(np.ravel(low)[0]), float(np.ravel(point)[0]), float(np.ravel(high)[0])), abs=1e-12
        )
        c_low, c_high = ppi_py.classical_mean_ci(y, alpha=0.1)
        assert (row.human_low, row.human_only, row.human_high) == pytest.approx(
            (float(np.ravel(c_low)[0]), y.mean(), float(np.ravel(c_high)[0])), abs=1e-12
        )
        assert row.judge_only == pytest.approx(judge[row.system].mean(), abs=1e-12)
        assert row.ppi_low <= row.ppi <= row.ppi_high and 0.0 <= row.ppi_lambda <= 1.0
    md = (tmp_path / "out" / "ppi_estimate.md").read_text()
    assert "## fx: judge, nDCG@10" in md and "3 of 4 topics annotated (ana, bob" in md
    assert "PPI++ 90% interval" in md


def chosen_file(path, rows, strategy: str | None = None) -> str:
    """A chosen-pairs file (judgelab annotate choose's columns) of (qid, docid, topic inclusion);
    its strategy ``random`` when the probabilities are equal, else ``stratified`` (or ``strategy``)."""
    uniform = len({p for _, _, p in rows}) == 1
    table = pd.DataFrame(
        [
            {
                "qid": q,
                "docid": d,
                "query": f"query {q}",
                "passage": f"text {d}",
                "strategy": strategy or ("random" if uniform else "stratified"),
                "topic_inclusion": p,
                "pair_inclusion": p,
            }
            for q, d, p in rows
        ]
    )
    table.to_csv(path, sep="\t", index=False)
    return str(path)


def test_the_chosen_pairs_file_keeps_complete_topics_and_its_errors_name_the_key(tmp_path):
    ana = qrels_file(tmp_path / "ana.qrels", ANA)
    # ana finished 1001 and 2002 of the chosen 1001, 2002, 3003; 3003 is half done: left out
    rows = [(q, d, 0.75) for q, d, _ in ANA] + [("3003", "f3", 0.75), ("3003", "f4", 0.75)]
    table = estimate(tmp_path / "uniform", [ana], chosen_file(tmp_path / "c.tsv", rows))
    assert set(table["n_annotated"]) == {2} and set(table["n_topics"]) == {4}
    # equal probabilities: the plain estimate, as without a chosen file
    assert set(table["estimator"]) == {"ppi"} and set(table["strategy"]) == {"random"}
    without = [r for r in rows if r[0] != "2002"]
    with pytest.raises(
        InputError, match=r"'ranking.annotated.fx.chosen': the annotated labels cover topic 2002"
    ):
        estimate(tmp_path / "stray", [ana], chosen_file(tmp_path / "s.tsv", without))
    mixed = [(q, d, 0.5 if d == "d1" else 0.75) for q, d, _ in rows]
    with pytest.raises(
        InputError, match=r"'ranking.annotated.fx.chosen': topic 1001 has different topic_inclusion"
    ):
        estimate(tmp_path / "mixed", [ana], chosen_file(tmp_path / "m.tsv", mixed))
    one = qrels_file(tmp_path / "one.qrels", [r for r in ANA if r[0] == "1001"])
    with pytest.raises(InputError, match=r"'ranking.annotated.fx': 1 annotated topics of the 4"):
        estimate(tmp_path / "one", [one])


#: The inclusion probabilities of a hand-made unequal choice of 3 of the 4 topics (summing to 3
#: over the collection: 4004 was not chosen); with them every system's lambda lies inside (0, 1).
UNEQUAL = {"1001": 0.9, "2002": 0.5, "3003": 0.8, "4004": 0.8}


def unequal_rows() -> list[tuple[str, str, float]]:
    """The chosen pairs of 1001, 2002 and 3003 (f1-f4) with :data:`UNEQUAL`'s probabilities."""
    pairs = [(q, d) for q, d, _ in ANA] + [("3003", "f3"), ("3003", "f4")]
    return [(q, d, UNEQUAL[q]) for q, d in pairs]


def test_unequal_inclusion_gives_the_weighted_estimate_on_trec_eval_values(tmp_path):
    from judgelab.analysis.ppi import weighted_ppi_mean

    ana, bob = qrels_file(tmp_path / "ana.qrels", ANA), qrels_file(tmp_path / "bob.qrels", BOB)
    chosen = chosen_file(tmp_path / "c.tsv", unequal_rows(), "active")
    table = estimate(tmp_path / "out", [ana, bob], chosen, alpha=0.1)
    assert set(table["estimator"]) == {"weighted_ppi"} and set(table["strategy"]) == {"active"}
    assert set(table["n_annotated"]) == {3} and set(table["n_topics"]) == {4}
    merged = {(q, d): g for q, d, g in ANA}
    merged.update({(q, d): g for q, d, g in BOB if (q, d) not in merged})
    human = pytrec_values(merged)  # 1001, 2002, 3003
    judge = pytrec_values(JUDGE).loc[["1001", "2002", "3003", "4004"]]
    labelled = ["1001", "2002", "3003"]
    pi = np.array([UNEQUAL[t] for t in labelled])  # every chosen topic finished: m / n = 1
    for row in table.itertuples():
        y, yhat = human.loc[labelled, row.system].to_numpy(), judge.loc[labelled, row.system].to_numpy()
        everywhere = judge[row.system].to_numpy()
        w = weighted_ppi_mean(y, yhat, everywhere, pi, alpha=0.1)
        assert (row.ppi_low, row.ppi, row.ppi_high, row.ppi_lambda) == pytest.approx(
            (float(w.low), float(w.estimate), float(w.high), float(w.lam)), abs=1e-12
        )
        # the Horvitz-Thompson point estimate by hand: the judge's mean, rectified by 1 / pi
        by_hand = w.lam * everywhere.mean() + ((y - w.lam * yhat) / pi).sum() / 4
        assert row.ppi == pytest.approx(float(by_hand), abs=1e-12)
        h = weighted_ppi_mean(y, yhat, everywhere, pi, alpha=0.1, lam=0.0)
        assert (row.human_low, row.human_only, row.human_high) == pytest.approx(
            (float(h.low), float((y / pi).sum() / 4), float(h.high)), abs=1e-12
        )
        assert row.judge_only == pytest.approx(everywhere.mean(), abs=1e-12)
        assert 0.0 < row.ppi_lambda < 1.0 and row.ppi_low < row.ppi < row.ppi_high
    md = (tmp_path / "out" / "ppi_estimate.md").read_text()
    assert "Estimator: weighted PPI (topics chosen by `active`, unequal probabilities: weighted)" in md
    assert "weighted PPI 90% interval" in md and "does not depend on their values" in md


def test_a_half_done_topic_scales_the_finished_topics_inclusion_and_two_are_too_few(tmp_path):
    from judgelab.annotate.labels import read_annotated, read_chosen
    from judgelab.studies.ranking.annotated import topic_sample

    ana = qrels_file(tmp_path / "ana.qrels", ANA)  # 3003 half done: 2 of the 3 chosen finished
    chosen = read_chosen(chosen_file(tmp_path / "c.tsv", unequal_rows(), "stratified"))
    used = annotated_topics(read_annotated([ana], key="k"), list(UNEQUAL), "fx", chosen)
    sample = topic_sample(chosen, used, "fx")
    assert used == ["1001", "2002"] and sample.estimator == "weighted_ppi"
    assert sample.inclusion is not None and dict(sample.inclusion) == pytest.approx(
        {"1001": 0.9 * 2 / 3, "2002": 0.5 * 2 / 3}, abs=1e-15
    )
    with pytest.raises(
        InputError, match=r"'ranking.annotated.fx': 2 annotated topics chosen with unequal probabilities"
    ):
        estimate(tmp_path / "two", [ana], chosen_file(tmp_path / "c2.tsv", unequal_rows(), "stratified"))


@pytest.fixture(scope="module")
def config() -> dict:
    cfg = yaml.safe_load((ROOT / ".test" / "ranking" / "config" / "config.yaml").read_text())
    for k in ("qrels", "topics", "texts"):
        cfg["datasets"]["fx"][k] = str(FIXTURES / "trec" / cfg["datasets"]["fx"][k].split("/")[-1])
    cfg["imported_judges"]["flip"]["path"] = str(FIXTURES / "trec" / "qrels.txt")
    return cfg


def test_the_plan_adds_the_estimate_per_annotated_dataset_and_checks_the_key(config, tmp_path):
    (tmp_path / "ana.qrels").write_text("101 0 d1 2\n")
    cfg = copy.deepcopy(config)
    cfg["ranking"]["annotated"] = {"fx": {"qrels": ["ana.qrels"]}}
    plan = Project(cfg, ROOT, workdir=tmp_path).plan("ranking")
    assert f"{cfg['results']}/ranking/fx/ppi_estimate.tsv" in plan.targets()
    inputs = plan.annotated_inputs("fx")
    assert inputs["annotated"] == ["ana.qrels"] and "chosen" not in inputs
    assert inputs["scores"].endswith("ranking/fx/scores.tsv")
    settings = plan.annotated_estimate("fx")
    assert settings.judges == ("smollm2", "flip") and settings.alpha == 0.05
    cfg["ranking"]["annotated"] = {"dl99": {"qrels": ["ana.qrels"]}}
    with pytest.raises(
        InputError, match=r"'ranking.annotated.dl99': 'dl99' is not a dataset of ranking.runs"
    ):
        Project(cfg, ROOT, workdir=tmp_path).plan("ranking").check()
    cfg["ranking"]["annotated"] = {"fx": {"qrels": ["ana.qrels", "bob.qrels"]}}
    with pytest.raises(InputError, match=r"'ranking.annotated.fx.qrels\[1\]': bob.qrels does not exist"):
        Project(cfg, ROOT, workdir=tmp_path).plan("ranking").check()


def test_a_run_read_for_some_topics_skips_the_others_unparsed(tmp_path):
    from judgelab.data.readers import read_run

    f = tmp_path / "r.txt"
    f.write_text("1 Q0 a 1 2.0 r\n2 Q0 b 1 not-a-score r\n1 Q0 c 2 1.0 r\n")
    run = read_run(f, "r", topics={"1"})
    assert list(run["docid"]) == ["a", "c"] and run.attrs["first_line"] == 1
    assert read_run(f, "r", topics={"3"}).empty  # a run with none of the topics: nothing there
    with pytest.raises(InputError, match=r"r.txt:2: "):
        read_run(f, "r")
