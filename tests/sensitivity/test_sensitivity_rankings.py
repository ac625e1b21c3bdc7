"""Beyond the paper: each prompt's labels as qrels for the runs (judgelab.studies.sensitivity.rankings).

Tau per prompt against scipy's Kendall tau of the systems' nDCG@10 computed by ir-measures on
qrels files this test writes from GPT-4o's published DL21 file (../shared/data; skipped when
absent); the committee, the spread and the config's errors on hand-made tables."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from snakerun import make_workdir

from judgelab.errors import InputError
from judgelab.studies.sensitivity.rankings import (
    COMMITTEE,
    committees,
    ranking_rows,
    ranking_spread,
)
from judgelab.wiring.facade import Project

#: a few of the 63 DL21 runs: the check is of the computation, not of the scale
RUNS = ("p_bm25", "p_tct0", "pash_r1", "TUW_TAS-B_768", "mono_h3", "uogTrPC")


def labels(rows: list[tuple[str, str, int, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["qid", "docid", "grade", "label"])


def test_the_committee_over_prompts_is_the_majority_umbrela_apart():
    grades = {"d": {("1", "a"): 3, ("1", "b"): 0, ("1", "c"): 2}}
    cells = {
        ("published", "m", "graded", "d", "0", "human"): labels(
            [("1", "a", 3, 3), ("1", "b", 0, 1), ("1", "c", 2, 1)]
        ),
        ("published", "m", "graded", "d", "1", "human"): labels(
            [("1", "a", 3, 2), ("1", "b", 0, 0), ("1", "c", 2, 2)]
        ),
        ("published", "m", "graded", "d", "2", "LLM"): labels([("1", "a", 3, 3), ("1", "b", 0, 1)]),
        # UMBRELA's votes 0 everywhere: not a member
        ("published", "m", "graded", "d", "32", "umbrela"): labels(
            [("1", "a", 3, 0), ("1", "b", 0, 0), ("1", "c", 2, 0)]
        ),
        # one prompt only: no committee
        ("published", "m", "binary", "d", "0", "human"): labels([("1", "a", 3, 1)]),
    }
    out = committees(cells, grades)
    assert list(out) == [("published", "m", "graded", "d", COMMITTEE, COMMITTEE)]
    got = out[("published", "m", "graded", "d", COMMITTEE, COMMITTEE)]
    # a: 3, 2, 3 -> 3; b: 1, 0, 1 -> 1; c: 1, 2 (a tie: the lower), 2 of 3 prompts labelled it
    assert got.values.tolist() == [["1", "a", 3, 3], ["1", "b", 0, 1], ["1", "c", 2, 1]]


def test_the_spread_of_tau_leaves_umbrela_and_the_committee_beside():
    rows = pd.DataFrame(
        {
            "source": "published",
            "model": "m",
            "type": "graded",
            "dataset": "d",
            "measure": "nDCG@10",
            "prompt": ["0", "1", "2", "32", COMMITTEE],
            "group": ["human", "human", "LLM", "umbrela", COMMITTEE],
            "tau": [0.5, 0.9, 0.7, 1.0, 0.8],
            "tau_full": [0.4, 0.6, 0.5, 0.95, 0.55],
        }
    )
    s = ranking_spread(rows).iloc[0]
    assert s["prompts"] == 3
    assert (s["tau_min"], s["tau_max"], s["tau_range"]) == pytest.approx((0.5, 0.9, 0.4))
    assert (s["tau_full_min"], s["tau_full_max"], s["tau_full_range"]) == pytest.approx((0.4, 0.6, 0.2))
    assert (s["umbrela_tau"], s["committee_tau"], s["committee_tau_full"]) == (1.0, 0.8, 0.55)


def test_tau_per_prompt_equals_scipy_on_ir_measures_scores(shared_data, tmp_path):
    """GPT-4o's graded and binary DL21 labels of prompt 0 as qrels: tau against the human order on
    the same pairs and on the full qrels equals scipy.stats.kendalltau of the systems' nDCG@10 as
    ir-measures computes it from qrels files written here and the run files."""
    import ir_measures
    from scipy.stats import kendalltau

    from judgelab.analysis.scores import prepared_runs
    from judgelab.data.readers import read_run

    qrels = pd.read_csv(
        shared_data / "trec-dl/qrels.dl21-passage.txt", sep=r"\s+", header=None, dtype=str, usecols=[0, 2, 3]
    )
    qrels.columns = ["qid", "docid", "grade"]
    qrels["grade"] = qrels["grade"].astype(int)
    # each run's first 50 documents per topic (nDCG@10 reads the first 10), written once: both
    # computations read the same files
    run_files = {}
    for r in RUNS:
        full_run = pd.read_csv(
            shared_data / f"trec-dl-runs/dl21/input.{r}.txt", sep=r"\s+", header=None, dtype=str
        )
        full_run["s"] = full_run[4].astype(float)
        top = full_run.sort_values([0, "s"], ascending=[True, False], kind="stable").groupby(0).head(50)
        run_files[r] = tmp_path / f"input.{r}.txt"
        top[[0, 1, 2, 3, 4, 5]].to_csv(run_files[r], sep=" ", header=False, index=False)
    runs = prepared_runs({r: read_run(p, r) for r, p in run_files.items()})

    measure = ir_measures.nDCG @ 10
    read = {r: list(ir_measures.read_trec_run(str(f))) for r, f in run_files.items()}

    def ndcg(rows: pd.DataFrame, name: str) -> list[float]:
        path = tmp_path / f"{name}.qrels"
        path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows.itertuples(index=False)))
        evaluator = ir_measures.evaluator([measure], ir_measures.read_trec_qrels(str(path)))
        return [evaluator.calc_aggregate(read[r])[measure] for r in RUNS]

    for kind, scale in (("graded", {"0", "1", "2", "3"}), ("binary", {"0", "1"})):
        raw = pd.read_csv(
            shared_data / f"prompt-sensitivity/Judgements/gpt-4o/{kind}/gpt-4o_{kind}_dl21_0.txt",
            sep=r"\s+",
            header=None,
            dtype=str,
        )
        raw = raw.drop_duplicates([0, 2])  # the first line of a pair counts
        raw = raw[raw[3].isin(scale)]
        joined = raw.rename(columns={0: "qid", 2: "docid", 3: "label"}).merge(qrels, on=["qid", "docid"])
        joined["label"] = joined["label"].astype(int)
        human = qrels.assign(grade=(qrels["grade"] >= 2).astype(int)) if kind == "binary" else qrels
        sample = joined[["qid", "docid"]].merge(human, on=["qid", "docid"])
        judge = ndcg(joined[["qid", "docid", "label"]], f"judge-{kind}")
        expected_tau = kendalltau(ndcg(sample, f"sample-{kind}"), judge).statistic
        expected_full = kendalltau(ndcg(human, f"full-{kind}"), judge).statistic

        cell = ("published", "gpt-4o", kind, "dl21", "0", "human")
        got = ranking_rows(
            {cell: joined[["qid", "docid", "grade", "label"]]}, {"dl21": qrels}, {"dl21": runs}, ["nDCG@10"]
        )
        row = got.iloc[0]
        assert (row["pairs"], row["n_systems"]) == (len(joined), len(RUNS))
        assert row["tau"] == pytest.approx(expected_tau, abs=1e-12), kind
        assert row["tau_full"] == pytest.approx(expected_full, abs=1e-12), kind
        assert not math.isnan(row["tau_sample"])


def project_with(tmp_path: Path, monkeypatch, rankings: dict) -> Project:
    import yaml

    wd = make_workdir(tmp_path / "wd", "sensitivity")
    monkeypatch.chdir(wd)
    (wd / "runs").mkdir()
    for name in ("a", "b"):
        (wd / "runs" / f"input.{name}.txt").write_text("1 Q0 x 1 1.0 r\n")
    # the test config's own glob of DL21 runs (../shared/data, linked as shared/ by its workflow test)
    (wd / "shared/trec-dl-runs/dl21").mkdir(parents=True)
    (wd / "shared/trec-dl-runs/dl21/input.p_x.txt").write_text("1 Q0 x 1 1.0 r\n")
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump({"sensitivity": {"rankings": rankings}}), encoding="utf-8")
    return Project.load([str(extra)], wd)


def test_the_plan_schedules_the_rankings_of_the_runs_given(tmp_path, monkeypatch):
    plan = project_with(tmp_path, monkeypatch, {"runs": {"fx": ["runs/input.*.txt"]}}).plan("sensitivity")
    r = plan.rankings()
    assert type(r).from_param(r.param()) == r
    assert r.runs == (("dl21", "p_x"), ("fx", "a"), ("fx", "b")) and r.tables == ("dl21", "fx")
    assert {j[1] for j in r.judgments} == {"binary", "graded"}  # no pairwise file
    assert r.published == (("dl21", "dl21"),)
    assert r.measures == ("nDCG@10",)  # the ranking study's measures
    assert [c[2] for c in r.live] == ["short", "written"]
    files = plan.ranking_files()
    assert files["runs"][1:] == ["runs/input.a.txt", "runs/input.b.txt"] and len(files["prompts"]) == 1
    assert any(t.endswith("rankings_spread.md") for t in plan.targets())


@pytest.mark.parametrize(
    "rankings, message",
    [
        (
            {"runs": {"fx": ["runs/nothing*.txt"]}},
            r"'sensitivity\.rankings\.runs\.fx\[0\]': 'runs/nothing\*\.txt' matches no file",
        ),
        (
            {"runs": {"dl20": ["runs/*.txt"]}},
            r"'sensitivity\.rankings\.runs\.dl20': the study labels no pair",
        ),
        ({"runs": {"fx": ["runs/*.txt"]}, "measures": ["nDCG@x"]}, r"'sensitivity\.rankings\.measures'"),
    ],
)
def test_a_bad_rankings_section_names_the_key(tmp_path, monkeypatch, rankings, message):
    """A bad dataset or measure when the config is read; a glob matching nothing when the job is
    scheduled (its input function), as the ranking study's run files."""
    with pytest.raises(InputError, match=message):
        project_with(tmp_path, monkeypatch, rankings).plan("sensitivity").ranking_files()
