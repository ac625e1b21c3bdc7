"""The ranking study's self-consistency (``peras.repeats``: its live judges are PERAS's): each
repeat's labels as qrels give a system order; its tau against the reference order, the taus'
spread and the majority's tau, on hand-made runs and labels with Kendall's tau from
scipy.stats.kendalltau and precision at 2 counted by hand; a judge that parses asks the pool k
times against the counting fake OpenAI server; the plan's jobs, targets, check and estimate, and
a dry run of both studies' repeats."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import ROOT
from scipy.stats import kendalltau

from judgelab.data.tables import write_dataset, write_tsv
from judgelab.errors import InputError
from judgelab.studies.ranking.jobs import DatasetFiles, repeat_taus_job
from judgelab.studies.ranking.repeats import repeat_columns, spread
from judgelab.studies.ranking.scores import score_runs
from judgelab.studies.ranking.settings import RepeatTaus
from judgelab.wiring.facade import Project

# two topics of four passages each, with their human grades
GRADES = {("q1", "a"): 3, ("q1", "b"): 2, ("q1", "c"): 0, ("q1", "d"): 1}
GRADES |= {("q2", "e"): 2, ("q2", "f"): 0, ("q2", "g"): 1, ("q2", "h"): 0}
# five runs, each its top 2 of both topics
RUNS = {
    "r1": {"q1": ["a", "b"], "q2": ["e", "g"]},
    "r2": {"q1": ["a", "c"], "q2": ["e", "f"]},
    "r3": {"q1": ["c", "d"], "q2": ["f", "g"]},
    "r4": {"q1": ["b", "d"], "q2": ["g", "h"]},
    "r5": {"q1": ["c", "a"], "q2": ["h", "f"]},
}
# the judge's three repeats of every pair (None: no label); the judge's own labels are sample 0's
REPEATS = {
    ("q1", "a"): [3, 3, 2],
    ("q1", "b"): [2, 2, 2],
    ("q1", "c"): [0, 0, 0],
    ("q1", "d"): [1, 1, 0],
    ("q2", "e"): [2, 0, 1],
    ("q2", "f"): [1, 0, 1],
    ("q2", "g"): [0, None, 0],
    ("q2", "h"): [2, 1, None],
}
# their majority as committees take it: a tie to the lower label (e: three labels once each -> the
# lowest; h: 2 vs 1 -> 1); g's two labels of three are a quorum
MAJORITY = {k: v for k, v in zip(REPEATS, [3, 2, 0, 1, 0, 1, 0, 1])}


def p_at_2(labels: dict) -> dict[str, float]:
    """Each run's mean over topics of the share of its top 2 labelled 1 or more (an unlabelled
    pair: not relevant), counted by hand."""
    out = {}
    for run, tops in RUNS.items():
        per_topic = [sum((labels.get((q, d)) or 0) >= 1 for d in docs) / 2 for q, docs in tops.items()]
        out[run] = float(np.mean(per_topic))
    return out


def scipy_tau(reference: dict, judge: dict) -> float:
    runs = sorted(reference)
    return float(kendalltau([reference[r] for r in runs], [judge[r] for r in runs]).statistic)


def run_table(name: str) -> pd.DataFrame:
    rows = [
        {"qid": q, "docid": d, "rank": i + 1, "score": 10.0 - i, "run": name}
        for q, docs in RUNS[name].items()
        for i, d in enumerate(docs)
    ]
    return pd.DataFrame(rows)


def write_run(path, name: str) -> None:
    lines = [f"{r.qid} Q0 {r.docid} {r.rank} {r.score} {name}" for r in run_table(name).itertuples()]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def dataset(tmp_path):
    table = pd.DataFrame(
        [
            {
                "dataset": "hx",
                "qid": q,
                "query": f"query {q}",
                "docid": d,
                "passage": f"passage {d}",
                "grade": g,
            }
            for (q, d), g in GRADES.items()
        ]
    )
    write_dataset(table, tmp_path / "hx.tsv")
    runs = []
    for name in RUNS:
        write_run(tmp_path / f"{name}.txt", name)
        runs.append(str(tmp_path / f"{name}.txt"))
    # the dataset's scores table: every run under the human grades and the judge's own labels
    frames = {n: run_table(n) for n in RUNS}
    measure = "P(rel=1)@2"
    parts = []
    for qrels, labels in (("human", GRADES), ("j", {k: v[0] for k, v in REPEATS.items()})):
        q = pd.DataFrame(
            [{"qid": a, "docid": b, "relevance": v} for (a, b), v in labels.items() if v is not None]
        )
        parts.append(score_runs(frames, q, [measure]).assign(qrels=qrels))
    scores = pd.concat(parts, ignore_index=True)[["run", "qrels", "measure", "topic", "value", "judged_at_k"]]
    write_tsv(scores, tmp_path / "scores.tsv")
    rows = [
        {"dataset": "hx", "qid": q, "docid": d, "sample": s, "label": v}
        for (q, d), ls in REPEATS.items()
        for s, v in enumerate(ls)
    ]
    pd.DataFrame(rows).astype({"label": "Int64"}).to_csv(tmp_path / "j.tsv", sep="\t", index=False)
    return DatasetFiles(pairs=str(tmp_path / "hx.tsv"), runs=runs, scores=str(tmp_path / "scores.tsv"))


def test_each_repeat_s_tau_their_spread_and_the_majority_s_by_hand(dataset, tmp_path):
    settings = RepeatTaus(
        dataset="hx",
        judges=("j",),
        references=(("j", "human"),),
        measures=("P(rel=1)@2",),
        run_names=tuple(RUNS),
        repeats=3,
    )
    out = {"tsv": str(tmp_path / "repeats.tsv"), "md": str(tmp_path / "repeats.md")}
    got = repeat_taus_job(dataset, [str(tmp_path / "j.tsv")], out, settings)
    assert list(got.columns) == repeat_columns(3) and len(got) == 1
    row = got.iloc[0]
    human = p_at_2(GRADES)
    taus = [scipy_tau(human, p_at_2({k: v[s] for k, v in REPEATS.items()})) for s in range(3)]
    majority_tau = scipy_tau(human, p_at_2(MAJORITY))
    assert len(set(np.round([*taus, majority_tau], 6))) == 4  # four different orders
    for s in range(3):
        assert row[f"tau_{s}"] == pytest.approx(taus[s])
    assert row["kendall_tau"] == pytest.approx(taus[0])  # the judge's own labels are sample 0's
    assert row["tau_min"] == pytest.approx(min(taus)) and row["tau_max"] == pytest.approx(max(taus))
    assert row["tau_mean"] == pytest.approx(np.mean(taus))
    assert row["tau_sd"] == pytest.approx(np.std(taus, ddof=1))
    assert row["majority_tau"] == pytest.approx(majority_tau)
    assert (row["n_systems"], row["repeats"], row["reference"]) == (5, 3, "human")
    assert "majority_tau" in (tmp_path / "repeats.md").read_text()


@pytest.mark.slow
def test_a_parsing_judge_asks_the_pool_k_times_and_peras_pairs_are_hits(dataset, tmp_path):
    """Through the real OpenAI request building against the counting fake server: the pool (8
    pairs) labelled once, then samples 1 and 2 of every pair; a rerun sends nothing; PERAS's
    repeats of the same pairs with the same judge are the same cache entries."""
    from fake_openai import FakeOpenAI, ServerThread
    from test_api_backends import openai_spec

    from judgelab.data.tables import read_dataset
    from judgelab.llm.judge import Judge
    from judgelab.llm.prompts import load_template
    from judgelab.llm.session import JobContext
    from judgelab.project.repeats import read_repeats
    from judgelab.studies.peras.jobs import repeats_job
    from judgelab.studies.ranking.jobs import PoolFiles, judge_pool_job, repeats_pool_job
    from judgelab.studies.ranking.settings import Pooling

    fake = FakeOpenAI()
    pooling = Pooling(run_names=tuple(RUNS), depth=2)
    context = JobContext(str(tmp_path / "cache.sqlite"))
    with ServerThread(fake.app()) as srv:
        spec = openai_spec(srv.base_url, temperature=0.7)
        judge = Judge("fake", spec, template=load_template("peras/wo_cot"), max_tokens=8)
        labels = str(tmp_path / "pool.tsv")
        judge_pool_job(dataset.pairs, dataset.runs, labels, pooling, judge, context.named("judge"))
        assert fake.arrivals == 8
        files = PoolFiles(labels=labels, pairs=dataset.pairs, runs=dataset.runs)
        for _ in range(2):  # the second time: all cached
            out = str(tmp_path / "repeats.tsv")
            repeats_pool_job(files, out, pooling, judge, 3, context.named("repeats"))
            assert fake.arrivals == 8 + 16
        got = read_repeats(out)
        assert sorted(got["sample"].unique()) == [0, 1, 2] and len(got) == 24
        # PERAS repeating the same pairs (its judgment table: the pool's labels) asks nothing
        table = read_dataset(dataset.pairs)
        write_tsv(read_repeats(out).query("sample == 0").drop(columns="sample"), tmp_path / "j.tsv")
        outputs = {"repeats": str(tmp_path / "peras.tsv"), "majority": str(tmp_path / "m.tsv")}
        write_dataset(table, tmp_path / "pairs.tsv")
        repeats_job(
            str(tmp_path / "pairs.tsv"), str(tmp_path / "j.tsv"), outputs, judge, 3, context.named("peras")
        )
        assert fake.arrivals == 8 + 16


def test_the_spread_of_taus_leaves_undefined_ones_out():
    assert spread([0.2, 0.6, math.nan]) == pytest.approx(
        {"tau_mean": 0.4, "tau_sd": math.sqrt(0.08), "tau_min": 0.2, "tau_max": 0.6}
    )
    one = spread([0.5])
    assert one["tau_mean"] == 0.5 and math.isnan(one["tau_sd"])
    assert all(math.isnan(v) for v in spread([math.nan]).values())


def load(tmp_path, monkeypatch, model: dict, peras: dict) -> Project:
    monkeypatch.chdir(ROOT)
    cfg = {
        "models": {"tiny": model},
        "judges": ["tiny"],
        "datasets": {"dl19": {"source": "sample", "format": "trec"}},
        "personas": {"include": ["default"], "generation": {"enabled": False}},
        "peras": {"enabled": False, **peras},
        "overrating": {"enabled": False},
        "perturbations": {"enabled": False},
        "simulation": {"enabled": False},
        "ranking": {
            "enabled": True,
            "runs": {"dl19": {"source": "systems"}},
            "systems": {"length": {"kind": "length"}, "random": {"kind": "random", "seed": 0}},
            "template": "wo_cot",
            "ppi": {"enabled": False},
        },
    }
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(cfg))
    return Project.load([f], ROOT)


def test_the_live_judges_take_peras_repeats_and_its_check(tmp_path, monkeypatch):
    """One key, ``peras.repeats``, for the ranking study's live judges (PERAS's) too, with PERAS
    off; at k = 1 nothing more is planned."""
    one = load(tmp_path, monkeypatch, {"backend": "local"}, {})
    plan = one.plan("ranking")
    assert plan.repeated == [] and not any("repeats" in t for t in one.targets("ranking"))
    warm = load(tmp_path, monkeypatch, {"backend": "local", "temperature": 0.7}, {"repeats": 3})
    plan = warm.plan("ranking")
    assert plan.repeated == ["tiny"] and plan.repeats == 3
    assert warm.path("ranking_repeat_taus", dataset="dl19", ext="tsv") in warm.targets("ranking")
    assert not [j for j in warm.llm_jobs() if j.rule == "ranking_repeats"]  # drawn: no call
    assert plan.repeat_taus("dl19").references == (("tiny", "human"),)
    parse = load(tmp_path, monkeypatch, {"backend": "local"}, {"repeats": 3, "answer": "parse"})
    assert [j.wildcards for j in parse.llm_jobs() if j.rule == "ranking_repeats"][-1:] == [
        (("dataset", "dl19"), ("model", "tiny"))
    ]
    with pytest.raises(InputError, match=r"peras\.repeats.*models\.tiny\.temperature"):
        load(tmp_path, monkeypatch, {"backend": "local"}, {"repeats": 3})


@pytest.mark.slow
def test_the_estimate_counts_the_pool_k_times_for_a_parsing_judge(tmp_path, monkeypatch):
    from judgelab.wiring.estimate import estimate

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    gpt = {"backend": "openai", "model": "gpt-4o-mini", "temperature": 0.7}
    project = load(tmp_path, monkeypatch, gpt, {"repeats": 3})
    table, _ = estimate(project, directory=ROOT, cache_path=tmp_path / "none.sqlite")
    calls = table.groupby("stage")["calls"].sum()  # (the default config's dl21 runs as well)
    n = calls["ranking_judge"]
    assert n > 0 and calls["ranking_repeats"] == 2 * n  # samples 1 and 2 of the pool


@pytest.mark.slow
def test_the_workflow_plans_both_studies_repeats(tmp_path):
    """A dry run of ``.test/ranking`` with PERAS on and ``peras.repeats: 3`` at temperature 0.7 (the
    embedded model: drawn repeats): PERAS's draws and its majority judge's metrics group, the
    ranking pool's draws and its repeats table; no repeats job asks the model."""
    from snakerun import dry_run_jobs, make_workdir, output, snakemake

    wd = make_workdir(tmp_path / "wf", "ranking")
    overlay = {
        "models": {"smollm2": {"temperature": 0.7}},
        "personas": {"include": ["default"]},
        "peras": {
            "enabled": True,
            "repeats": 3,
            "datasets": ["fx"],
            "templates": {"wo_cot": {"template": "peras/wo_cot", "max_tokens": 4}},
            "classifier": {"dataset": None},
        },
    }
    (wd / "repeats.yaml").write_text(yaml.safe_dump(overlay))
    targets = ["results/peras/metrics/metrics.tsv", "results/ranking/fx/repeats.tsv"]
    dry = snakemake(wd, "-n", *targets, "--configfile", str(wd / "repeats.yaml"))
    assert dry.returncode == 0, output(dry)[-3000:]
    jobs = dry_run_jobs(output(dry))
    ours = {"dataset": "fx", "model": "smollm2"}
    assert [wc for rule, wc in jobs if rule == "ranking_repeat_draws"] == [ours]
    assert [wc for rule, wc in jobs if rule == "ranking_repeat_taus"] == [{"dataset": "fx"}]
    assert [wc for rule, wc in jobs if rule == "peras_repeat_draws"] == [
        {**ours, "template": "wo_cot", "persona": "default"}
    ]
    groups = [wc["model"] for rule, wc in jobs if rule == "peras_group_metrics"]
    assert sorted(groups) == ["flip", "smollm2", "smollm2+majority@3"]  # an imported judge has no repeats
    assert not any(rule in ("ranking_repeats", "peras_repeats") for rule, _ in jobs)
