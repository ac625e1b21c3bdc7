"""The labels people collected as the reference and as a judge (issue 43, "Using them"): with
``datasets.<name>.reference`` the prepare job keeps the pairs the annotators labelled, their label
as the grade (several files merged: the first file's label), before the selection; labels of no
topic of the dataset are an error naming the key, a missing file too; as an imported judge an
annotator's qrels file is read like any other judge's file, and one of another dataset is an error
naming its file and line."""

from __future__ import annotations

import copy

import pandas as pd
import pytest
import yaml
from conftest import FIXTURES, ROOT

from judgelab.data.imported import ImportReading
from judgelab.data.tables import read_dataset
from judgelab.errors import InputError
from judgelab.project.stages import prepare_dataset_job
from judgelab.studies.ranking.jobs import import_labels_job
from judgelab.wiring.facade import Project

TREC = FIXTURES / "trec"


def qrels_file(path, rows) -> str:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    return str(path)


def prepare(tmp_path, reference=None, **selection) -> pd.DataFrame:
    out = tmp_path / "fx.tsv"
    prepare_dataset_job(
        "fx",
        str(TREC / "qrels.txt"),
        str(TREC / "topics.txt"),
        {"format": "trec", **selection},
        str(out),
        str(TREC / "texts.tsv"),
        reference,
    )
    return read_dataset(out)


def test_the_reference_replaces_the_grades_with_the_annotators_labels(tmp_path):
    # the fixture's qrels: 101 d1-d4 graded 3 2 1 0, 102 d5-d8 graded 3 0 0 1
    ana = qrels_file(tmp_path / "ana.qrels", [("101", "d1", 0), ("101", "d2", 3), ("101", "zz", 2)])
    bob = qrels_file(tmp_path / "bob.qrels", [("101", "d1", 2), ("102", "d6", 2)])
    table = prepare(tmp_path, [ana, bob])
    got = {(q, d): int(g) for q, d, g in zip(table["qid"], table["docid"], table["grade"])}
    # ana's labels first, bob's where ana gave none; 101 zz is no pair of the dataset: left out
    assert got == {("101", "d1"): 0, ("101", "d2"): 3, ("102", "d6"): 2}
    assert table.set_index("docid").loc["d2", "passage"].startswith("A study")  # the dataset's text
    # the selection applies to the annotated pairs and their labels
    only = prepare(tmp_path, [ana, bob], queries=["102"])
    assert list(only["docid"]) == ["d6"] and list(only["grade"]) == [2]
    plain = prepare(tmp_path)
    assert len(plain) == 8 and list(plain["grade"][:4]) == [3, 2, 1, 0]


def test_a_reference_of_no_topic_of_the_dataset_is_an_error_naming_the_key(tmp_path):
    other = qrels_file(tmp_path / "other.qrels", [("999", "x1", 2)])
    with pytest.raises(
        InputError, match=r"config key 'datasets.fx.reference': the reference labels cover no topic"
    ):
        prepare(tmp_path, [other])


def test_the_config_key_names_its_files_and_tracks_them(tmp_path):
    cfg = yaml.safe_load((ROOT / ".test" / "ranking" / "config" / "config.yaml").read_text())
    for k in ("qrels", "topics", "texts"):
        cfg["datasets"]["fx"][k] = str(TREC / cfg["datasets"]["fx"][k].split("/")[-1])
    qrels_file(tmp_path / "ana.qrels", [("101", "d1", 0)])
    with_ref = copy.deepcopy(cfg)
    with_ref["datasets"]["fx"]["reference"] = ["ana.qrels"]
    project = Project(with_ref, ROOT, workdir=tmp_path)
    assert project.reference_files("fx") == ["ana.qrels"]
    assert project.selection("fx")["reference"] == ["ana.qrels"]  # its order is the merge's: tracked
    plain = Project(cfg, ROOT, workdir=tmp_path)
    assert plain.reference_files("fx") == [] and "reference" not in plain.selection("fx")
    with_ref["datasets"]["fx"]["reference"] = ["ana.qrels", "bob.qrels"]
    with pytest.raises(InputError, match=r"'datasets.fx.reference\[1\]': bob.qrels does not exist"):
        Project(with_ref, ROOT, workdir=tmp_path).reference_files("fx")


def test_an_annotators_qrels_is_an_imported_judge_like_any_other(tmp_path):
    table = tmp_path / "fx.tsv"
    prepare_dataset_job(
        "fx",
        str(TREC / "qrels.txt"),
        str(TREC / "topics.txt"),
        {"format": "trec"},
        str(table),
        str(TREC / "texts.tsv"),
    )
    ana = qrels_file(tmp_path / "ana.qrels", [("101", "d1", 2), ("101", "d3", 0), ("102", "d5", 3)])
    labels = import_labels_job(str(table), ana, str(tmp_path / "labels.tsv"), ImportReading(scale="graded"))
    assert list(zip(labels["qid"], labels["docid"], labels["label"])) == [
        ("101", "d1", 2),
        ("101", "d3", 0),
        ("102", "d5", 3),
    ]
    other = qrels_file(tmp_path / "other.qrels", [("999", "x1", 2)])
    with pytest.raises(InputError, match=r"other.qrels:1: unknown query id '999'"):
        import_labels_job(str(table), other, str(tmp_path / "other.tsv"), ImportReading(scale="graded"))
