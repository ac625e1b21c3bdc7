"""Overrating study (When LLM Judges Inflate Scores, section 2) without a model: answer parsing with
the label's offset, pointwise and pairwise metrics on hand-computed cases,
Best/Acceptable/Unacceptable groups and pair sampling on fixture qrels, tie and wrong-win logic,
Tables 1 and 2, figures, and imported judges (declared scales) through the pointwise metrics against
an independent computation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import write_lines
from sklearn.metrics import cohen_kappa_score

from judgelab import schema
from judgelab.data.imported import (
    ImportReading,
    import_judgments,
    judge_groups,
    read_judge_file,
    resolve_imported,
)
from judgelab.data.labels import check_labels
from judgelab.data.prepare import build_trec_table
from judgelab.data.tables import read_dataset, write_dataset
from judgelab.errors import InputError
from judgelab.llm.answers import parse_label
from judgelab.llm.pairwise import pair_outcomes
from judgelab.llm.readings import parse_answer
from judgelab.studies.overrating import figures as of
from judgelab.studies.overrating import jobs as oj
from judgelab.studies.overrating.pairwise import (
    pairwise_groups,
    pairwise_metrics,
    sample_pairs,
)
from judgelab.studies.overrating.pointwise import imported_pointwise, pointwise_metrics, transition_matrix
from judgelab.studies.overrating.prompts import PAIRWISE_KIND, load_prompt
from judgelab.studies.overrating.tables import TABLE_FORMATS, table1

NA = None
GRADED = ("0", "1", "2", "3")


# -- answer parsing ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, label, start",
    [
        ("2", "2", 0),
        (" [3] ", "3", 2),
        ("##final score: 2", "2", 15),
        ("Final score: 2. (M=3)", "2", 13),  # the explicit final score, not the last digit
        ("M: 3, T: 1, O: 2", "2", 15),
        ("The passage scores 1, so 1", "1", 25),  # the single distinct number: its last occurrence
        ("0\n\nThe passage is devoted to", "0", 0),
        ("2.5", NA, NA),
        ("I think 2 or 3", NA, NA),
        ("score: 12", NA, NA),
        ("no number", NA, NA),
    ],
)
def test_parse_answer_gives_the_label_and_its_offset(text, label, start):
    assert parse_answer(text, GRADED) == (label, start)
    if label is not None:
        assert text[start] == label


@pytest.mark.parametrize(
    "text",
    [
        "2",
        " [3] ",
        "##final score: 2",
        "Final score: 2. (M=3)",
        "O: 1",
        "score 3 out of 3",
        "2.5",
        "I think 2 or 3",
        "7",
        "Score: [1]",
        "0\n\nThe passage",
        "final score 3. I rate 1",
        "",
        "-1",
        "1st",
        "4",
        "Final score: -1",
        "It is 1st rate: 1",
    ],
)
def test_graded_parsing_agrees_with_the_peras_parser(text):
    label, _ = parse_answer(text, GRADED)
    assert (None if label is None else int(label)) == parse_label(text)


def test_binary_and_pairwise_label_sets():
    assert parse_answer("Final score: 2", ("0", "1")) == (None, None)  # not a binary label
    assert parse_answer("1", ("0", "1")) == ("1", 0)
    assert parse_answer("Passage 2 is more relevant", ("1", "2"), pairwise=True) == ("2", 8)
    assert parse_answer("Answer: 1", ("1", "2"), pairwise=True) == ("1", 8)
    assert parse_answer("Passage 2 beats passage 1", ("1", "2"), pairwise=True) == (None, None)


def test_prompts_declare_their_labels():
    assert load_prompt("overrating/binary").labels == ("0", "1")
    assert load_prompt("overrating/graded").labels == GRADED
    p = load_prompt("overrating/pairwise")
    assert p.labels == ("1", "2") and p.kind == PAIRWISE_KIND == "overrating_pairwise"
    assert all(k in p.template for k in ("{query}", "{passage_a}", "{passage_b}"))


def test_pairwise_templates_are_checked_against_their_kind(tmp_path):
    f = tmp_path / "pw.yaml"
    f.write_text("kind: overrating_pairwise\ntemplate: |-\n  {query} {passage_a}\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"lacks the placeholder\(s\) \{passage_b\}.*overrating.pairwise.template"
    ):
        load_prompt(str(f), kind=PAIRWISE_KIND, key="overrating.pairwise.template")
    with pytest.raises(InputError, match="is a 'judgment' template, but a 'overrating_pairwise' template"):
        load_prompt("overrating/graded", kind=PAIRWISE_KIND)
    f.write_text(
        "kind: overrating_pairwise\ntemplate: '{query} {passage_a} {passage_b} {document}'\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"unknown placeholder \{document\}"):
        load_prompt(str(f))
    with pytest.raises(InputError, match="graded scale needs labels"):
        check_labels(("0", "1"), "graded")


# -- pointwise metrics -------------------------------------------------------------------------


def graded_case() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "grade": [0, 0, 1, 2, 3, 3, 2, 1],
            "label": pd.array([1, 0, 3, 2, 2, NA, 3, 0], dtype="Int64"),
            "confidence": pd.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.99, NA, 0.4], dtype="Float64"),
        }
    )


def test_graded_pointwise_metrics_by_hand():
    m = pointwise_metrics(graded_case(), "graded")
    # 7 parsed pairs; LLM - human = 1, 0, 2, 0, -1, 1, -1
    assert (m["n_pairs"], m["n_parsed"], m["coverage"]) == (8, 7, 7 / 8)
    assert m["overrate_pct"] == pytest.approx(300 / 7)  # 42.857
    assert m["underrate_pct"] == pytest.approx(200 / 7)  # 28.571
    assert m["mean_bias"] == pytest.approx(2 / 7)
    # p_o = 2/7, p_e = (2*2 + 2*1 + 2*2 + 1*2)/49 = 12/49 -> kappa = 2/37
    assert m["kappa"] == pytest.approx(2 / 37)
    # binarised (grade >= 2): human 0 0 0 1 1 1 0, LLM 0 0 1 1 1 1 0 -> TP 3, FP 1, TN 3, FN 0
    assert m["bin_overrate_pct"] == pytest.approx(100 / 7)
    assert m["bin_underrate_pct"] == 0.0
    assert m["bin_mean_bias"] == pytest.approx(1 / 7)
    assert m["bin_kappa"] == pytest.approx(18 / 25)  # (6/7 - 24/49) / (1 - 24/49)
    assert (m["n_TP"], m["n_FP"], m["n_TN"], m["n_FN"]) == (3, 1, 3, 0)
    # the missing label's confidence (0.99) is not counted; one TP has no confidence
    assert m["conf_TP"] == pytest.approx(0.55)
    assert m["conf_FP"] == pytest.approx(0.7)
    assert m["conf_TN"] == pytest.approx(0.7)
    assert math.isnan(m["conf_FN"])
    assert m["n_confidence"] == 6 and m["mean_confidence"] == pytest.approx(0.65)


def test_binary_pointwise_metrics_by_hand():
    pairs = pd.DataFrame(
        {
            "grade": [0, 1, 2, 3, 3, 0],
            "label": pd.array([1, 1, 1, 0, 1, 0], dtype="Int64"),
            "confidence": pd.array([NA] * 6, dtype="Float64"),
        }
    )
    m = pointwise_metrics(pairs, "binary")
    # human binarised 0 0 1 1 1 0; LLM 1 1 1 0 1 0
    assert m["overrate_pct"] == pytest.approx(100 / 3)
    assert m["underrate_pct"] == pytest.approx(100 / 6)
    assert m["mean_bias"] == pytest.approx(1 / 6)
    assert m["kappa"] == pytest.approx(0.0)  # p_o = 1/2 = p_e
    assert all(m[f"bin_{k}"] == m[k] for k in ("overrate_pct", "underrate_pct", "mean_bias", "kappa"))
    assert (m["n_TP"], m["n_FP"], m["n_TN"], m["n_FN"]) == (2, 2, 1, 1)
    assert m["n_confidence"] == 0 and math.isnan(m["mean_confidence"]) and math.isnan(m["conf_TP"])


def test_no_parsed_pair_gives_undefined_metrics_not_zero():
    pairs = pd.DataFrame(
        {
            "grade": [0, 3],
            "label": pd.array([NA, NA], dtype="Int64"),
            "confidence": pd.array([NA, NA], dtype="Float64"),
        }
    )
    m = pointwise_metrics(pairs, "graded")
    assert m["coverage"] == 0.0
    assert all(math.isnan(m[k]) for k in ("overrate_pct", "mean_bias", "kappa", "bin_kappa"))


def test_transition_matrix_by_hand():
    tm = transition_matrix(graded_case(), "graded").set_index(["human", "llm"])
    assert tm.loc[(0, 0), "n"] == 1 and tm.loc[(0, 1), "share"] == 0.5
    assert tm.loc[(1, 3), "n"] == 1 and tm.loc[(1, 0), "share"] == 0.5
    assert tm.loc[(2, 2), "share"] == 0.5 and tm.loc[(2, 3), "share"] == 0.5
    assert tm.loc[(3, 2), "share"] == 1.0 and tm.loc[(3, 2), "n_missing"] == 1
    assert tm["n"].sum() == 7 and len(tm) == 16
    binary = transition_matrix(
        graded_case().assign(label=pd.array([1, 0, 0, 1, 1, NA, 1, 0], "Int64")), "binary"
    )
    assert sorted(binary["llm"].unique()) == [0, 1] and binary["n"].sum() == 7


# -- pairwise: groups, sampling ----------------------------------------------------------------


@pytest.fixture
def fixture_table(fixtures):
    fx = fixtures / "trec"
    return build_trec_table("fx", fx / "qrels.txt", fx / "topics.txt", fx / "texts.tsv")


def test_groups_on_fixture_qrels(fixture_table):
    g = pairwise_groups(fixture_table).set_index("docid")["group"].to_dict()
    # 101: d1 3, d2 2, d3 1, d4 0; 102: d5 3, d6 0, d7 0, d8 1
    assert g == {"d1": "B", "d2": "A", "d3": "A", "d4": "U", "d5": "B", "d6": "U", "d7": "U", "d8": "A"}
    trec = pairwise_groups(fixture_table, relevant_min=2).set_index("docid")["group"].to_dict()
    assert trec == {"d1": "B", "d2": "A", "d3": "U", "d4": "U", "d5": "B", "d6": "U", "d7": "U", "d8": "U"}


def test_a_query_without_relevant_passages_has_only_unacceptable():
    t = pd.DataFrame({"qid": ["q"] * 3, "docid": ["a", "b", "c"], "grade": [0, 0, 1]})
    assert set(pairwise_groups(t, relevant_min=2)["group"]) == {"U"}
    assert sample_pairs(t.assign(dataset="x"), per_setting=20, seed=0, relevant_min=2).empty


def test_all_pairs_when_fewer_than_the_cap(fixture_table):
    s = sample_pairs(fixture_table, per_setting=20, seed=3)
    got = {(r.qid, r.setting, r.hi_docid, r.lo_docid) for r in s.itertuples()}
    assert got == {
        ("101", "B-A", "d1", "d2"),
        ("101", "B-A", "d1", "d3"),
        ("101", "A-U", "d2", "d4"),
        ("101", "A-U", "d3", "d4"),
        ("101", "B-U", "d1", "d4"),
        ("102", "B-A", "d5", "d8"),
        ("102", "A-U", "d8", "d6"),
        ("102", "A-U", "d8", "d7"),
        ("102", "B-U", "d5", "d6"),
        ("102", "B-U", "d5", "d7"),
    }
    assert (s["hi_grade"] > s["lo_grade"]).all() and (s["dataset"] == "fx").all()


def check_sample(table: pd.DataFrame, s: pd.DataFrame, cap: int, relevant_min: int = 1) -> None:
    """No pair across queries or within a group, hi from the higher group, at most ``cap`` per
    setting per query, no pair twice."""
    groups = pairwise_groups(table, relevant_min).set_index(["qid", "docid"])["group"]
    for r in s.itertuples():
        assert (r.qid, r.hi_docid) in groups.index and (r.qid, r.lo_docid) in groups.index  # same query
        hi, lo = groups[(r.qid, r.hi_docid)], groups[(r.qid, r.lo_docid)]
        assert hi + "-" + lo == r.setting and hi != lo
        assert r.hi_grade > r.lo_grade
    assert s.groupby(["qid", "setting"]).size().max() <= cap
    assert not s.duplicated(["qid", "hi_docid", "lo_docid"]).any()


def test_sampling_is_capped_deterministic_and_per_query():
    # one query with 6 Best, 6 Acceptable, 6 Unacceptable: 36 candidates per setting
    rows = (
        [("q1", f"b{i}", 3) for i in range(6)]
        + [("q1", f"a{i}", 1 + i % 2) for i in range(6)]
        + [("q1", f"u{i}", 0) for i in range(6)]
        + [("q2", "x", 2), ("q2", "y", 0)]
    )
    t = pd.DataFrame(rows, columns=["qid", "docid", "grade"]).assign(dataset="syn")
    s1 = sample_pairs(t, per_setting=20, seed=7)
    check_sample(t, s1, 20)
    assert s1[s1["qid"] == "q1"].groupby("setting").size().to_dict() == {"A-U": 20, "B-A": 20, "B-U": 20}
    assert s1[s1["qid"] == "q2"][["setting", "hi_docid", "lo_docid"]].values.tolist() == [["B-U", "x", "y"]]
    pd.testing.assert_frame_equal(s1, sample_pairs(t, per_setting=20, seed=7))
    assert not s1.equals(sample_pairs(t, per_setting=20, seed=8))
    # a query's draw does not depend on the other queries
    alone = sample_pairs(t[t["qid"] == "q1"], per_setting=20, seed=7)
    pd.testing.assert_frame_equal(alone, s1[s1["qid"] == "q1"].reset_index(drop=True))
    # at least 1: the schema's minimum (the config is checked against it when it loads)
    with pytest.raises(InputError, match="overrating.pairwise.per_setting': 0 is less than the minimum of 1"):
        schema.validate_entry(0, "overrating.pairwise.per_setting", "overrating.pairwise.per_setting")


def test_sampling_on_the_real_dl19_qrels(shared_data):
    d = shared_data / "trec-dl"
    qrels = pd.read_csv(
        d / "qrels.dl19-passage.txt", sep=" ", header=None, names=["qid", "q0", "docid", "grade"], dtype=str
    )
    t = qrels.assign(grade=qrels["grade"].astype(int), dataset="dl19")[["dataset", "qid", "docid", "grade"]]
    s = sample_pairs(t, per_setting=20, seed=0)
    check_sample(t, s, 20)
    assert s["qid"].nunique() == 43 and len(s) > 43 * 50


# -- pairwise: outcomes and metrics ------------------------------------------------------------


def judged_pairs() -> pd.DataFrame:
    """Both-order judgments of 7 pairs: (pair, setting, hi_first choice, conf, lo_first choice, conf)."""
    spec = [
        ("P1", "B-A", "hi", 0.9, "hi", 0.8),  # correct
        ("P2", "B-A", "hi", 0.97, "lo", 0.99),  # tie, both > 0.95
        ("P3", "B-A", "lo", 0.6, "lo", 0.7),  # wrong win
        ("P4", "A-U", "lo", 0.96, "hi", 0.5),  # tie
        ("P5", "A-U", "hi", 0.9, NA, NA),  # missing (lo_first did not parse)
        ("P6", "B-U", "hi", 1.0, "hi", NA),  # correct, one confidence unknown
        ("P7", "B-U", "lo", NA, "hi", 0.99),
    ]  # tie, one confidence unknown
    rows = []
    for pair, setting, p1, c1, p2, c2 in spec:
        for order, pref, conf in (("hi_first", p1, c1), ("lo_first", p2, c2)):
            rows.append(
                {
                    "qid": "q",
                    "setting": setting,
                    "hi_docid": pair + "h",
                    "lo_docid": pair + "l",
                    "order": order,
                    "preferred": pref,
                    "confidence": conf,
                }
            )
    return pd.DataFrame(rows)


def test_tie_and_wrong_win_logic():
    o = pair_outcomes(judged_pairs()).set_index("hi_docid")["outcome"].to_dict()
    assert o == {
        "P1h": "correct",
        "P2h": "tie",
        "P3h": "wrong_win",
        "P4h": "tie",
        "P5h": "missing",
        "P6h": "correct",
        "P7h": "tie",
    }


def test_position_decides_the_ties_by_hand():
    """Which passage each judgment chose, by position (1 or 2): a pair whose two orders choose the
    same position is decided by position alone. In ``hi_first`` Passage 1 is the higher-group
    passage, in ``lo_first`` the lower one."""
    chosen = [  # pair, setting, position chosen in hi_first, in lo_first
        ("Q1", "B-A", 1, 2),  # hi both times: correct
        ("Q2", "B-A", 1, 1),  # Passage 1 both times: first
        ("Q3", "B-A", 2, 2),  # Passage 2 both times: second
        ("Q4", "A-U", 2, 2),  # second
        ("Q5", "A-U", 2, 1),  # lo both times: wrong win
        ("Q6", "A-U", 1, None),  # missing
        ("Q7", "B-U", 1, 1),  # first
    ]
    as_pref = {("hi_first", 1): "hi", ("hi_first", 2): "lo", ("lo_first", 1): "lo", ("lo_first", 2): "hi"}
    rows = [
        {
            "qid": "q",
            "setting": setting,
            "hi_docid": pair + "h",
            "lo_docid": pair + "l",
            "order": order,
            "preferred": NA if pos is None else as_pref[(order, pos)],
            "confidence": NA,
        }
        for pair, setting, p1, p2 in chosen
        for order, pos in (("hi_first", p1), ("lo_first", p2))
    ]
    o = pair_outcomes(pd.DataFrame(rows)).set_index("hi_docid")
    assert o["position"].to_dict() == {
        "Q1h": "",
        "Q2h": "first",
        "Q3h": "second",
        "Q4h": "second",
        "Q5h": "",
        "Q6h": "",
        "Q7h": "first",
    }
    assert (o.loc[o["position"] != "", "outcome"] == "tie").all() and (o["outcome"] == "tie").sum() == 4
    m = pairwise_metrics(o.reset_index()).set_index("setting")
    a = m.loc["overall"]  # 6 judged: 1 correct, 1 wrong win, 2 first, 2 second
    assert (a["n_first_both"], a["n_second_both"]) == (2, 2)
    assert a["first_both_pct"] == pytest.approx(100 * 2 / 6) and a["second_both_pct"] == pytest.approx(
        100 * 2 / 6
    )
    assert a["first_both_pct"] + a["second_both_pct"] == pytest.approx(a["tie_rate_pct"])
    assert a["accuracy_pct"] == pytest.approx(100 / 6)
    # A-U: 2 judged (Q6 missing): one second, one wrong win
    au = m.loc["A-U"]
    assert (au["first_both_pct"], au["second_both_pct"]) == (0.0, 50.0)
    bu = m.loc["B-U"]
    assert (bu["first_both_pct"], bu["second_both_pct"], bu["accuracy_pct"]) == (100.0, 0.0, 0.0)


def test_pairwise_metrics_by_hand():
    m = pairwise_metrics(pair_outcomes(judged_pairs())).set_index("setting")
    assert list(m.index) == ["B-A", "A-U", "B-U", "overall"]
    a = m.loc["overall"]
    # 7 pairs, 1 missing -> 6 judged: 2 correct, 3 ties, 1 wrong win
    assert (a["n_pairs"], a["n_judged"], a["n_correct"], a["n_tie"], a["n_wrong_win"]) == (7, 6, 2, 3, 1)
    assert a["accuracy_pct"] == pytest.approx(100 * 2 / 6)
    assert a["accuracy_no_ties_pct"] == pytest.approx(100 * 2 / 3)
    assert a["tie_rate_pct"] == pytest.approx(50.0)
    assert a["wrong_win_pct"] == pytest.approx(100 / 6)
    assert a["conf_correct"] == pytest.approx(0.9) and a["n_conf_correct"] == 3  # 0.9, 0.8, 1.0
    assert a["conf_incorrect"] == pytest.approx(0.65) and a["n_conf_incorrect"] == 2
    assert a["n_ties_conf_known"] == 2 and a["ties_confident_pct"] == pytest.approx(50.0)  # P2 of P2, P4
    ba = m.loc["B-A"]
    assert ba["accuracy_pct"] == pytest.approx(100 / 3) and ba["accuracy_no_ties_pct"] == pytest.approx(50.0)
    assert ba["conf_correct"] == pytest.approx(0.85) and ba["ties_confident_pct"] == pytest.approx(100.0)
    au = m.loc["A-U"]
    assert (au["n_pairs"], au["n_judged"], au["coverage"]) == (2, 1, 0.5)
    assert au["tie_rate_pct"] == 100.0 and math.isnan(au["accuracy_no_ties_pct"])
    assert au["ties_confident_pct"] == 0.0 and math.isnan(au["conf_correct"])
    bu = m.loc["B-U"]
    assert bu["accuracy_pct"] == 50.0 and bu["accuracy_no_ties_pct"] == 100.0
    assert bu["conf_correct"] == pytest.approx(1.0) and math.isnan(bu["ties_confident_pct"])


# -- tables and figures ------------------------------------------------------------------------


def pointwise_rows() -> pd.DataFrame:
    g = {"dataset": "dl19", "model": "m", "scale": "graded", **pointwise_metrics(graded_case(), "graded")}
    b = {
        "dataset": "dl19",
        "model": "m",
        "scale": "binary",
        **pointwise_metrics(
            graded_case().assign(label=pd.array([1, 0, 0, 1, 1, NA, 1, 0], "Int64")), "binary"
        ),
    }
    only_binary = {**b, "model": "imp"}
    return pd.DataFrame([g, b, only_binary])


def test_table1_takes_each_column_from_its_run():
    t = table1(pointwise_rows(), "full")
    m, imp = t.iloc[0], t.iloc[1]
    assert (m["model"], imp["model"]) == ("m", "imp")
    assert m[("Overrated (%)", "Grad.")] == pytest.approx(300 / 7)
    assert m[("Overrated (%)", "Grad.→Bin.")] == pytest.approx(100 / 7)
    assert m[("Cohen's κ", "Grad.→Bin.")] == pytest.approx(0.72)
    assert m[("Avg Confidence", "TP")] == pytest.approx(0.55)  # from the graded run
    assert m["confidence_scale"] == "graded"
    # binary run: human binarised 0 0 0 1 1 1 0 vs LLM 1 0 0 1 1 1 0 -> 1 of 7 overrated
    assert m[("Overrated (%)", "Bin.")] == pytest.approx(100 / 7)
    assert math.isnan(imp[("Overrated (%)", "Grad.")])
    assert imp["confidence_scale"] == "binary"


def table_outs(folder, name: str) -> dict[str, str]:
    out = {fmt: str(folder / f"{name}.{fmt}") for fmt in TABLE_FORMATS}
    if name != "table2_by_setting":
        out["metrics"] = str(folder / f"{name}_metrics.tsv")
    return out


def table2_outs(folder) -> dict[str, str]:
    """The table2 rule's outputs: Table 2's files and metrics, the per-setting table's by_setting_*."""
    by = {f"by_setting_{k}": v for k, v in table_outs(folder, "table2_by_setting").items()}
    return table_outs(folder, "table2") | by


def write_tables(pointwise: list[str], pairwise: list[str], folder) -> None:
    oj.table1_job(pointwise, table_outs(folder, "table1"))
    oj.table2_job(pairwise, table2_outs(folder))


def test_rendered_tables(tmp_path):
    point = tmp_path / "p.tsv"
    pointwise_rows().to_csv(point, sep="\t", index=False)
    pair = tmp_path / "q.tsv"
    m = pairwise_metrics(pair_outcomes(judged_pairs()))
    pd.concat([pd.DataFrame([{"dataset": "dl19", "model": "m"}] * len(m)), m], axis=1).to_csv(
        pair, sep="\t", index=False
    )
    write_tables([str(point)], [str(pair)], tmp_path / "tables")
    md = (tmp_path / "tables" / "table1.md").read_text()
    lines = md.splitlines()
    assert lines[0].startswith("| Dataset | Model | Overrated (%) Bin. |") and len(lines) == 4
    # the paper's columns first (Overrated, Underrated, Mean Bias, kappa: Bin. Grad.; Avg Confidence
    # TP FP TN FN), then Grad.->Bin., Krippendorff's alpha (Bin., Grad., Grad.->Bin.: the binary
    # run and the binarised graded run agree here), the renormalised confidences (none here) and
    # the coverage
    assert "| dl19 | m | 14.29 | 42.86 | 0.00 | 28.57 | 0.143 | 0.286 | 0.720 | 0.054 | 0.550 |" in md
    assert (
        "| 14.29 | 0.00 | 0.143 | 0.720 | 0.735 | 0.574 | 0.735 | n/a | n/a | n/a | n/a | 0.875 | 0.875 |"
        in md
    )
    assert "|  | imp | 14.29 | n/a |" in md  # the dataset shown once; no graded run: n/a
    tex = (tmp_path / "tables" / "table1.tex").read_text()
    assert r"\multicolumn{2}{c}{Overrated (\%)}" in tex and r"Cohen's $\kappa$" in tex
    assert tex.count(r"\\") == 4 and "n/a" in tex  # 2 header rows, 2 data rows
    t2 = (tmp_path / "tables" / "table2.md").read_text()
    # decided by position: P2 (Passage 1 both times) of 6 judged, P4 and P7 (Passage 2)
    assert (
        "| dl19 | m | 33.33 | 66.67 | 50.00 | 16.67 | 0.900 | 0.650 | 16.67 | 33.33 | 50.00 | n/a | n/a | n/a "
        "| 6 | 0.857 |" in t2
    )
    assert "Decided by position (%) 1st wins both | Decided by position (%) 2nd wins both" in t2
    by = pd.read_csv(tmp_path / "tables" / "table2_by_setting.tsv", sep="\t")
    assert list(by["setting"]) == ["B-A", "A-U", "B-U", "overall"]
    assert "n/a" in (tmp_path / "tables" / "table2_by_setting.md").read_text()
    assert oj.table1_job([], table_outs(tmp_path / "empty", "table1")).empty
    assert oj.table2_job([], table2_outs(tmp_path / "empty")).empty
    assert len(list((tmp_path / "empty").iterdir())) == 14  # 3 tables x 4 formats + 2 metrics files
    assert "Overrated (%) Bin." in (tmp_path / "empty" / "table1.md").read_text()


def test_figures_draw_undefined_values_as_na(tmp_path, monkeypatch):
    texts = []

    def capture(fig, out_png, out_pdf=None):
        texts.extend(t.get_text() for ax in fig.axes for t in ax.texts)
        fig.savefig(out_png)
        fig.savefig(out_pdf)

    monkeypatch.setattr(of, "save", capture)
    case = graded_case()
    case.loc[case["grade"] == 3, "label"] = pd.NA  # grade 3: no parsed pair -> an n/a row
    of.transition_heatmap(transition_matrix(case, "graded"), "t", tmp_path / "a.png", tmp_path / "a.pdf")
    assert texts.count("n/a") == 4
    texts.clear()
    of.pairwise_rates(
        pairwise_metrics(pair_outcomes(judged_pairs())), "t", tmp_path / "b.png", tmp_path / "b.pdf"
    )
    assert texts.count("n/a") == 1  # A-U accuracy without ties
    texts.clear()
    of.confidence_by_outcome(
        pointwise_rows().iloc[:2], "t", tmp_path / "c.png", tmp_path / "c.pdf", confidence="full"
    )
    assert "n/a" in texts  # FN of the graded run
    for f in ("a", "b", "c"):
        assert (tmp_path / f"{f}.png").stat().st_size > 1000 and (tmp_path / f"{f}.pdf").stat().st_size > 1000


# -- imported judges ---------------------------------------------------------------------------


@pytest.fixture
def table_file(fixture_table, tmp_path):
    path = tmp_path / "fx.tsv"
    write_dataset(fixture_table, path)
    return read_dataset(path), path


def test_imported_graded_judge_through_the_pointwise_metrics_equals_sklearn(table_file, tmp_path):
    t, path = table_file
    rng = np.random.default_rng(1)
    lines, labels, confs = [], {}, {}
    for k, r in enumerate(t.itertuples()):
        if k == 5:
            continue  # unlabelled: missing
        lab = int(rng.integers(0, 4))
        conf = int(rng.integers(0, 101))
        labels[(r.qid, r.docid)], confs[(r.qid, r.docid)] = lab, conf
        lines.append(f"{r.qid} Q0 {r.docid} {lab} {conf}")
    judge = write_lines(tmp_path, lines)
    oj.imported_pointwise_job(
        str(path), str(judge), str(tmp_path / "j.tsv"), ImportReading("graded", "percent")
    )
    m = oj.pointwise_metrics_job(
        str(path),
        str(tmp_path / "j.tsv"),
        str(tmp_path / "m.tsv"),
        str(tmp_path / "tm.tsv"),
        wildcards={"dataset": "fx", "model": "imp", "scale": "graded"},
    ).iloc[0]
    keys = [(r.qid, r.docid) for r in t.itertuples() if (r.qid, r.docid) in labels]
    y = np.array([int(t.set_index(["qid", "docid"]).loc[k, "grade"]) for k in keys])
    yhat = np.array([labels[k] for k in keys])
    c = np.array([confs[k] / 100 for k in keys])
    assert m["n_parsed"] == 7 and m["coverage"] == pytest.approx(7 / 8)
    assert m["overrate_pct"] == pytest.approx(100 * np.mean(yhat > y))
    assert m["underrate_pct"] == pytest.approx(100 * np.mean(yhat < y))
    assert m["mean_bias"] == pytest.approx(np.mean(yhat - y))
    assert m["kappa"] == pytest.approx(cohen_kappa_score(y, yhat, labels=[0, 1, 2, 3]))
    yb, yhatb = (y >= 2).astype(int), (yhat >= 2).astype(int)
    assert m["bin_kappa"] == pytest.approx(cohen_kappa_score(yb, yhatb, labels=[0, 1]))
    assert m["bin_overrate_pct"] == pytest.approx(100 * np.mean(yhatb > yb))
    for name, sel in (
        ("TP", (yhatb == 1) & (yb == 1)),
        ("FP", (yhatb == 1) & (yb == 0)),
        ("TN", (yhatb == 0) & (yb == 0)),
        ("FN", (yhatb == 0) & (yb == 1)),
    ):
        assert m[f"n_{name}"] == sel.sum()
        if sel.any():
            assert m[f"conf_{name}"] == pytest.approx(c[sel].mean())
    tm = pd.read_csv(tmp_path / "tm.tsv", sep="\t")
    assert tm["n"].sum() == 7 and set(tm["model"]) == {"imp"}


def test_imported_binary_judge_with_probabilities(table_file, tmp_path):
    t, _ = table_file
    # human grades 3 2 1 0 | 3 0 0 1 -> binarised 1 1 0 0 | 1 0 0 0
    labs = [1, 0, 1, 0, 1, 1, 0, 0]
    confs = [0.9, 0.6, 0.8, 0.7, 1.0, 0.55, 0.65, 0.75]
    judge = write_lines(
        tmp_path, [f"{r.qid} Q0 {r.docid} {lab} {c}" for r, lab, c in zip(t.itertuples(), labs, confs)]
    )
    j = imported_pointwise(t, judge, "binary", "probability")
    assert j["confidence"].tolist() == pytest.approx(confs)
    m = pointwise_metrics(t[["grade"]].assign(label=j["label"], confidence=j["confidence"]), "binary")
    # LLM 1 0 1 0 1 1 0 0 vs human 1 1 0 0 1 0 0 0: TP 2 (0.9, 1.0), FP 2 (0.8, 0.55), FN 1 (0.6), TN 3
    assert m["overrate_pct"] == pytest.approx(25.0) and m["underrate_pct"] == pytest.approx(12.5)
    assert m["mean_bias"] == pytest.approx(1 / 8)
    assert m["kappa"] == pytest.approx(cohen_kappa_score([1, 1, 0, 0, 1, 0, 0, 0], labs))
    assert m["conf_TP"] == pytest.approx(0.95) and m["conf_FP"] == pytest.approx(0.675)
    assert m["conf_FN"] == pytest.approx(0.6) and m["conf_TN"] == pytest.approx(0.7)


def test_imported_scales_are_declared_never_guessed(table_file, tmp_path):
    t, _ = table_file
    r = t.iloc[0]
    zero_one = write_lines(
        tmp_path, [f"{x.qid} Q0 {x.docid} {k % 2}" for k, x in enumerate(t.itertuples())], "01"
    )
    with pytest.raises(InputError, match="every label is 0 or 1: declare the judge's scale"):
        read_judge_file(zero_one, t)
    assert read_judge_file(zero_one, t, scale="graded")["label"].tolist() == [0, 1] * 4
    assert read_judge_file(zero_one, t, scale="binary")["label"].tolist() == [0, 1] * 4
    probs = write_lines(
        tmp_path, [f"{x.qid} Q0 {x.docid} {x.grade} 0.{k + 1}" for k, x in enumerate(t.itertuples())], "probs"
    )
    with pytest.raises(InputError, match="declare `confidence_scale: probability`"):
        read_judge_file(probs, t)
    assert read_judge_file(probs, t, confidence_scale="probability")["confidence"].iloc[0] == pytest.approx(
        0.1
    )
    _, c = import_judgments(t, probs, confidence_scale="probability")
    assert c["confidence"].iloc[0] == pytest.approx(10.0)  # PERAS tables hold percent
    bad = write_lines(tmp_path, [f"{r.qid} Q0 {r.docid} 2"], "bad_binary")
    with pytest.raises(InputError, match="label 2 is outside 0-1") as err:
        read_judge_file(bad, t, scale="binary")
    assert err.value.line == 1
    bad = write_lines(tmp_path, ["", f"{r.qid} Q0 {r.docid} 2 40"], "bad_prob")
    with pytest.raises(InputError, match="confidence 40 is outside 0-1") as err:
        read_judge_file(bad, t, confidence_scale="probability")
    assert err.value.line == 2
    with pytest.raises(InputError, match="binary judge"):
        import_judgments(t, zero_one, scale="binary")


def test_imported_judge_config_keys():
    cfg = {
        "datasets": {"dl19": {}},
        "models": {"m": {}},
        "imported_judges": {
            "bin": {
                "path": "b.txt",
                "datasets": ["dl19"],
                "scale": "binary",
                "confidence_scale": "probability",
            },
            "gr": {"path": "g.txt", "datasets": ["dl19"]},
        },
    }
    judges = resolve_imported(cfg)
    assert (judges["bin"].scale, judges["bin"].confidence_scale) == ("binary", "probability")
    assert (judges["gr"].scale, judges["gr"].confidence_scale) == (None, None)
    groups = judge_groups(["dl19"], ["m"], ["t"], ["default"], judges)
    assert ("dl19", "gr", "imported") in groups and not any(k[1] == "bin" for k in groups)
    for key, value in (("scale", "ternary"), ("confidence_scale", "odds")):
        bad = {**cfg, "imported_judges": {"x": {"path": "x", "datasets": ["dl19"], key: value}}}
        with pytest.raises(InputError, match=f"imported_judges.x.{key}"):
            resolve_imported(bad)


def test_html_tables_for_the_report(tmp_path):
    point = tmp_path / "p.tsv"
    pointwise_rows().to_csv(point, sep="\t", index=False)
    write_tables([str(point)], [], tmp_path / "t")
    html = (tmp_path / "t" / "table1.html").read_text()
    assert "<th>Overrated (%) Grad.→Bin.</th>" in html and "<td>42.86</td>" in html
    empty = (tmp_path / "t" / "table2.html").read_text()  # no pairwise run: header, no rows
    assert "<th>Pairwise Metrics (%) Tie Rate</th>" in empty and "<td>" not in empty
