"""PERAS committees (peras.committees; issue 28, item 6) without a run: where a persona committee
and a judge committee sit among the study's groups, what their jobs read, that they stay out of
the classifier and the calibration cells, the committee job on hand tables, and every bad
committee as one error naming its key before any job."""

from __future__ import annotations

import copy

import pandas as pd
import pytest
import yaml
from conftest import ROOT

from judgelab.analysis.committee import Committee
from judgelab.data.tables import read_confidence, read_judgments, write_tsv
from judgelab.errors import InputError
from judgelab.studies.peras.jobs import committee_job
from judgelab.wiring.facade import Project

CONFIG = yaml.safe_load((ROOT / ".test" / "analysis" / "config" / "config.yaml").read_text())


def plan(committees=None):
    cfg = copy.deepcopy(CONFIG)
    if committees is not None:
        cfg["peras"]["committees"] = committees
    return Project(cfg, ROOT).plan("peras")


def test_committees_among_the_groups():
    p = plan()
    assert p.groups == {
        ("fx", "smollm2", "wo_cot"): ["default", "LA", "HN", "trio"],
        ("fx", "ext", "wo_cot"): ["default", "LA", "HN", "trio"],
        ("fx", "both", "wo_cot"): ["default", "LA", "HN", "trio"],
    }
    assert p.committee_of("smollm2", "trio") == Committee("trio", ("default", "LA", "HN"))
    assert p.committee_of("both", "trio") == Committee("both", ("smollm2", "ext"), rule="mean")
    assert p.committee_inputs("fx", "ext", "wo_cot", "trio") == [
        f"results/peras/judgments/fx/ext/wo_cot/{x}.tsv" for x in ("default", "LA", "HN")
    ]
    assert p.committee_inputs("fx", "both", "wo_cot", "trio") == [
        f"results/peras/judgments/fx/{m}/wo_cot/trio.tsv" for m in ("smollm2", "ext")
    ]
    # the classifier's features are the personas; a judge committee has no classifier
    assert p.classifier_groups() == [("fx", "smollm2", "wo_cot"), ("fx", "ext", "wo_cot")]
    assert p.classifier_group("fx", "ext", "wo_cot").personas == ("default", "LA", "HN")
    cells = p.calibration_cells()
    assert len(cells) == 6 and {c["persona"] for c in cells} == {"default", "LA", "HN"}
    assert {c["model"] for c in cells} == {"smollm2", "ext"}
    # no LLM job for a committee
    assert {dict(j.wildcards)["persona"] for j in p.llm_jobs()} == {"default", "LA", "HN"}


def test_a_persona_committee_only_where_its_personas_run():
    p = plan({"pair": {"personas": ["LA", "HN"]}})
    assert all(ps[-1] == "pair" for ps in p.groups.values()) and len(p.groups) == 2


@pytest.mark.parametrize(
    "committees, key, what",
    [
        ({"x": {"personas": ["default", "ZZ"]}}, r"peras.committees.x.personas\[1\]", "not a persona"),
        ({"x": {"personas": ["default"]}}, "peras.committees.x.personas", "at least 2"),
        ({"x": {"personas": ["LA", "LA"]}}, r"peras.committees.x.personas\[1\]", "twice"),
        ({"HN": {"personas": ["default", "LA"]}}, "peras.committees.HN", "already names"),
        ({"ext": {"personas": ["default", "LA"]}}, "peras.committees.ext", "already names"),
        ({"x": {"judges": ["smollm2", "nobody"]}}, r"peras.committees.x.judges\[1\]", "not a judge"),
        (
            {"x": {"judges": ["smollm2", "ext"], "personas": ["LA", "HN"]}},
            "peras.committees.x",
            "exactly one",
        ),
        ({"x": {"rule": "mean"}}, "peras.committees.x", "exactly one"),
        ({"x": {"judges": ["smollm2", "ext"], "quorum": 3}}, "peras.committees.x.quorum", "0..2"),
        ({"x": {"judges": ["smollm2", "ext"], "rule": "mode"}}, "peras.committees.x.rule", "mode"),
    ],
)
def test_bad_committees_name_the_key(committees, key, what):
    with pytest.raises(InputError, match=key) as err:
        plan(committees)
    assert what in str(err.value)


def test_a_judge_committee_whose_judges_share_no_template_names_the_key():
    cfg = copy.deepcopy(CONFIG)
    cfg["imported_judges"]["ext"]["templates"] = ["imported"]
    cfg["peras"]["committees"] = {"x": {"judges": ["smollm2", "ext"]}}
    with pytest.raises(InputError, match="peras.committees.x.judges") as err:
        Project(cfg, ROOT)
    assert "no dataset x template x persona" in str(err.value)


def test_the_committee_job_on_hand_tables(tmp_path):
    pairs = pd.DataFrame(
        {
            "dataset": "fx",
            "qid": ["1", "1", "1", "2"],
            "docid": ["a", "b", "c", "a"],
            "query": "q",
            "passage": "p",
            "grade": [0, 1, 2, 3],
        }
    )
    write_tsv(pairs, tmp_path / "pairs.tsv")
    members = {"A": [2, 0, None, 3], "B": [2, 1, None, 1], "C": [3, 1, 2, 0]}
    files = []
    for name, labels in members.items():
        t = pairs[["dataset", "qid", "docid"]].assign(label=pd.array(labels, dtype="Int64"))
        write_tsv(t, tmp_path / f"{name}.tsv")
        files.append(str(tmp_path / f"{name}.tsv"))
    out = {"judgments": str(tmp_path / "j.tsv"), "confidence": str(tmp_path / "c.tsv")}
    expect = {
        # majority: 2 2 3 -> 2; 0 1 1 -> 1; one member (quorum 2) -> missing; 3 1 0 -> a tie: 0
        "majority": [2, 1, None, 0],
        "median": [2, 1, None, 1],
        "mean": [2, 1, None, 1],  # 7/3 -> 2, 2/3 -> 1, 4/3 -> 1
    }
    for rule, labels in expect.items():
        committee_job(str(tmp_path / "pairs.tsv"), files, Committee("c", ("A", "B", "C"), rule=rule), out)
        j, c = read_judgments(out["judgments"]), read_confidence(out["confidence"])
        assert [None if pd.isna(x) else int(x) for x in j["label"]] == labels, rule
        assert list(j["docid"]) == ["a", "b", "c", "a"] and j["p0"].isna().all()
        assert list(j["parsed"]) == [True, True, False, True]
        assert c["confidence"].isna().all() and not c["asked"].astype(bool).any()
    # quorum 1: the lone label counts
    committee_job(str(tmp_path / "pairs.tsv"), files, Committee("c", ("A", "B", "C"), quorum=1), out)
    assert int(read_judgments(out["judgments"])["label"].iloc[2]) == 2
