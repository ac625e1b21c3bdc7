"""Published judges that give scores, not labels (EXAM's self-ratings, AutoNuggetizer's nugget
scores: `scores <low>-<high>` in the catalog): their files read as real numbers within the
declared range (judgelab.data.imported.judge_lines, scale `scores`), where they go (the ranking
study only: Project.published_groups, study_imports), and how the ranking study takes them - gains
round(1000 x score), no kappa, alpha only after `ranking.score_alpha`'s declared linear map, the
judge-built run re-ordered by the score - each checked against a hand computation or the library
(krippendorff) called directly."""

from __future__ import annotations

import logging
import math

import krippendorff
import pandas as pd
import pytest
from conftest import write_lines
from test_published_use import RUNS, project

from judgelab.data.imported import SourcePairs, import_judgments, judge_lines, read_judge
from judgelab.errors import InputError
from judgelab.studies.ranking.circularity import judge_order
from judgelab.studies.ranking.pool import labels_on_pool, score_agreement
from judgelab.studies.ranking.scores import score_qrels
from judgelab.studies.ranking.tables import leaderboard, render_leaderboard

SOURCE = SourcePairs(frozenset({("q1", "a"), ("q1", "b"), ("q2", "c"), ("q2", "d")}), frozenset({"q1", "q2"}))
RANGE = (0.0, 1.66667)  # AutoNuggetizer's weighted scores


# -- reading ------------------------------------------------------------------------------------


def test_scores_are_read_as_real_numbers_within_the_declared_range(tmp_path):
    lines = [
        "q1 0 a 0.2",
        "q1 0 b 1.6666666666666667",  # the weighted score's top, just below the declared 1.66667
        "q2 0 c 0",
        "q1 0 a 0.2",  # an exact repeat: kept once
        "q9 0 z 0.5",  # a pair of another dataset (AutoNuggetizer's DL21 file holds DL19's)
        "q2 0 d 1.7",  # above the range
        "q2 0 d -0.1",  # below it
    ]
    f = write_lines(tmp_path, lines)
    every = judge_lines(f, SOURCE, scale="scores", score_range=RANGE, drop=True)
    assert list(every.columns) == ["qid", "docid", "score", "confidence", "line"]
    assert str(every["score"].dtype) == "Float64"
    assert every[["qid", "docid"]].values.tolist() == [["q1", "a"], ["q1", "b"], ["q2", "c"]]
    assert every["score"].tolist() == [0.2, 1.6666666666666667, 0.0]
    assert every["line"].tolist() == [1, 2, 3]
    assert every.attrs == {"unknown": 1, "out_of_scale": 2}
    pairs = pd.DataFrame({"dataset": "d", "qid": ["q1", "q2", "q2"], "docid": ["a", "c", "d"]})
    read = read_judge(f, pairs, source=SOURCE, scale="scores", score_range=RANGE, drop=True)
    c = read.counts
    assert (c.labelled, c.in_selection, c.outside_selection, c.unlabelled) == (3, 2, 1, 1)
    assert (c.unknown, c.out_of_scale) == (1, 2)
    assert read.labels["score"].tolist() == [0.2, 0.0]
    # not a published file (no drop): the first value outside the range is an error at its line
    with pytest.raises(InputError) as err:
        judge_lines(f, SOURCE, scale="scores", score_range=RANGE)
    assert f"{f}:5:" in str(err.value) and "unknown query id 'q9'" in str(err.value)
    with pytest.raises(InputError) as err:
        judge_lines(write_lines(tmp_path, lines[5:6], "above.txt"), SOURCE, scale="scores", score_range=RANGE)
    assert "above.txt:1:" in str(err.value) and "score 1.7 is outside 0-1.66667" in str(err.value)


@pytest.mark.parametrize(
    ("lines", "line", "says"),
    [
        (["q1 0 a 0.5", "q1 0 b high"], 2, "score 'high' is not a number"),
        (["q1 0 a nan"], 1, "score 'nan' is not a number"),
        (["q1 0 a 0.5", "q2 0 c 1", "q1 0 a 0.25"], 3, "scored twice differently (score 0.5 at line 1"),
        (["q1 0 a"], 1, "expected 'qid Q0 docid score [confidence]', got 3 fields"),
    ],
)
def test_a_bad_score_line_is_an_error_naming_the_file_and_line(tmp_path, lines, line, says):
    f = write_lines(tmp_path, lines)
    for drop in (False, True):  # dropped are only values outside the range and unknown pairs
        with pytest.raises(InputError) as err:
            judge_lines(f, SOURCE, scale="scores", score_range=RANGE, drop=drop)
        assert f"{f}:{line}: " in str(err.value) and says in str(err.value), str(err.value)


def test_a_score_file_with_nothing_kept_is_an_error_naming_it(tmp_path):
    f = write_lines(tmp_path, ["q7 0 x 0.5", "q1 0 a 9"])
    with pytest.raises(InputError) as err:
        judge_lines(f, SOURCE, scale="scores", score_range=RANGE, drop=True)
    assert str(f) in str(err.value) and "no score of this file is kept" in str(err.value)
    assert "1 lines of pairs unknown" in str(err.value) and "1 scores outside the range" in str(err.value)


def test_scores_are_no_grades_for_peras(tmp_path):
    f = write_lines(tmp_path, ["q1 0 a 0.5"])
    pairs = pd.DataFrame({"dataset": "d", "qid": ["q1"], "docid": ["a"]})
    read = read_judge(f, pairs, source=SOURCE, scale="scores", score_range=RANGE)
    with pytest.raises(InputError, match="ranking study only"):
        import_judgments(pairs, read)


# -- where a score judge goes -------------------------------------------------------------------


def test_a_published_score_judge_is_imported_with_its_range():
    p = project(ranking={"enabled": True, "runs": RUNS, "imported_judges": ["exam-graded-max-gpt-4"]})
    judge = p.imported["exam-graded-max-gpt-4"]
    assert (judge.scale, judge.score_range, judge.values) == ("scores", (0.0, 5.0), "scores 0-5")
    assert judge.published and not judge.graded
    reading = p.import_reading("exam-graded-max-gpt-4", "dl21")
    assert (reading.scale, reading.score_range, reading.drop) == ("scores", (0.0, 5.0), True)
    ranking = p.plan("ranking")
    assert ranking.score_judges == {"exam-graded-max-gpt-4": (0.0, 5.0)}
    assert ranking.qrels_kind("exam-graded-max-gpt-4") == ("scores", "exam-graded-max-gpt-4")
    assert ranking.scoring("dl21").qrels == (
        ("human", "human", ""),
        ("exam-graded-max-gpt-4", "scores", "exam-graded-max-gpt-4"),
    )
    compared = ranking.compared("dl21")
    assert compared.scores == (("exam-graded-max-gpt-4", 0.0, 5.0),) and compared.score_alpha == ""
    assert ranking.circularity("dl21").scored == ("exam-graded-max-gpt-4",)


def test_a_group_gives_its_score_judges_only_to_the_ranking_study(caplog):
    with caplog.at_level(logging.INFO, logger="judgelab"):
        p = project(
            published_judges={"use": ["narabzad-2024"]},
            overrating={"enabled": False, "imported_judges": ["narabzad-2024"]},
        )
        imported = p.imported
    # `use` adds judges for PERAS (grades): the group's label judges, its score judges left out
    assert "umbrela-zeroshot-gpt-4" in imported and not any(j.gives_scores for j in imported.values())
    use, overrating = p.notices  # what the Snakefile prints before any job (`judgelab: ...`)
    assert use.startswith(
        "published group 'narabzad-2024' in published_judges.use[0]: 19 judges that give scores left out"
    )
    assert use.endswith("exam-binary-mean-gpt-4, exam-graded-max-gpt-4, exam-graded-mean-gpt-4 and 16 more")
    assert "published group 'narabzad-2024' in overrating.imported_judges[0]" in overrating
    assert use in caplog.text  # and logged
    # named by the ranking study, a score judge is imported; PERAS leaves it out, saying so
    both = ["umbrela-zeroshot-gpt-4", "exam-graded-max-gpt-4"]
    p = project(peras={"enabled": True}, ranking={"enabled": True, "runs": RUNS, "imported_judges": both})
    groups = p.plan("peras").groups
    assert p.imported["exam-graded-max-gpt-4"].gives_scores
    assert {m for _, m, _ in groups} == {"umbrela-zeroshot-gpt-4"}
    assert p.notices == [
        "PERAS compares grades: 1 imported judges that give scores left out (the ranking study "
        "takes them as gains): exam-graded-max-gpt-4"
    ]


@pytest.mark.parametrize(
    ("sections", "key", "says"),
    [
        (
            {"published_judges": {"use": ["exam-graded-max-gpt-4"]}},
            "published_judges.use[0]",
            "gives scores (scores 0-5), not labels: `published_judges.use`",
        ),
        (
            {"overrating": {"enabled": True, "imported_judges": ["autonuggetizer-weighted-gpt-4o"]}},
            "overrating.imported_judges[0]",
            "gives scores (scores 0-1.66667), not labels: the overrating study takes labels",
        ),
        (
            {"overrating": {"enabled": True, "imported_judges": ["exam-graded-max"]}},
            "overrating.imported_judges[0]",
            "every judge of the group 'exam-graded-max' gives scores",
        ),
        (
            {
                "ranking": {
                    "enabled": True,
                    "runs": RUNS,
                    "imported_judges": ["umbrela-zeroshot-gpt-4", "exam-graded-max-gpt-4"],
                    "measures": ["nDCG@10", "P(rel=2)@10"],
                }
            },
            "ranking.imported_judges[1]",
            "the measure P(rel=2)@10 in ranking.measures counts relevance against a threshold",
        ),
        (
            {
                "ranking": {
                    "enabled": True,
                    "runs": RUNS,
                    "imported_judges": ["narabzad-2024"],
                    "measures": ["nDCG@10", "AP"],
                }
            },
            "ranking.imported_judges[0]",
            "the measure AP in ranking.measures",
        ),
        (
            {
                "ranking": {
                    "enabled": True,
                    "runs": RUNS,
                    "imported_judges": ["umbrela-zeroshot-gpt-4", "exam-graded-max-gpt-4"],
                    "committees": {"both": {"judges": ["umbrela-zeroshot-gpt-4", "exam-graded-max-gpt-4"]}},
                }
            },
            "ranking.committees.both.judges[1]",
            "gives scores (scores 0-5), not labels: a committee combines its members' labels",
        ),
    ],
)
def test_a_score_judge_where_labels_are_needed_is_an_error_naming_the_key(sections, key, says):
    with pytest.raises(InputError) as err:
        p = project(**sections)
        _ = p.imported
        for study in ("overrating", "ranking"):
            if p.enabled(study):
                p.plan(study).check()
    assert f"config key '{key}'" in str(err.value) and says in str(err.value), str(err.value)


def test_a_score_range_below_zero_gives_no_gains(tmp_path):
    f = write_lines(tmp_path, ["2082 0 msmarco_passage_55_419567963 -0.5"])
    entry = {
        "source": "narabzad-2024",
        "method": "mine",
        "values": "scores -1-1",
        "files": {"dl21": {"url": f.as_uri(), "sha256": "0" * 64, "bytes": 40}},
    }
    with pytest.raises(InputError) as err:
        project(
            published_judges={"entries": {"signed": entry}},
            ranking={"enabled": True, "runs": RUNS, "imported_judges": ["signed"]},
        )
    assert "config key 'ranking.imported_judges[0]'" in str(err.value)
    assert "'signed' gives scores -1-1: a score below 0 is no gain" in str(err.value)


# -- the ranking study's science ----------------------------------------------------------------


def test_scores_enter_as_gains_round_1000_x_score():
    table = pd.DataFrame(
        {
            "qid": ["1", "1", "2", "2"],
            "docid": ["a", "b", "c", "d"],
            "label": pd.array([None] * 4, dtype="Int64"),
            "score": [0.2, 1.6666666666666667, 0.0004, None],
        }
    )
    q = score_qrels(table)
    assert q.values.tolist() == [["1", "a", 200], ["1", "b", 1667], ["2", "c", 0]]  # no score: no row


def test_scores_serve_ndcg_and_compat_which_reads_only_their_order():
    import ir_measures

    from judgelab.studies.ranking.scores import gain_measure

    takes = {m: gain_measure(ir_measures.parse_measure(m)) for m in ("nDCG@10", "Compat", "Compat(p=0.8)")}
    refuses = {
        m: gain_measure(ir_measures.parse_measure(m)) for m in ("nDCG(rel=2)@10", "P(rel=2)@10", "AP", "RBP")
    }
    assert all(takes.values()) and not any(refuses.values())
    # Compat's ideal ranking sorts the pairs above 0 by the gain: the scaled gains give the
    # value the scores' own order gives (here as ranks 1-3) - hand case: the run's order is
    # the ideal's but for one swap
    run = [ir_measures.ScoredDoc("1", d, s) for d, s in (("a", 3.0), ("c", 2.0), ("b", 1.0), ("z", 0.5))]
    scores = {"a": 0.91, "b": 0.52, "c": 0.2, "z": 0.0}
    gains = score_qrels(
        pd.DataFrame({"qid": "1", "docid": list(scores), "label": pd.NA, "score": list(scores.values())})
    )
    ranks = [ir_measures.Qrel("1", "a", 3), ir_measures.Qrel("1", "b", 2), ir_measures.Qrel("1", "c", 1)]
    compat = ir_measures.Compat
    scaled = compat.calc_aggregate(
        [ir_measures.Qrel(r.qid, r.docid, int(r.relevance)) for r in gains.itertuples()], run
    )
    assert scaled == pytest.approx(compat.calc_aggregate(ranks, run)) and 0 < scaled < 1


def test_score_agreement_has_no_kappa_and_alpha_only_after_the_declared_map():
    pool_ = pd.DataFrame(
        {
            "qid": list("aaaaaab"),
            "docid": list("1234567"),
            "human": pd.array([0, 1, 2, 3, 3, None, 1], dtype="Int64"),
        }
    )
    labels = pd.DataFrame({"qid": list("aaaaab"), "docid": list("123457"), "score": [0, 1, 3, 4.5, 5, 2]})
    scores = labels_on_pool(pool_, labels, "score")
    assert str(scores.dtype) == "Float64" and scores.isna().tolist() == [False] * 5 + [True, False]
    got = score_agreement(pool_, scores, (0.0, 5.0), "linear")
    assert (got["n_pool"], got["n_pairs"], got["n_labelled"]) == (7, 6, 6)
    assert got["coverage"] == 1.0
    assert all(math.isnan(got[k]) for k in ("kappa", "qwk", "macro_f1"))
    h = [0, 1, 2, 3, 3, 1]
    mapped = [0.0, 0.6, 1.8, 2.7, 3.0, 1.2]  # 3 x score / 5
    want = krippendorff.alpha(reliability_data=[h, mapped], level_of_measurement="interval")
    assert got["alpha"] == pytest.approx(want, abs=1e-12)
    assert got["alpha_map"] == "scores 0-5 -> grades 0-3, linear"
    none = score_agreement(pool_, scores, (0.0, 5.0), None)
    assert math.isnan(none["alpha"]) and none["alpha_map"] == "" and none["n_labelled"] == 6


def test_the_judge_built_run_is_reordered_by_the_score():
    base = pd.DataFrame(
        {
            "qid": ["1"] * 4,
            "docid": ["a", "b", "c", "d"],
            "rank": [1, 2, 3, 4],
            "score": [4.0, 3.0, 2.0, 1.0],
            "tag": "base",
        }
    )
    labels = pd.DataFrame({"qid": ["1"] * 3, "docid": ["a", "b", "c"], "score": [0.25, 0.75, 0.5]})
    order = judge_order(base, labels, 3, by="score")
    # the top 3 by score, highest first; d, below the depth, stays last
    assert order["docid"].tolist() == ["b", "c", "a", "d"]
    assert order["label"].tolist()[:3] == [0.75, 0.5, 0.25]


def test_the_leaderboard_names_the_map_beside_alpha():
    corr = pd.DataFrame(
        [
            {"dataset": "dl21", "judge": "u", "reference": "human", "measure": "nDCG@10", "kappa": 0.3}
            | {"alpha": 0.4, "alpha_map": None, "kendall_tau": 0.9, "spearman": 0.95},
            {"dataset": "dl21", "judge": "e", "reference": "human", "measure": "nDCG@10", "kappa": None}
            | {"alpha": 0.5, "alpha_map": "scores 0-5 -> grades 0-3, linear"}
            | {"kendall_tau": 0.8, "spearman": 0.9},
        ]
    )
    md = render_leaderboard(leaderboard(corr), "md")
    assert "| Cohen's κ | Krippendorff's α | α map | Kendall's τ |" in md
    assert "| u | human | 0.300 | 0.400 |  | 0.900 |" in md
    assert "| e | human | n/a | 0.500 | scores 0-5 -> grades 0-3, linear | 0.800 |" in md


def test_label_judges_keep_the_params_they_had_before_scores():
    """The fields added for scores are left out of a param where no judge gives scores, so the
    import, correlations and circularity jobs of an existing run do not rerun; with scores they
    are carried and read back."""
    from judgelab.data.imported import ImportReading
    from judgelab.studies.ranking.settings import Circularity, Comparisons

    labels = ImportReading("graded", None, "utf-8", True)
    assert (
        labels.param() == '{"confidence_scale": null, "drop": true, "encoding": "utf-8", "scale": "graded"}'
    )
    scores = ImportReading("scores", None, "utf-8", True, (0.0, 5.0))
    assert '"score_range": [0.0, 5.0]' in scores.param()
    assert ImportReading.from_param(scores.param()) == scores
    plain = Comparisons("dl21", ("u",), (("u", "human"),), ("nDCG@10",))
    assert "score" not in plain.param() and Comparisons.from_param(plain.param()) == plain
    scored = Comparisons(
        "dl21", ("e",), (("e", "human"),), ("nDCG@10",), scores=(("e", 0, 5),), score_alpha="linear"
    )
    assert Comparisons.from_param(scored.param()).score_ranges == {"e": (0.0, 5.0)}
    circ = Circularity("dl21", "", 10, (("u", "human"),), ("nDCG@10",))
    assert "scored" not in circ.param() and Circularity.from_param(circ.param()) == circ
