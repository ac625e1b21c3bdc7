"""A persona committee of the ranking study for real (issue 28, item 6): the `.test/ranking`
workflow with the embedded model labelling the pool under the default persona and under LA too
(`ranking_persona_judge`), the committee of the two a judge of the leaderboard, its labels the
members' combined by hand, its cost the two members' summed; editing the committee's rule reruns
its job and the tables above it, no labelling job."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import needs_model
from snakerun import dry_run_jobs, make_workdir, snakemake

pytestmark = pytest.mark.slow

OVERLAY = """ranking:
  candidates: judged
  committees:
    pc: {judges: [smollm2], personas: [default, LA], rule: %s}
"""


def read(path):
    return pd.read_csv(path, sep="\t", dtype={"qid": str, "docid": str, "judge": str})


@needs_model
def test_a_persona_committee_ranks_systems_beside_its_judge(tmp_path):
    wd = make_workdir(tmp_path / "pc", "ranking")
    over = wd / "config" / "pc.yaml"
    over.write_text(OVERLAY % "majority")
    args = ("--configfile", str(wd / "config" / "config.yaml"), str(over))
    target = "results/ranking/tables/leaderboard.tsv"  # the tables the committee enters, no figure
    run = snakemake(wd, target, *args)
    assert run.returncode == 0, run.stderr[-4000:]
    res = wd / "results" / "ranking"
    own = read(res / "fx" / "labels" / "smollm2.tsv").set_index(["qid", "docid"])["label"]
    la = read(res / "fx" / "labels" / "smollm2" / "LA.tsv").set_index(["qid", "docid"])["label"]
    pc = read(res / "fx" / "labels" / "pc.tsv").set_index(["qid", "docid"])
    assert len(pc) == len(own) == len(la) == 8
    for k, r in pc.iterrows():
        a, b = own[k], la[k]
        assert r["labels"] == f"{a} {b}" and r["label"] == min(a, b)  # a split of two: the lower
    board = read(res / "tables" / "leaderboard.tsv")
    row = board[(board["judge"] == "pc") & (board["measure"] == "nDCG@10")].iloc[0]
    mine = board[(board["judge"] == "smollm2") & (board["measure"] == "nDCG@10")].iloc[0]
    assert row["cost_source"] == "committee of smollm2, smollm2@LA"
    la_calls = len(read(res / "fx" / "labels" / "smollm2" / "LA.tsv"))
    assert row["calls"] == mine["calls"] + la_calls == 16
    log = (wd / "results" / "logs" / "ranking" / "fx" / "judge" / "smollm2" / "LA.log").read_text()
    assert "ranking_persona_judge fx/smollm2/LA: 8 new calls" in log
    # a new rule: the committee and what reads it, no model call
    over.write_text(OVERLAY % "mean")
    dry = snakemake(wd, "-n", target, *args)
    assert dry.returncode == 0, dry.stderr[-3000:]
    rules = {r for r, _ in dry_run_jobs(dry.stdout)}
    assert "ranking_committee" in rules and "ranking_correlations" in rules
    assert not rules & {"ranking_judge", "ranking_persona_judge", "ranking_system"}
