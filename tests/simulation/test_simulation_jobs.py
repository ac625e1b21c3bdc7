"""The study's job functions: prepare/plan on JSONL data with signals, and the metrics, stats and
report jobs on prediction tables of a constructed factorial design (the real model's prediction
jobs run in tests/simulation/test_simulation_e2e.py)."""

import json
import random
from pathlib import Path

import pandas as pd
import pytest

from judgelab.data.tables import write_tsv
from judgelab.errors import InputError
from judgelab.studies.simulation import jobs as sj
from judgelab.studies.simulation.cascade import PREDICTION_COLUMNS
from judgelab.studies.simulation.data import plan_types, read_jsonl
from judgelab.studies.simulation.report import CAPTIONS
from judgelab.studies.simulation.settings import (
    BaselineSettings,
    Design,
    MetricSettings,
    Selection,
    StatsSettings,
    TableSettings,
)

EVALUATORS = ["e1", "e2", "e3", "e4"]
#: the metric tables the statistics job reads, and those the figures job reads
STATS_INPUTS = ("predictions", "accuracy", "accuracy_eligible", "control", "control_items")
FIGURE_INPUTS = ("accuracy", "control", "traits", "confusion")


def named(folder, files) -> dict[str, str]:
    """The files of a folder by their name without the extension (a rule's named files)."""
    return {Path(f).stem: str(Path(folder) / f) for f in files}


def stats_inputs(metrics) -> dict[str, str]:
    return {k: str(Path(metrics) / f"{k}.tsv") for k in STATS_INPUTS}


def figure_inputs(metrics) -> dict[str, str]:
    return {k: str(Path(metrics) / f"{k}.tsv") for k in FIGURE_INPUTS}


def figure_outputs(folder) -> dict[str, str]:
    """The figures job's outputs: each figure's .png by its name, its .pdf as ``<name>_pdf``."""
    out = {f: str(Path(folder) / f"{f}.png") for f in sj.REPORT_FIGURES}
    return {**out, **{f"{f}_pdf": str(Path(folder) / f"{f}.pdf") for f in sj.REPORT_FIGURES}}


def table_outputs(folder) -> dict[str, str]:
    """The tables job's outputs: each table's .tsv by its name, its .md as ``<name>_md``."""
    out = {t: str(Path(folder) / f"{t}.tsv") for t in sj.REPORT_TABLES}
    return {**out, **{f"{t}_md": str(Path(folder) / f"{t}.md") for t in sj.REPORT_TABLES}}


def make_records(tmp_path, n_items=14, telemetry_for_all=True):
    rng = random.Random(5)
    lines = []
    for k in range(n_items):
        truth = rng.choice("ANB")
        for ev in EVALUATORS:
            label = truth if rng.random() < 0.7 else rng.choice("ANB")
            obj = {
                "evaluator": ev,
                "item": f"it{k:02d}",
                "context": f"question {k}",
                "response_a": f"A{k}",
                "response_b": f"B{k}",
                "label": label,
                "reasoning": [{"section": "response evaluation", "content": f"{ev} on {k}"}],
            }
            if telemetry_for_all or k % 2:
                obj["telemetry"] = [{"t": 0, "event": "reveal", "target": "response_a"}]
            lines.append(json.dumps(obj))
    p = tmp_path / "records.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_prepare_and_plan(tmp_path):
    src = make_records(tmp_path, telemetry_for_all=False)
    out = tmp_path / "prep"
    summary = sj.prepare_job(
        str(src),
        out / "records.jsonl",
        out / "splits.tsv",
        out / "evaluators.tsv",
        Selection("jsonl", pool=6, validation=8, seed=3, min_neutral=2),
    )
    assert list(summary["evaluator"]) == EVALUATORS and (summary["n_pool"] == 6).all()
    assert (summary["direction_only"] == (summary["pool_N"] < 2)).all()
    assert len(read_jsonl(out / "records.jsonl")) == 56
    types, skipped = plan_types(["J", "J+IT", "J+RR", "J+IT+RR"], read_jsonl(out / "records.jsonl"))
    assert types == ["J", "J+RR"] and set(skipped) == {"J+IT", "J+IT+RR"}
    assert "28 of 56 have it" in skipped["J+IT"]
    # config errors of the data name the evaluator set's full key
    with pytest.raises(
        InputError, match=r"config key 'simulation.datasets.toy.evaluators': evaluators \['nobody'\]"
    ):
        sj.prepare_job(
            str(src),
            out / "r.jsonl",
            out / "s.tsv",
            out / "e.tsv",
            Selection("jsonl", pool=6, validation=8, seed=3, evaluators=("nobody",)),
            dataset="toy",
        )
    with pytest.raises(
        InputError, match=r"config key 'simulation.datasets.toy.validation': evaluator 'e1' judged 14"
    ):
        sj.prepare_job(
            str(src),
            out / "r.jsonl",
            out / "s.tsv",
            out / "e.tsv",
            Selection("jsonl", pool=6, validation=9, seed=3),
            dataset="toy",
        )


def fake_predictions(records, splits, accuracy, seed):
    """A prediction table in the cascade's format whose labels are right with probability
    ``accuracy`` (else another label)."""
    rng = random.Random(seed)
    gold = {(r.evaluator, r.item): r.label for r in records}
    rows = []
    for ev, item in splits.loc[splits.role == "validation", ["evaluator", "item"]].itertuples(index=False):
        g = gold[(ev, item)]
        pred = g if rng.random() < accuracy else rng.choice([x for x in "ANB" if x != g])
        row = dict.fromkeys(PREDICTION_COLUMNS)
        row.update(evaluator=ev, item=item, gold=g, pred=pred, answered=True, direction_only=False)
        rows.append(row)
    return pd.DataFrame(rows, columns=PREDICTION_COLUMNS)


def test_metrics_stats_report_on_a_factorial_design(tmp_path):
    src = make_records(tmp_path)
    d = tmp_path / "sim"
    sj.prepare_job(
        str(src),
        d / "records.jsonl",
        d / "splits.tsv",
        d / "evaluators.tsv",
        Selection("jsonl", pool=6, validation=8, seed=0),
        d / "split_report.tsv",
    )
    recs = read_jsonl(d / "records.jsonl")
    from judgelab.studies.simulation.splits import read_splits

    splits = read_splits(d / "splits.tsv")
    cells = [{"model": "m", "demo_type": "base", "shots": 0}]
    cells += [{"model": "m", "demo_type": t, "shots": k} for t in ("J", "J+RR") for k in (1, 2, 4)]
    paths = []
    for i, c in enumerate(cells):
        acc = 0.4 + 0.05 * (c["demo_type"] == "J+RR") + 0.03 * c["shots"]
        p = d / "predictions" / c["model"] / c["demo_type"] / f"{c['shots']}.tsv"
        write_tsv(fake_predictions(recs, splits, acc, i), p)
        paths.append(str(p))
    sj.baselines_job(
        str(d / "records.jsonl"), str(d / "splits.tsv"), str(d / "baselines.tsv"), BaselineSettings(seed=1)
    )
    # the design as the rule carries it (its param's text)
    design = Design.from_param(json.dumps({"cells": cells, "skipped": {"J+IT": "no telemetry"}}))
    out = sj.metrics_job(
        str(d / "records.jsonl"),
        paths,
        str(d / "baselines.tsv"),
        design,
        MetricSettings(),
        named(d / "metrics", sj.METRIC_FILES),
    )
    for name in sj.METRIC_FILES:
        assert (d / "metrics" / name).exists()
    acc = out["accuracy"]
    # every cell and reference predictor scored for every evaluator on its 8 validation items
    assert len(acc) == (7 + 4) * 4 and (acc["n"] == 8).all()
    # the oracle has no label for items without a consensus; every other predictor answers all
    assert (acc.loc[acc.method != "oracle_consensus", "coverage"] == 1).all()
    from judgelab.studies.simulation.baselines import consensus

    cons = consensus(recs)
    val = splits[splits.role == "validation"]
    want = val["item"].isin(list(cons)).groupby(val["evaluator"]).mean()
    oracle = acc[acc.method == "oracle_consensus"].set_index("evaluator")["coverage"]
    assert oracle.to_dict() == pytest.approx(want.to_dict())  # answers only where there is a consensus
    cell = acc[(acc.demo_type == "J+RR") & (acc.shots == 4)].set_index("evaluator")["accuracy"]
    pred = pd.read_csv(paths[cells.index({"model": "m", "demo_type": "J+RR", "shots": 4})], sep="\t")
    assert cell.to_dict() == pytest.approx((pred.pred == pred.gold).groupby(pred.evaluator).mean().to_dict())
    # the control exists for every PersonaJudge cell and evaluator (coordinated splits share items)
    assert len(out["control"]) == 6 * 4 and (out["control"]["n_matched"] == 8).all()
    assert len(out["control_items"]) == 6 * 32
    draws = out["random_draws"]
    assert draws["draw"].nunique() == 200 and set(draws["items"]) == {"validation", "consensus-eligible"}
    conf = out["confusion"]
    assert set(conf["group"]) >= {
        "PersonaJudge | m | J+RR | 4-shot",
        "PersonaJudge | m | all cells",
        "PersonaJudge | all models | all cells",
        "Base Judge | m",
        "Oracle consensus",
    }
    assert "Random Selection" not in set(conf["group"])  # one draw is no confusion matrix
    assert conf[conf.group == "PersonaJudge | m | all cells"]["count"].sum() == 6 * 32

    stats = sj.stats_job(
        **stats_inputs(d / "metrics"), settings=StatsSettings(), outputs=named(d / "stats", sj.STATS_FILES)
    )
    for name in sj.STATS_FILES:
        assert (d / "stats" / name).exists()
    vb = stats["versus_base"]
    # every cell against the Base Judge by four tests: Wilcoxon and paired t over the four
    # evaluators, the stratified permutation and McNemar over their 32 judgments
    assert len(vb) == 6 * 4 and {"p_bh", "p_holm", "significant_bh", "min_p", "reading"} <= set(vb.columns)
    assert vb.groupby("test").size().to_dict() == {
        "Wilcoxon signed-rank": 6,
        "paired t": 6,
        "stratified permutation": 6,
        "McNemar exact": 6,
    }
    w = vb[vb.test == "Wilcoxon signed-rank"]
    # four evaluators: at best 2 / 2^4 (fewer where an evaluator's difference is 0) > alpha
    assert (w["min_p"] == [2 / 2**k for k in w["n_discordant"]]).all() and (w["min_p"] >= 0.125).all()
    assert w["reading"].str.startswith("cannot reject at n = 4").all()
    assert (vb.loc[vb.test == "stratified permutation", "n"] == 32).all()
    f = stats["factors"]
    omnibus = f[(f.family == "omnibus") & (f.factor == "cells")].set_index("unit")
    assert omnibus.loc["evaluator", "k"] == 6 and omnibus.loc["item", "n"] == 32
    imp = stats["improvements"].set_index(["factor", "level"])
    assert imp.loc[("all", "all"), "configurations"] == 6
    assert imp.loc[("all", "all"), "improve"] == int((w["delta"] > 0).sum())
    chance = stats["chance"]
    assert set(chance.loc[chance.method == "personajudge", "level"]) == {
        "all",
        "J",
        "J+RR",
        "m",
        "1",
        "2",
        "4",
    }

    design = out["design"]
    assert list(design["status"]) == ["run"] * 7 + ["skipped"] and design["reason"].iloc[0] == "-"
    assert design.iloc[-1].to_dict() == {
        "model": "-",
        "demo_type": "J+IT",
        "shots": "-",
        "status": "skipped",
        "reason": "no telemetry",
    }

    sj.annotators_job(str(d / "records.jsonl"), str(d / "splits.tsv"), str(d / "annotators.tsv"))
    sj.tables_job(
        {"toy": str(d / "metrics")},
        {"toy": str(d / "stats")},
        table_outputs(d / "report" / "tables"),
        TableSettings(),
        data_dirs={"toy": str(d)},
        tasks={"toy": "helpfulness"},
    )
    assert sj.REPORT_TABLES == tuple(CAPTIONS)
    for t in sj.REPORT_TABLES:
        md = (d / "report" / "tables" / f"{t}.md").read_text()
        assert md.startswith(CAPTIONS[t] + "\n\n| ")
        assert t in ("factors", "cross_task") or md.split("\n")[2].startswith("| dataset |"), t
        assert (d / "report" / "tables" / f"{t}.tsv").exists()
    assert "no evaluator judged two tasks" in (d / "report" / "tables" / "cross_task.md").read_text()
    core = pd.read_csv(d / "report" / "tables" / "core.tsv", sep="\t", dtype=str, keep_default_na=False)
    assert list(core.columns) == [
        "dataset",
        "method",
        "configuration",
        "accuracy",
        "coverage",
        "gain_vs_base",
    ]
    rnd = core[core.method == "Random Selection"]
    assert rnd.iloc[0]["accuracy"] == "0.333" and "expected accuracy 1/3" in rnd.iloc[0]["configuration"]
    assert rnd.iloc[1]["configuration"].startswith("200 seeded draws")
    assert "mean over 1 model" in set(core["configuration"])
    factors = pd.read_csv(d / "report" / "tables" / "factors.tsv", sep="\t")
    assert list(factors["level"]) == ["J", "J+RR", "m", "1-shot", "2-shot", "4-shot"]
    sj.figures_job(
        **figure_inputs(d / "metrics"),
        outputs=figure_outputs(d / "report" / "figures" / "toy"),
        dataset="toy",
        metric="accuracy",
    )
    for f in sj.REPORT_FIGURES:
        assert (d / "report" / "figures" / "toy" / f"{f}.png").stat().st_size > 1000
        assert (d / "report" / "figures" / "toy" / f"{f}.pdf").exists()


def test_download_job_via_file_url(tmp_path):
    from judgelab.data.resources import resources_dir

    sample = resources_dir() / "sample" / "pandalm" / "testset-v1.json"
    out = tmp_path / "raw" / "testset-v1.json"
    sj.download_job(sample.resolve().as_uri(), str(out), "pandalm")
    assert out.read_bytes() == sample.read_bytes()
    src = make_records(tmp_path)
    sj.download_job(src.resolve().as_uri(), str(tmp_path / "copy.jsonl"), "jsonl")
    with pytest.raises(InputError, match=r"copy2\.jsonl:1: invalid JSON"):
        sj.download_job(sample.resolve().as_uri(), str(tmp_path / "copy2.jsonl"), "jsonl")
    assert not (tmp_path / "copy2.jsonl").exists()


TWO_TASKS = Path(__file__).parents[1] / "fixtures" / "simulation" / "two_tasks.jsonl"


def test_cross_task_analysis_on_the_two_task_fixture(tmp_path):
    """Two evaluator sets on one jsonl file, one per task: the evaluators who judged both are
    compared across the tasks (PersonaJudge Figure 3)."""
    from scipy import stats as sps

    metrics_dirs, stats_dirs, data_dirs = {}, {}, {}
    tasks = {"help": "helpfulness", "harm": "harmlessness"}
    for name, task in tasks.items():
        d = tmp_path / name
        sj.prepare_job(
            str(TWO_TASKS),
            d / "records.jsonl",
            d / "splits.tsv",
            d / "evaluators.tsv",
            Selection("jsonl", pool=6, validation=8, seed=0, task=task),
            d / "split_report.tsv",
            dataset=name,
        )
        recs = read_jsonl(d / "records.jsonl")
        assert {r.task for r in recs} == {task} and len(recs) == 70  # 14 items x 5 evaluators
        assert plan_types(["J", "J+IT", "J+RR", "J+IT+RR"], recs) == (["J", "J+IT", "J+RR", "J+IT+RR"], {})
        from judgelab.studies.simulation.splits import read_splits

        splits = read_splits(d / "splits.tsv")
        cells = [{"model": "m", "demo_type": "base", "shots": 0}]
        cells += [{"model": "m", "demo_type": t, "shots": 2} for t in ("J", "J+RR")]
        paths = []
        for i, c in enumerate(cells):
            p = d / "predictions" / c["demo_type"] / f"{c['shots']}.tsv"
            write_tsv(fake_predictions(recs, splits, 0.5 + 0.1 * i, i + 10 * (name == "harm")), p)
            paths.append(str(p))
        sj.baselines_job(
            str(d / "records.jsonl"), str(d / "splits.tsv"), str(d / "baselines.tsv"), BaselineSettings()
        )
        sj.metrics_job(
            str(d / "records.jsonl"),
            paths,
            str(d / "baselines.tsv"),
            Design(tuple(cells)),
            MetricSettings(),
            named(d / "metrics", sj.METRIC_FILES),
        )
        sj.stats_job(
            **stats_inputs(d / "metrics"),
            settings=StatsSettings(permutations=500),
            outputs=named(d / "stats", sj.STATS_FILES),
        )
        sj.annotators_job(str(d / "records.jsonl"), str(d / "splits.tsv"), str(d / "annotators.tsv"))
        metrics_dirs[name], stats_dirs[name], data_dirs[name] = str(d / "metrics"), str(d / "stats"), str(d)
    out = tmp_path / "tables"
    sj.tables_job(
        metrics_dirs, stats_dirs, table_outputs(out), TableSettings(), data_dirs=data_dirs, tasks=tasks
    )
    corr = pd.read_csv(out / "cross_task.tsv", sep="\t").set_index("measure")
    # ann1-ann4 judged both tasks; ann5 and ann6 one each
    assert (corr["evaluators"] == 4).all() and (corr["n"] == 4).all()
    recs = read_jsonl(TWO_TASKS)

    def neutral(task):
        return [
            sum(r.label == "N" for r in recs if r.task == task and r.evaluator == ev) / 14
            for ev in ("ann1", "ann2", "ann3", "ann4")
        ]

    ref = sps.pearsonr(neutral("helpfulness"), neutral("harmlessness"))
    assert corr.loc["neutral_rate", "r"] == pytest.approx(ref.statistic)
    assert corr.loc["neutral_rate", "p"] == pytest.approx(ref.pvalue)  # 4 evaluators: p is given
    points = sj.cross_task_figure_job(
        metrics_dirs, tasks, str(tmp_path / "f.png"), str(tmp_path / "f.pdf"), "accuracy"
    )
    assert sorted(points["evaluator"]) == ["ann1", "ann2", "ann3", "ann4"]
    assert (tmp_path / "f.png").stat().st_size > 1000 and (tmp_path / "f.pdf").exists()
    ann = pd.read_csv(out / "annotators.tsv", sep="\t")
    assert set(ann["dataset"]) == {"help", "harm"}
    # a task no record names is an error naming the key
    with pytest.raises(
        InputError, match=r"config key 'simulation.datasets.x.task': no record of task 'honesty'"
    ):
        sj.prepare_job(
            str(TWO_TASKS),
            tmp_path / "r.jsonl",
            tmp_path / "s.tsv",
            tmp_path / "e.tsv",
            Selection("jsonl", pool=6, validation=8, seed=0, task="honesty"),
            dataset="x",
        )
