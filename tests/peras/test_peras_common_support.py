"""PERAS metrics on the common support (issue 25, item 3): beside each persona's metrics over its
own parsed pairs, ``common_*`` over the pairs every persona of the group answered; Tables 7 and 8
take ``peras.support`` (parsed, the paper's reading, or common). Hand-made judges on the fixture
dataset: "LA" leaves its first three pairs unanswered, so the common support is the rest."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.analysis.agreement import agreement
from judgelab.data.imported import ImportReading
from judgelab.data.prepare import build_trec_table
from judgelab.data.tables import read_dataset, write_dataset
from judgelab.errors import InputError
from judgelab.studies.peras import jobs as stages
from judgelab.studies.peras.settings import Group

PERSONAS = ("default", "LA")


def judges(fixtures, tmp_path):
    fx = fixtures / "trec"
    pairs = tmp_path / "fx.tsv"
    write_dataset(build_trec_table("fx", fx / "qrels.txt", fx / "topics.txt", fx / "texts.tsv"), pairs)
    table = read_dataset(pairs)
    files = {"judgments": [], "confidence": []}
    for p in PERSONAS:
        lines = []
        for i, r in enumerate(table.itertuples()):
            if p == "LA" and i < 3:
                continue  # unanswered: missing for LA only
            # default errs on the three pairs LA leaves out, LA on every other pair
            wrong = i < 3 if p == "default" else i % 2 == 0
            label = (int(r.grade) + 1) % 4 if wrong else int(r.grade)
            lines.append(f"{r.qid} Q0 {r.docid} {label} {50 + i}")
        src = tmp_path / f"{p}.txt"
        src.write_text("".join(x + "\n" for x in lines))
        j, c = (tmp_path / k / f"{p}.tsv" for k in ("judgments", "confidence"))
        stages.import_job(
            str(pairs), str(src), {"judgments": str(j), "confidence": str(c)}, ImportReading("graded"), {}
        )
        files["judgments"].append(str(j))
        files["confidence"].append(str(c))
    return pairs, table, files


def test_common_support_is_the_pairs_every_persona_answered(fixtures, tmp_path):
    pairs, table, files = judges(fixtures, tmp_path)
    out = tmp_path / "group.tsv"
    m = stages.group_metrics_job(
        str(pairs),
        files["judgments"],
        files["confidence"],
        Group("fx", "ext", "imported", PERSONAS),
        str(out),
    )
    n = len(table)
    by = m.set_index("persona")
    assert by.loc["default", "n_parsed"] == n and by.loc["LA", "n_parsed"] == n - 3
    assert (by["common_n_parsed"] == n - 3).all()  # the same pairs for both
    # default's common-support kappa is its kappa on the pairs LA answered (by hand: all but the first 3)
    rest = table.iloc[3:]
    assert by.loc["default", "common_kappa"] == pytest.approx(
        agreement(rest["grade"], rest["grade"])["kappa"]
    )
    assert by.loc["LA", "common_kappa"] == pytest.approx(
        by.loc["LA", "kappa"]
    )  # LA's own pairs are the support
    assert by.loc["default", "common_kappa"] == 1.0 > by.loc["default", "kappa"]


def test_tables_take_the_support_key(fixtures, tmp_path):
    pairs, _, files = judges(fixtures, tmp_path)
    metrics = tmp_path / "metrics.tsv"
    stages.group_metrics_job(
        str(pairs),
        files["judgments"],
        files["confidence"],
        Group("fx", "ext", "imported", PERSONAS),
        str(metrics),
    )

    def tables(support):
        outs = {
            f"{t}_{k}": str(tmp_path / support / f"{t}.{k}")
            for t in ("table7", "table8")
            for k in ("tsv", "md", "tex", "html")
        }
        stages.wide_tables_job(str(metrics), "default", outs, support)
        return pd.read_csv(outs["table7_tsv"], sep="\t"), (tmp_path / support / "table7.html").read_text()

    parsed, parsed_html = tables("parsed")
    common, common_html = tables("common")
    assert "Common support" in common_html and "Common support" not in parsed_html
    assert not parsed.equals(common)
    with pytest.raises(InputError, match="peras.support"):
        tables("everything")


def test_missing_answers_split_into_truncated_and_unparsable():
    from judgelab.studies.peras.metrics import job_metrics

    pairs = pd.DataFrame(
        {
            "grade": [0, 1, 2, 3, 2],
            "label": pd.array([0, 1, None, None, None], dtype="Int64"),
            "confidence": pd.array([80, 70, None, None, None], dtype="Float64"),
            "truncated": [False, False, True, False, "True"],  # as a TSV may read back
        }
    )
    m = job_metrics(pairs)
    assert (m["n_parsed"], m["n_truncated"], m["n_unparsable"]) == (2, 2, 1)
    assert job_metrics(pairs.drop(columns="truncated"))["n_unparsable"] == 3  # no column: none truncated
