"""A tiny end-to-end run of the study's job functions on the bundled PandaLM sample with the
embedded model (SmolLM2-135M): prepare, the Base Judge and a 1-shot J cell (labels read from the
logits), a Base Judge cell on the paper's parse path, baselines, metrics, statistics and report;
a rerun answers from the cache."""

import pandas as pd
import pytest
from conftest import needs_model
from simulation.test_simulation_jobs import figure_inputs, figure_outputs, named, stats_inputs, table_outputs

from judgelab.cache.store import RequestCache
from judgelab.data.resources import resources_dir
from judgelab.llm.session import JobContext
from judgelab.studies.simulation import jobs as sj
from judgelab.studies.simulation.cascade import read_predictions
from judgelab.studies.simulation.prompt import SimulationPrompt
from judgelab.studies.simulation.settings import (
    BaselineSettings,
    CascadeJudge,
    CascadeSettings,
    Design,
    MetricSettings,
    Selection,
    StatsSettings,
    TableSettings,
)

SAMPLE = resources_dir() / "sample" / "pandalm" / "testset-v1.json"
#: one thread: the other test files run on the other core (pytest-xdist)
MODEL = {"name": "smollm2", "backend": "local", "n_ctx": 2048, "threads": 1}


@pytest.mark.slow
@needs_model
def test_end_to_end_on_the_pandalm_sample(tmp_path):
    d = tmp_path / "simulation" / "pandalm"
    cache = tmp_path / "cache.sqlite"
    # pool 20 / validation 4 (split seed 1: whole instructions, interleaved by neutral labels);
    # annotators 1 and 3 have 8 neutral labels in their pool, annotator 2 has 9: with min_neutral
    # 9 two evaluators are simulated direction-only, so both rounds run
    summary = sj.prepare_job(
        str(SAMPLE),
        d / "records.jsonl",
        d / "splits.tsv",
        d / "evaluators.tsv",
        Selection("pandalm", pool=20, validation=4, seed=1, min_neutral=9),
        d / "split_report.tsv",
    )
    assert summary.set_index("evaluator")["direction_only"].to_dict() == {
        "annotator1": True,
        "annotator2": False,
        "annotator3": True,
    }
    cells = [
        {"model": "smollm2", "demo_type": "base", "shots": 0},
        {"model": "smollm2", "demo_type": "J", "shots": 1},
    ]
    settings = {"task": "helpfulness", "answer": "auto", "max_tokens": 8, "seed": 0, "min_neutral": 9}

    prompt = SimulationPrompt.load()

    def predict(cell, cfg=settings, tag="", splits=d / "splits.tsv"):
        p = d / f"predictions{tag}" / cell["model"] / cell["demo_type"] / f"{cell['shots']}.tsv"
        # the judge as the rule carries it (its param's text); answer auto: the job resolves it
        judge = CascadeJudge(
            "smollm2", MODEL, prompt.texts_for("helpfulness", cell["demo_type"]), CascadeSettings(**cfg)
        )
        sj.predict_job(
            str(d / "records.jsonl"),
            str(splits),
            str(p),
            str(d / f"demos{tag}" / cell["model"] / cell["demo_type"] / f"{cell['shots']}.tsv"),
            CascadeJudge.from_param(judge.param()),
            cell["demo_type"],
            str(cell["shots"]),
            JobContext(str(cache)),
        )
        return p

    paths = [predict(c) for c in cells]
    one = read_predictions(paths[1]).set_index("evaluator")
    assert len(one) == 12 and one["answered"].all()  # logits always give a rating
    # direction-only evaluators: no round 1, labels A or B only
    dir_only = one.loc[["annotator1", "annotator3"]]
    assert dir_only["r1_answer"].isna().all() and dir_only["r2_asked"].all()
    assert dir_only["pred"].isin(["A", "B"]).all()
    assert ((dir_only["r2_p1"] + dir_only["r2_p2"]) - 1).abs().max() < 1e-6
    a2 = one.loc["annotator2"]
    assert a2["r1_rating"].notna().all()
    assert (a2["r2_asked"] == (a2["r1_rating"] == "2")).all()  # round 2 only after a preference
    assert (a2.loc[a2["r1_rating"] == "1", "pred"] == "N").all()
    demos = pd.read_csv(d / "demos" / "smollm2" / "J" / "1.tsv", sep="\t", dtype=str)
    assert set(demos.loc[demos.evaluator != "annotator2", "round"]) == {"2"}
    assert sorted(demos.loc[demos.evaluator == "annotator2", "round"]) == ["1", "2"]

    # the paper's parse path (verbatim prompt, <judgment>X</judgment> parsed from the generated
    # text) for annotator 2's first two validation items: an unparsable answer is missing and
    # counted, and round 2 is asked only after a parsed preference
    splits = pd.read_csv(d / "splits.tsv", sep="\t", dtype=str)
    first_two = splits.loc[splits.role == "validation", "item"][:2]
    few = splits[
        (splits.evaluator == "annotator2") & ((splits.role == "pool") | splits["item"].isin(first_two))
    ]
    few.to_csv(d / "splits_few.tsv", sep="\t", index=False)
    parse = predict(
        cells[0], {**settings, "answer": "parse", "max_tokens": 8}, tag="_parse", splits=d / "splits_few.tsv"
    )
    pp = read_predictions(parse)
    assert len(pp) == 2 and pp["r1_answer"].notna().all()
    assert (pp["r2_asked"] == (pp["r1_rating"] == "2")).all()
    assert (pp["answered"] == pp["pred"].notna()).all()
    assert pp.loc[pp["r1_rating"].isna(), "pred"].isna().all()

    # a rerun sends nothing: every request is in the cache
    n_cached = len(RequestCache(cache))
    before = [read_predictions(p) for p in paths]
    paths2 = [predict(c) for c in cells]
    assert len(RequestCache(cache)) == n_cached
    for a, p in zip(before, paths2):
        b = read_predictions(p)
        assert a["pred"].equals(b["pred"]) and (b["cache_hits"] > 0).all()

    sj.baselines_job(
        str(d / "records.jsonl"), str(d / "splits.tsv"), str(d / "baselines.tsv"), BaselineSettings()
    )
    metrics = sj.metrics_job(
        str(d / "records.jsonl"),
        [str(p) for p in paths],
        str(d / "baselines.tsv"),
        Design(tuple(cells)),
        MetricSettings(),
        named(d / "metrics", sj.METRIC_FILES),
        splits=str(d / "splits.tsv"),
    )
    acc = metrics["accuracy"]
    assert set(acc["method"]) == {
        "base_judge",
        "personajudge",
        "random",
        "oracle_consensus",
        "global_majority",
        "evaluator_majority",
    }
    pj = acc[acc.method == "personajudge"].set_index("evaluator")["accuracy"]
    assert pj.to_dict() == pytest.approx((one["pred"] == one["gold"]).groupby(level=0).mean().to_dict())
    stats = sj.stats_job(
        **stats_inputs(d / "metrics"),
        settings=StatsSettings(permutations=1000),
        outputs=named(d / "stats", sj.STATS_FILES),
    )
    # three evaluators: the evaluator-level Wilcoxon cannot reject, and the tables say so
    w = stats["versus_base"].query("test == 'Wilcoxon signed-rank'").iloc[0]
    assert w["reading"] == "no test" or w["reading"].startswith("cannot reject at n = 3")
    sj.annotators_job(str(d / "records.jsonl"), str(d / "splits.tsv"), str(d / "annotators.tsv"))
    sj.tables_job(
        {"pandalm": str(d / "metrics")},
        {"pandalm": str(d / "stats")},
        table_outputs(tmp_path / "tables"),
        TableSettings(),
        data_dirs={"pandalm": str(d)},
    )
    assert (tmp_path / "tables" / "annotators.md").read_text().count("| Cohen's kappa |") == 3  # three pairs
    assert (tmp_path / "tables" / "baselines.md").read_text().count("| pandalm |") >= 6
    sj.figures_job(
        **figure_inputs(d / "metrics"),
        outputs=figure_outputs(tmp_path / "figures"),
        dataset="pandalm",
        metric="accuracy",
    )
    assert (tmp_path / "figures" / "accuracy_by_shots.png").exists()
