"""Imported judges: a TREC-qrels-format file becomes judgelab's judgment/confidence tables, its
metrics equal scikit-learn's on the same pairs, and bad lines fail naming file and line."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT, write_lines
from sklearn.metrics import cohen_kappa_score, f1_score

from judgelab.data.imported import (
    ImportReading,
    SourcePairs,
    import_judgments,
    read_judge,
    read_judge_file,
    resolve_imported,
)
from judgelab.data.prepare import build_trec_table, prepare_table
from judgelab.data.tables import read_dataset, write_dataset
from judgelab.errors import InputError
from judgelab.studies.peras.jobs import import_job, job_metrics_job


@pytest.fixture
def table(fixtures, tmp_path):
    fx = fixtures / "trec"
    t = build_trec_table("fx", fx / "qrels.txt", fx / "topics.txt", fx / "texts.tsv")
    path = tmp_path / "fx.tsv"
    write_dataset(t, path)
    return read_dataset(path), path


def test_imported_metrics_equal_sklearn(table, tmp_path):
    t, table_path = table
    rng = np.random.default_rng(0)
    lines, labels, confs = [], {}, {}
    for k, r in enumerate(t.itertuples()):
        if k == 3:  # one pair the judge did not label: counted as missing, not as a grade
            continue
        lab = int(rng.integers(0, 4)) if k % 2 else int(r.grade)
        conf = float(rng.integers(0, 101))
        labels[(r.qid, r.docid)], confs[(r.qid, r.docid)] = lab, conf
        lines.append(f"{r.qid} Q0 {r.docid} {lab} {conf:g}")
    lines.insert(2, "# a comment")
    judge = write_lines(tmp_path, lines)
    out_j, out_c = tmp_path / "j.tsv", tmp_path / "c.tsv"
    import_job(
        str(table_path), str(judge), {"judgments": str(out_j), "confidence": str(out_c)}, ImportReading(), {}
    )
    m = job_metrics_job(str(table_path), str(out_j), str(out_c), str(tmp_path / "m.tsv"), ids={}).iloc[0]
    keys = [(r.qid, r.docid) for r in t.itertuples() if (r.qid, r.docid) in labels]
    y = [int(t.set_index(["qid", "docid"]).loc[k, "grade"]) for k in keys]
    yhat = [labels[k] for k in keys]
    assert m["n_pairs"] == len(t) and m["n_parsed"] == len(t) - 1
    assert m["kappa"] == pytest.approx(cohen_kappa_score(y, yhat, labels=[0, 1, 2, 3]))
    assert m["qwk"] == pytest.approx(cohen_kappa_score(y, yhat, labels=[0, 1, 2, 3], weights="quadratic"))
    assert m["macro_f1"] == pytest.approx(
        f1_score(y, yhat, labels=[0, 1, 2, 3], average="macro", zero_division=0)
    )
    assert m["mean_confidence"] == pytest.approx(np.mean([confs[k] for k in keys]))
    j = pd.read_csv(out_j, sep="\t", dtype={"qid": str, "docid": str})
    assert int(j["parsed"].sum()) == len(t) - 1 and j["label"].isna().sum() == 1


def test_four_column_file_has_no_confidence(table, tmp_path):
    t, _ = table
    judge = write_lines(tmp_path, [f"{r.qid} 0 {r.docid} {r.grade}" for r in t.itertuples()])
    j, c = import_judgments(t, judge)
    assert (j["label"].astype(int) == t["grade"].astype(int)).all()
    assert c["confidence"].isna().all() and c["asked"].all() and not c["parsed"].any()


@pytest.mark.parametrize(
    "bad, message",
    [
        ("{q} Q0 {d}", "expected 'qid Q0 docid label"),
        ("{q} Q0 {d} 4", "label 4 is outside 0-3"),
        ("{q} Q0 {d} x", "label 'x' is not an integer"),
        ("{q} Q0 {d} 2 140", "confidence 140 is outside 0-100"),
        ("{q} Q0 {d} 2 high", "confidence 'high' is not a number"),
        ("999999 Q0 {d} 2", "unknown query id '999999'"),
        ("{q} Q0 no_such_passage 2", "unknown passage id 'no_such_passage'"),
        ("{q} Q0 {d} 1", "labelled twice differently"),
    ],
)
def test_bad_lines_name_file_and_line(table, tmp_path, bad, message):
    t, _ = table
    r = t.iloc[0]
    lines = [f"{x.qid} Q0 {x.docid} {x.grade}" for x in t.itertuples()][:3]
    lines[0] = f"{r.qid} Q0 {r.docid} 0"
    lines.insert(1, "")  # blank lines count in the numbering
    lines.append(bad.format(q=r.qid, d=r.docid))
    judge = write_lines(tmp_path, lines)
    with pytest.raises(InputError, match=message) as exc:
        read_judge_file(judge, t)
    assert exc.value.path == str(judge) and exc.value.line == 5
    assert str(exc.value).startswith(f"{judge}:5: ")


def _cfg(**judge):
    return {
        "datasets": {"dl19": {}, "dl21": {}},
        "models": {"smollm2": {}},
        "imported_judges": {"ext": judge},
    }


def test_config_resolution_and_errors():
    j = resolve_imported(
        _cfg(path="imp/{dataset}/{persona}.txt", datasets=["dl19", "dl21"], personas=["default", "LA"])
    )["ext"]
    assert j.templates == ("imported",)
    assert j.file("dl21", "imported", "LA") == "imp/dl21/LA.txt"
    assert len(j.combos()) == 4
    with pytest.raises(InputError, match="imported_judges.ext.datasets"):
        resolve_imported(_cfg(path="x.txt", datasets=["dl99"]))
    with pytest.raises(InputError, match="imported_judges.ext.path.*no {persona} placeholder"):
        resolve_imported(_cfg(path="imp/{dataset}.txt", datasets=["dl19"], personas=["default", "LA"]))
    with pytest.raises(InputError, match="unknown placeholders"):
        resolve_imported(_cfg(path="imp/{model}.txt", datasets=["dl19"]))
    cfg = _cfg(path="x.txt", datasets=["dl19"])
    cfg["imported_judges"]["smollm2"] = cfg["imported_judges"].pop("ext")
    with pytest.raises(InputError, match="imported_judges.smollm2"):
        resolve_imported(cfg)


# -- a file that labels more than the dataset's selection -------------------------------------

SAMPLE = ROOT / "resources" / "sample" / "dl19"


@pytest.fixture
def sample_selection(tmp_path):
    """The default config's DL19: the bundled sample (24 pairs), 2 pairs per grade (8)."""
    sel = {"format": "trec", "encoding": "utf-8", "per_grade": 2, "seed": 42}
    full, subset = prepare_table(
        "dl19", sel, SAMPLE / "qrels.txt", SAMPLE / "topics.txt", SAMPLE / "texts.tsv"
    )
    path = tmp_path / "dl19.tsv"
    write_dataset(subset, path)
    return full, read_dataset(path), path


def test_pairs_outside_the_selection_are_skipped_and_counted(sample_selection, tmp_path, caplog):
    full, subset, table_path = sample_selection
    assert (len(full), len(subset)) == (24, 8)
    judge = tmp_path / "full.qrels"  # a judge that labelled the whole dataset: its qrels, grade - 1
    judge.write_text(
        "".join(f"{r.qid} Q0 {r.docid} {max(int(r.grade) - 1, 0)} 80\n" for r in full.itertuples()),
        encoding="utf-8",
    )
    # the selection alone (how it failed before): the first line whose pair is not selected
    chosen, qids = set(zip(subset.qid, subset.docid)), set(subset.qid)
    no, row = next((n, r) for n, r in enumerate(full.itertuples(), 1) if (r.qid, r.docid) not in chosen)
    why = (
        f"unknown query id '{row.qid}': not in the dataset"
        if row.qid not in qids
        else f"unknown passage id '{row.docid}' for query {row.qid}: not a judged pair of the dataset"
    )
    with pytest.raises(InputError, match=rf"full.qrels:{no}: {re.escape(why)}$"):
        read_judge_file(judge, subset)
    source = SourcePairs.read(SAMPLE / "qrels.txt", SAMPLE / "topics.txt")
    read = read_judge(judge, subset, source=source)
    assert vars(read.counts) == {
        "labelled": 24,
        "in_selection": 8,
        "outside_selection": 16,
        "selection": 8,
        "unlabelled": 0,
        "unknown": 0,  # a published judge's dropped lines (an imported judge's are errors)
        "out_of_scale": 0,
    }
    out = {k: tmp_path / f"{k}.tsv" for k in ("j", "c", "s")}
    with caplog.at_level("INFO"):
        import_job(
            str(table_path),
            str(judge),
            {"judgments": str(out["j"]), "confidence": str(out["c"]), "summary": str(out["s"])},
            ImportReading(),
            {"dataset": "dl19", "model": "mine"},
            qrels=str(SAMPLE / "qrels.txt"),
            topics=str(SAMPLE / "topics.txt"),
        )
    assert "24 pairs labelled, 8 of them in the dataset's selection, 16 outside it (skipped" in caplog.text
    summary = pd.read_csv(out["s"], sep="\t")
    assert summary.to_dict("records") == [
        {
            "dataset": "dl19",
            "model": "mine",
            "file": str(judge),
            "labelled": 24,
            "in_selection": 8,
            "outside_selection": 16,
            "selection": 8,
            "unlabelled": 0,
            "unknown": 0,
            "out_of_scale": 0,
        }
    ]
    j = pd.read_csv(out["j"], sep="\t", dtype={"qid": str, "docid": str})
    grade = subset.set_index(["qid", "docid"])["grade"]
    assert len(j) == 8 and j["parsed"].all()
    assert [int(v) for v in j["label"]] == [
        max(int(grade[(q, d)]) - 1, 0) for q, d in zip(j["qid"], j["docid"])
    ]


@pytest.mark.parametrize(
    "line, message, no",
    [
        ("999999 Q0 3484458 2", "unknown query id '999999': not in the dataset (qrels ", 3),
        ("1114819 Q0 no_such 2", "unknown passage id 'no_such' for query 1114819: not a judged pair", 3),
    ],
)
def test_only_what_the_dataset_files_lack_is_an_error(sample_selection, tmp_path, line, message, no):
    full, subset, _ = sample_selection
    inside = subset.iloc[0]
    judge = write_lines(tmp_path, [f"{inside.qid} Q0 {inside.docid} 1", "", line])
    source = SourcePairs.read(SAMPLE / "qrels.txt", SAMPLE / "topics.txt")
    with pytest.raises(InputError, match=re.escape(message)) as exc:
        read_judge(judge, subset, source=source)
    assert exc.value.path == str(judge) and exc.value.line == no
    assert str(SAMPLE / "qrels.txt") in str(exc.value)


def test_a_file_that_shares_no_pair_with_the_selection_fails_naming_file_and_line(sample_selection, tmp_path):
    full, subset, _ = sample_selection
    chosen = set(zip(subset["qid"], subset["docid"]))
    outside = [r for r in full.itertuples() if (r.qid, r.docid) not in chosen][:3]
    judge = write_lines(
        tmp_path, ["# none of these is in the sample", *(f"{r.qid} Q0 {r.docid} 2" for r in outside)]
    )
    source = SourcePairs.read(SAMPLE / "qrels.txt", SAMPLE / "topics.txt")
    with pytest.raises(InputError, match=r"none of the 3 pairs this file labels is among the 8 pairs") as exc:
        read_judge(judge, subset, source=source)
    assert exc.value.line == 2 and "datasets.dl19" in str(exc.value)
    # a file with no label line is a judge that labelled nothing: every pair missing, counted
    empty = read_judge(write_lines(tmp_path, ["# nothing"], name="empty.qrels"), subset, source=source)
    assert (empty.counts.labelled, empty.counts.unlabelled) == (0, 8) and empty.labels.empty
