"""Token confidence as When LLM Judges Inflate Scores defines it (issue 18): "softmax probabilities
... on the generation of the label" - the label token's probability in the full distribution of the
step that generated it - is the default of Tables 1 and 2; the probability renormalised over the
label tokens stays beside it (``confidence_renorm``, the other columns) and is an option
(``overrating.confidence``).

Hand case: four graded answers, one per binarised outcome, each the bare label generated at the
first step, with a label-token mass below 1 (the rest of the vocabulary holds the remainder):

====  =====  =====  ==========  ============================  =====  =======
pair  human  judge  outcome     step: p(label), label mass     full   renorm.
====  =====  =====  ==========  ============================  =====  =======
A     3      3      TP          0.60 of 0.80                   0.60   0.75
B     0      2      FP          0.45 of 0.90                   0.45   0.50
C     1      0      TN          0.30 of 0.40                   0.30   0.75
D     2      1      FN          0.20 of 0.25                   0.20   0.80
====  =====  =====  ==========  ============================  =====  =======

Graded: judge - human = 0, +2, -1, -1: overrated 25%, underrated 50%, mean bias 0, kappa 0
(each grade once on both sides: p_o = p_e = 1/4). The binary run labels A..D 1, 0, 1, 1 against
the binarised human 1, 0, 0, 1: overrated 25%, underrated 0, bias 0.25, kappa (3/4 - 1/2) / (1/2)
= 0.5.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from judgelab.llm.backends.base import Completion
from judgelab.llm.pairwise import pair_outcomes
from judgelab.llm.readings import pointwise_columns, reading_cells, typed_readings
from judgelab.studies.overrating import jobs as oj
from judgelab.studies.overrating.pairwise import pairwise_metrics
from judgelab.studies.overrating.pointwise import pointwise_metrics
from judgelab.studies.overrating.settings import TableSettings
from judgelab.studies.overrating.tables import TABLE_FORMATS, table1, table2

GRADED = ("0", "1", "2", "3")
BINARY = ("0", "1")
HUMAN = {"A": 3, "B": 0, "C": 1, "D": 2}
#: pair -> (label, its probability in the full distribution, the label tokens' mass)
GRADED_ANSWERS = {"A": (3, 0.60, 0.80), "B": (2, 0.45, 0.90), "C": (0, 0.30, 0.40), "D": (1, 0.20, 0.25)}
BINARY_ANSWERS = {"A": (1, 0.90, 0.95), "B": (0, 0.70, 0.70), "C": (1, 0.50, 0.60), "D": (1, 0.80, 0.85)}


def completion(label: int, p: float, mass: float, labels) -> Completion:
    """The bare label answered at the first step; the other labels share the rest of the mass."""
    rest = (mass - p) / (len(labels) - 1)
    probs = [(p if int(x) == label else rest) / mass for x in labels]
    step = {"pos": 0, "start": 0, "token": str(label), "label": str(label), "probs": probs, "mass": mass}
    return Completion(text=str(label), label_probs=probs, label_mass=mass, label_steps=[step])


def judged(answers: dict, labels) -> pd.DataFrame:
    rows = [
        {
            "dataset": "dl19",
            "qid": "1",
            "docid": d,
            **reading_cells(completion(*a, labels), labels),
            "cache_hit": False,
        }
        for d, a in answers.items()
    ]
    df = typed_readings(pd.DataFrame(rows, columns=pointwise_columns(labels)), labels)
    return df.assign(grade=[HUMAN[d] for d in df["docid"]])


def metric_rows() -> pd.DataFrame:
    rows = []
    for scale, answers, labels in (("graded", GRADED_ANSWERS, GRADED), ("binary", BINARY_ANSWERS, BINARY)):
        rows.append(
            {
                "dataset": "dl19",
                "model": "qwen3-8b",
                "scale": scale,
                **pointwise_metrics(judged(answers, labels), scale),
            }
        )
    return pd.DataFrame(rows)


def test_the_judgment_table_holds_both_confidences():
    j = judged(GRADED_ANSWERS, GRADED).set_index("docid")
    assert j["confidence"].tolist() == pytest.approx([0.60, 0.45, 0.30, 0.20])
    assert j["confidence_renorm"].tolist() == pytest.approx([0.75, 0.50, 0.75, 0.80])
    assert j["label_mass"].tolist() == pytest.approx([0.80, 0.90, 0.40, 0.25])


def test_table1_by_hand_with_both_definitions():
    m = metric_rows()
    full = table1(m, "full", {"qwen3-8b": "Qwen"}).iloc[0]
    renorm = table1(m, "renormalised", {"qwen3-8b": "Qwen"}).iloc[0]
    assert (full["model"], full["model_key"], full["confidence_scale"]) == ("Qwen", "qwen3-8b", "graded")
    # the paper's columns, from the graded run (Avg Confidence) and both runs
    assert full[("Overrated (%)", "Grad.")] == pytest.approx(25.0)
    assert full[("Underrated (%)", "Grad.")] == pytest.approx(50.0)
    assert full[("Mean Bias", "Grad.")] == pytest.approx(0.0, abs=1e-12)
    assert full[("Cohen's κ", "Grad.")] == pytest.approx(0.0, abs=1e-12)
    assert full[("Overrated (%)", "Bin.")] == pytest.approx(25.0) and full[("Underrated (%)", "Bin.")] == 0.0
    assert full[("Mean Bias", "Bin.")] == pytest.approx(0.25) and full[
        ("Cohen's κ", "Bin.")
    ] == pytest.approx(0.5)
    # Avg Confidence: the full-distribution probability by default ...
    seed_conf = [full[("Avg Confidence", o)] for o in ("TP", "FP", "TN", "FN")]
    assert seed_conf == pytest.approx([0.60, 0.45, 0.30, 0.20])
    other = [full[("Avg Confidence (renormalised)", o)] for o in ("TP", "FP", "TN", "FN")]
    assert other == pytest.approx([0.75, 0.50, 0.75, 0.80])
    # ... the renormalised one as the option, the full one then follows
    assert [renorm[("Avg Confidence", o)] for o in ("TP", "FP", "TN", "FN")] == pytest.approx(other)
    assert [
        renorm[("Avg Confidence (full distribution)", o)] for o in ("TP", "FP", "TN", "FN")
    ] == pytest.approx(seed_conf)
    assert full["confidence"] == "full" and renorm["confidence"] == "renormalised"
    # the renormalised value can never fall below 1/4 on the graded scale; the full one can
    assert min(other) >= 0.25 and min(seed_conf) < 0.25


def test_table1_files_put_the_seeds_columns_first(tmp_path):
    metrics = tmp_path / "m.tsv"
    metric_rows().to_csv(metrics, sep="\t", index=False)
    for confidence in ("full", "renormalised"):
        folder = tmp_path / confidence
        out = {fmt: str(folder / f"table1.{fmt}") for fmt in TABLE_FORMATS} | {
            "metrics": str(folder / "m.tsv")
        }
        oj.table1_job([str(metrics)], out, TableSettings(confidence, {"qwen3-8b": "Qwen"}))
        md = (folder / "table1.md").read_text().splitlines()
        header = [c.strip() for c in md[0].strip("|").split("|")]
        assert header[:14] == [
            "Dataset",
            "Model",
            "Overrated (%) Bin.",
            "Overrated (%) Grad.",
            "Underrated (%) Bin.",
            "Underrated (%) Grad.",
            "Mean Bias Bin.",
            "Mean Bias Grad.",
            "Cohen's κ Bin.",
            "Cohen's κ Grad.",
            "Avg Confidence TP",
            "Avg Confidence FP",
            "Avg Confidence TN",
            "Avg Confidence FN",
        ]
        row = [c.strip() for c in md[2].strip("|").split("|")]
        main, extra = (
            (["0.600", "0.450", "0.300", "0.200"], ["0.750", "0.500", "0.750", "0.800"])
            if confidence == "full"
            else (["0.750", "0.500", "0.750", "0.800"], ["0.600", "0.450", "0.300", "0.200"])
        )
        assert (
            row[:14]
            == ["dl19", "Qwen", "25.00", "25.00", "0.00", "50.00", "0.250", "0.000", "0.500", "0.000"] + main
        )
        # then Krippendorff's alpha of each run, the other definition, the coverage of each run
        assert header[18:21] == [
            "Krippendorff's α Bin.",
            "Krippendorff's α Grad.",
            "Krippendorff's α Grad.→Bin.",
        ]
        assert row[21:25] == extra and row[25:] == ["1.000", "1.000"]
        tsv = pd.read_csv(folder / "table1.tsv", sep="\t")
        assert list(tsv.columns[:2]) == ["dataset", "model"] and tsv.loc[0, "model_key"] == "qwen3-8b"


def test_table2_by_hand_with_both_definitions():
    # one correct pair (both orders prefer hi), one wrong win, one tie; (full, renormalised) per order
    judgments = []
    for qid, prefs, confs in (
        ("1", ("hi", "hi"), ((0.90, 0.95), (0.80, 0.98))),
        ("2", ("lo", "lo"), ((0.50, 0.70), (0.60, 0.65))),
        ("3", ("hi", "lo"), ((0.97, 0.99), (0.40, 0.96))),
    ):
        for order, pref, (full, renorm) in zip(("hi_first", "lo_first"), prefs, confs):
            judgments.append(
                {
                    "qid": qid,
                    "setting": "B-U",
                    "hi_docid": "h",
                    "lo_docid": "l",
                    "order": order,
                    "preferred": pref,
                    "confidence": full,
                    "confidence_renorm": renorm,
                }
            )
    m = pairwise_metrics(pair_outcomes(pd.DataFrame(judgments)))
    m = pd.concat([pd.DataFrame([{"dataset": "dl19", "model": "qwen3-8b"}] * len(m)), m], axis=1)
    full = table2(m, confidence="full").iloc[0]
    renorm = table2(m, confidence="renormalised").iloc[0]
    assert (full["accuracy_pct"], full["tie_rate_pct"], full["wrong_win_pct"]) == pytest.approx(
        (100 / 3,) * 3
    )
    assert full["accuracy_no_ties_pct"] == pytest.approx(50.0)
    # Corr. / Incorr.: both orders of the correct / wrong-win pairs, ties left out (the paper's Table 2)
    assert full["conf_correct"] == pytest.approx((0.90 + 0.80) / 2)
    assert full["conf_incorrect"] == pytest.approx((0.50 + 0.60) / 2)
    assert full["conf_correct_renorm"] == pytest.approx((0.95 + 0.98) / 2)
    assert full["conf_incorrect_renorm"] == pytest.approx((0.70 + 0.65) / 2)
    # the tie: confident (> 0.95) in both orders only renormalised (0.99, 0.96), not in full (0.97, 0.40)
    assert full["ties_confident_pct"] == 0.0 and full["ties_confident_renorm_pct"] == 100.0
    assert list(full.index[:9]) == [
        "dataset",
        "model",
        "setting",
        "accuracy_pct",
        "accuracy_no_ties_pct",
        "tie_rate_pct",
        "wrong_win_pct",
        "conf_correct",
        "conf_incorrect",
    ]
    assert list(renorm.index[7:9]) == ["conf_correct_renorm", "conf_incorrect_renorm"]
    assert not math.isnan(renorm["conf_correct"])  # the other definition follows
