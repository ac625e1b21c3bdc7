"""The ranking study for real: the `.test/ranking` workflow with the embedded model (every score
against pytrec_eval called on the run files directly; a rerun has nothing to do), pairs PERAS
already judged are cache hits for the ranking judge (0 new calls), and over the 63 runs submitted
to TREC DL 2021 an imported judge gives its correlations with no LLM call, each run's nDCG@10
equals trec_eval's, and adding one run reruns the dataset's scoring job, which scores only that
run, and the tables above it; the runs also download through `file://` byte for byte."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
import yaml
from conftest import needs_model
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from snakerun import dry_run_jobs, make_workdir, output, snakemake

from judgelab.data.readers import read_run
from judgelab.data.tables import read_dataset
from judgelab.wiring.facade import Project

pytestmark = pytest.mark.slow

TABLE_EXTS = ("tsv", "md", "tex", "html")


def read_tsv(path: Path) -> pd.DataFrame:
    return pd.read_csv(
        path,
        sep="\t",
        dtype={"topic": str, "qid": str, "docid": str, "run": str},
        keep_default_na=False,
        na_values=[""],
    )


def run_dict(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for r in read_run(path).itertuples():
        out.setdefault(r.qid, {})[r.docid] = float(r.score)
    return out


def pytrec(qrels: dict, run: dict, measure: str, **kw) -> dict[str, float]:
    key = {"ndcg_cut.10": "ndcg_cut_10", "P.5": "P_5"}[measure]
    return {
        t: v[key] for t, v in pytrec_eval.RelevanceEvaluator(qrels, {measure}, **kw).evaluate(run).items()
    }


def qrels_dict(pairs) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for qid, docid, rel in pairs:
        out.setdefault(str(qid), {})[str(docid)] = int(rel)
    return out


def topic_values(scores: pd.DataFrame, run: str, qrels: str, measure: str) -> dict[str, float]:
    sel = scores[(scores["run"] == run) & (scores["qrels"] == qrels) & (scores["measure"] == measure)]
    return dict(zip(sel["topic"], sel["value"]))


@needs_model
def test_the_test_workflow_with_the_embedded_model(tmp_path):
    wd = make_workdir(tmp_path / "ranking", "ranking")
    run = snakemake(wd, "ranking", timeout=3000)
    assert run.returncode == 0, output(run)[-4000:]
    res = wd / "results" / "ranking"
    for ext in TABLE_EXTS:
        assert (res / "tables" / f"leaderboard.{ext}").stat().st_size > 0
    for judge in ("smollm2", "flip"):
        for slug in ("nDCG@10", "P_rel_2_@5"):
            for kind in ("scores", "ranks"):
                for ext in ("png", "pdf"):
                    assert (res / "fx" / "figures" / kind / judge / f"{slug}.{ext}").stat().st_size > 1000

    # the judge labelled the 16 pool pairs (candidates all: 8 judged, 8 judged for the other topic)
    labels = read_tsv(res / "fx" / "labels" / "smollm2.tsv")
    assert len(labels) == 16 and (labels["label"].notna() == labels["parsed"]).all()
    pool = read_tsv(res / "fx" / "pool.tsv")
    assert len(pool) == 16 and pool["human"].notna().sum() == 8 and pool["text_known"].all()

    # every score is pytrec_eval's on the run file (human, the imported judge, the filled reference)
    table = read_dataset(wd / "results" / "datasets" / "fx.tsv")
    human = qrels_dict(zip(table["qid"], table["docid"], table["grade"]))
    flip_lines = (line.split() for line in (wd / "imports" / "flip.qrels").read_text().splitlines())
    flip = qrels_dict((qid, docid, grade) for qid, _, docid, grade in flip_lines)
    judged = labels[labels["label"].notna()]
    filled = qrels_dict(
        list(zip(table["qid"], table["docid"], table["grade"]))
        + [
            (q, d, lab)
            for q, d, lab in zip(judged["qid"], judged["docid"], judged["label"])
            if d not in human.get(q, {})
        ]
    )
    scores = read_tsv(res / "fx" / "scores.tsv")
    assert set(scores["qrels"]) == {"human", "smollm2", "flip", "human+smollm2"}
    for name in ("bm25", "qld", "length", "random"):
        r = run_dict(res / "fx" / "runs" / f"{name}.txt")
        for qname, q in (("human", human), ("flip", flip), ("human+smollm2", filled)):
            want = pytrec(q, r, "ndcg_cut.10")
            got = topic_values(scores, name, qname, "nDCG@10")
            assert {t: got[t] for t in want} == pytest.approx(want, abs=1e-12), (name, qname)
            assert got["all"] == pytest.approx(np.mean(list(want.values())), abs=1e-12)
            want_p = pytrec(q, r, "P.5", relevance_level=2)
            got_p = topic_values(scores, name, qname, "P(rel=2)@5")
            assert {t: got_p[t] for t in want_p} == pytest.approx(want_p, abs=1e-12), (name, qname)

    corr = read_tsv(res / "fx" / "correlations.tsv").set_index(["judge", "measure"])
    assert list(
        corr.loc[("flip", "nDCG@10"), ["reference", "n_systems", "n_topics", "n_pool", "n_pairs"]]
    ) == [
        "human",
        4,
        2,
        16,
        8,
    ]
    assert corr.loc[("smollm2", "nDCG@10"), "reference"] == "human+smollm2"
    means = scores[(scores["topic"] == "all") & (scores["measure"] == "nDCG@10")].pivot(
        index="run", columns="qrels", values="value"
    )
    tau = stats.kendalltau(means["human"], means["flip"]).statistic
    assert corr.loc[("flip", "nDCG@10"), "kendall_tau"] == pytest.approx(tau, abs=1e-12)
    g = pool[pool["human"].notna()]
    lookup = {(q, d): int(v) for q, d, v in zip(g["qid"], g["docid"], g["flip"])}
    assert corr.loc[("flip", "nDCG@10"), "kappa"] == pytest.approx(
        cohen_kappa_score(g["human"].astype(int), [lookup[(q, d)] for q, d in zip(g["qid"], g["docid"])]),
        abs=1e-12,
    )
    # what each judge's labels cost, beside its quality: the embedded model's tokens and seconds
    # from its label table (once per request), the imported judge none
    live = corr.loc[("smollm2", "nDCG@10")]
    assert live["cost_source"] == "live (local)" and live["calls"] == len(labels) and live["usd"] == 0
    assert live["input_tokens"] == labels["prompt_tokens"].sum()
    assert live["model_s"] == pytest.approx(labels["latency_s"].sum())
    assert (live["judge_template"], live["judge_persona"]) == ("wo_cot", "default")
    flip_cost = corr.loc[("flip", "nDCG@10")]
    assert flip_cost["cost_source"] == "imported (no calls)" and flip_cost["calls"] == 0
    assert (res / "tables" / "cost.png").stat().st_size > 1000
    # calibration of the pool labels on the 8 pairs with a human grade: the live judge's label
    # distribution where it labelled, none for the imported judge (labels only)
    cal = read_tsv(res / "tables" / "calibration.tsv").set_index(["dataset", "judge"])
    assert list(cal["signal"]) == ["label_distribution"] * 2
    live = cal.loc[("fx", "smollm2")]
    assert live["n_pairs"] == 8 and live["n"] == corr.loc[("smollm2", "nDCG@10"), "n_labelled"]
    assert 0 <= live["brier"] <= 1 and live["expected_grade_mae"] >= 0
    flip_cal = cal.loc[("fx", "flip")]
    assert flip_cal["n"] == 0 and flip_cal["n_missing"] == corr.loc[("flip", "nDCG@10"), "n_labelled"]
    assert (res / "figures" / "reliability.png").stat().st_size > 1000
    board = (res / "tables" / "leaderboard.md").read_text()
    assert (
        "| Cohen's κ | Krippendorff's α | Kendall's τ | Spearman's ρ |" in board
        and "| flip | human |" in board
    )

    # the run each judge built from the best run under the human qrels, ranked among the 4 systems
    circ = read_tsv(res / "fx" / "circularity.tsv")
    assert len(circ) == 4 and set(zip(circ["judge"], circ["reference"])) == {
        ("smollm2", "human+smollm2"),
        ("flip", "human"),
    }
    human_means = means["human"]
    best = sorted(human_means.index, key=lambda r: (-human_means[r], r))[0]
    assert set(circ["base"]) == {best} and set(circ["run"]) == {f"{best}+smollm2", f"{best}+flip"}
    assert (circ["n_systems"] == 5).all() and (circ["depth"] == 10).all()
    assert circ["reference_rank"].between(1, 5).all() and circ["judge_rank"].between(1, 5).all()
    assert (circ["rank_gap"] == circ["reference_rank"] - circ["judge_rank"]).all()
    assert circ["judged_at_k"].between(0, 1).all() and circ["labelled_at_depth"].between(0, 1).all()
    # every pool pair was labelled (no new call): the built runs' top 10 are labelled throughout
    assert (circ.loc[circ["judge"] == "smollm2", "labelled_at_depth"] == labels["label"].notna().mean()).all()
    for judge in ("smollm2", "flip"):
        built = read_run(res / "fx" / "circularity" / "runs" / f"{judge}.txt")
        assert set(zip(built["qid"], built["docid"])) == set(
            zip(*[read_run(res / "fx" / "runs" / f"{best}.txt")[c] for c in ("qid", "docid")])
        )
        for slug in ("nDCG@10", "P_rel_2_@5"):
            assert (res / "fx" / "circularity" / "figures" / judge / f"{slug}.png").stat().st_size > 1000
    built_scores = read_tsv(res / "fx" / "circularity" / "scores.tsv")
    assert set(built_scores["qrels"]) == {"human", "smollm2", "flip", "human+smollm2"}
    assert "| flip | human | nDCG@10 |" in (res / "fx" / "circularity.md").read_text()
    # the robustness table: each comparison's agreement and its built run's rank gap (the
    # perturbation study is off here: no attack value)
    robust = read_tsv(res / "tables" / "robustness.tsv").set_index(["judge", "reference", "measure"])
    for r in circ.itertuples(index=False):
        row = robust.loc[(r.judge, r.reference, r.measure)]
        assert row["circularity_rank_gap"] == r.rank_gap and row["circularity_run"] == r.run
        c = corr.loc[(r.judge, r.measure)]
        assert row["kappa"] == pytest.approx(c["kappa"]) and row["alpha"] == pytest.approx(c["alpha"])
        assert row["tau"] == pytest.approx(c["kendall_tau"]) or (
            pd.isna(row["tau"]) and pd.isna(c["kendall_tau"])
        )
    assert robust["attack_inflation"].isna().all()
    assert "| flip | fx | nDCG@10 | human |" in (res / "tables" / "robustness.md").read_text()
    # a second run has nothing to do
    again = snakemake(wd, "-n", "ranking")
    assert again.returncode == 0 and "Nothing to be done" in output(again), output(again)[-2000:]


@needs_model
def test_pairs_peras_judged_are_cache_hits_for_the_ranking_judge(tmp_path):
    """PERAS judges the fixture with wo_cot and the default persona; the ranking judge then labels
    a pool of those pairs with the same template and persona: every request is a cache hit, 0 new
    calls. A pool with pairs PERAS never saw sends exactly those."""
    from judgelab.llm.session import JobContext
    from judgelab.studies.peras.jobs import judge_job
    from judgelab.studies.ranking.jobs import judge_pool_job, system_run_job
    from judgelab.studies.ranking.settings import Pooling

    wd = make_workdir(tmp_path / "wd", "ranking")
    p = Project.load([], wd)
    peras, plan = p.plan("peras"), p.plan("ranking")
    pairs = tmp_path / "fx.tsv"
    from judgelab.data.prepare import prepare_table

    files = {k: wd / v for k, v in p.raw_files("fx").items()}
    _, t = prepare_table("fx", p.selection("fx"), files["qrels"], files["topics"], files["texts"])
    t.to_csv(pairs, sep="\t", index=False)
    cache = str(tmp_path / "cache" / "requests.sqlite")
    first = judge_job(
        str(pairs),
        str(tmp_path / "peras.tsv"),
        peras.judge("smollm2", "wo_cot", "default").but(answer="parse", coverage=None),
        JobContext(cache, desc="judge fx/smollm2/wo_cot/default"),
    )
    assert not first["cache_hit"].any() and len(first) == 8
    runs = {}
    for candidates in ("judged", "all"):
        runs[candidates] = str(tmp_path / candidates / "bm25.txt")
        system_run_job(
            str(pairs), runs[candidates], replace(plan.system("bm25"), candidates=candidates, depth=100)
        )
    ranked = {}
    for candidates in ("judged", "all"):
        ranked[candidates] = judge_pool_job(
            str(pairs),
            [runs[candidates]],
            str(tmp_path / f"labels_{candidates}.tsv"),
            Pooling(run_names=["bm25"], depth=10),
            plan.judge("smollm2").but(answer="parse", coverage=None),
            JobContext(cache, desc=f"ranking_judge fx/smollm2 ({candidates})"),
            persona_file=None,
        )
    assert plan.template == "wo_cot" and len(ranked["judged"]) == 8
    assert ranked["judged"]["cache_hit"].all()  # 0 new calls
    merged = ranked["judged"].merge(first, on=["qid", "docid"], suffixes=("", "_peras"))
    assert (merged["answer"] == merged["answer_peras"]).all()
    # the pool of every passage per topic: the 8 pairs PERAS judged are hits, the 8 others new
    every = ranked["all"]
    known = set(zip(first["qid"], first["docid"]))
    hit = [(q, d) in known for q, d in zip(every["qid"], every["docid"])]
    assert len(every) == 16 and list(every["cache_hit"]) == hit and sum(hit) == 8


def flip_qrels(qrels_file: Path, out: Path) -> int:
    """The human grades with every fifth line's grade g changed to (g + 1) mod 4; returns how many."""
    lines, changed = [], 0
    for i, line in enumerate(qrels_file.read_text().splitlines()):
        qid, q0, docid, grade = line.split()
        if i % 5 == 0:
            grade, changed = str((int(grade) + 1) % 4), changed + 1
        lines.append(f"{qid} {q0} {docid} {grade}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    return changed


def annotator_qrels(qrels_file: Path, out: Path, n: int) -> list[str]:
    """The human grades of the first ``n`` topics (sorted) of ``qrels_file`` written as an
    annotator's qrels (``qid 0 docid label``); returns the topics."""
    lines = [line.split() for line in qrels_file.read_text().splitlines() if line.strip()]
    topics = sorted({q for q, *_ in lines})[:n]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(f"{q} 0 {d} {g}\n" for q, _, d, g in lines if q in topics))
    return topics


def trec_eval_reference(path: Path) -> dict[tuple[str, str], float]:
    """(run, topic or 'all') -> trec_eval's ndcg_cut_10 (4 decimals) of ``dl21.ndcg_cut10``."""
    ref = pd.read_csv(path, dtype=str)
    return {
        (r.runid, "all" if r.topic == "average" else r.topic): float(r.ndcg_cut_10) for r in ref.itertuples()
    }


def test_dl21_imported_judge_with_no_llm_call_and_adding_one_run(tmp_path, shared_data):
    wd = make_workdir(tmp_path / "dl21", "ranking_dl21")
    (wd / "shared").symlink_to(shared_data)
    run_files = sorted((shared_data / "trec-dl-runs" / "dl21").glob("input.*.txt"))
    assert len(run_files) == 63
    (wd / "runs").mkdir()
    *first, last = run_files
    for f in first:
        (wd / "runs" / f.name).symlink_to(f)
    qrels_file = shared_data / "trec-dl" / "qrels.dl21-passage.txt"
    assert flip_qrels(qrels_file, wd / "imports" / "flip.qrels") == 2166
    # an annotator's qrels (as `judgelab annotate serve` writes them): the human grades of 5 topics
    annotated = annotator_qrels(qrels_file, wd / "labels" / "ana.qrels", 5)
    cfg_file = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_file.read_text())
    cfg["ranking"]["annotated"] = {"dl21": {"qrels": ["labels/ana.qrels"]}}
    cfg_file.write_text(yaml.safe_dump(cfg, sort_keys=False))

    # the first run up to the scores (the tables come once, after the run added below)
    run = snakemake(wd, "results/ranking/dl21/scores.tsv", timeout=5400)
    assert run.returncode == 0, output(run)[-4000:]
    text = output(run)
    assert "ranking_judge" not in text and not (wd / "cache").exists()  # no LLM call, no cache opened

    # one run more: the dataset's scoring job, which scores that run only, then the tables above
    # it - nothing else (no import, no dataset; `figures: false` in .test/ranking_dl21)
    (wd / "runs" / last.name).symlink_to(last)
    dry = snakemake(wd, "-n", "ranking", timeout=1200)
    assert dry.returncode == 0, output(dry)[-3000:]
    jobs = dry_run_jobs(output(dry))
    assert [wc for rule, wc in jobs if rule == "ranking_score"] == [{"dataset": "dl21"}]
    assert sorted({rule for rule, _ in jobs}) == [
        "ranking",
        "ranking_calibration",  # not asked by the first run (the scores only)
        "ranking_circularity",
        "ranking_correlations",
        "ranking_cost_figure",
        "ranking_leaderboard",
        "ranking_ppi",
        "ranking_ppi_estimate",
        "ranking_robustness",
        "ranking_score",
    ], output(dry)[-3000:]
    run = snakemake(wd, "ranking", timeout=1800)
    assert run.returncode == 0, output(run)[-4000:]
    score_log = (wd / "results" / "logs" / "ranking" / "dl21" / "scores.log").read_text()
    assert "63 runs x 2 qrels: 2 scored, 124 read from the cache" in score_log, score_log[-2000:]

    res = wd / "results" / "ranking" / "dl21"
    scores = read_tsv(res / "scores.tsv")
    # every run's nDCG@10 under the human qrels, per topic and averaged, is trec_eval's
    ref = trec_eval_reference(shared_data / "trec-dl-runs" / "dl21.ndcg_cut10")
    human = scores[(scores["qrels"] == "human") & (scores["measure"] == "nDCG@10")]
    assert human["run"].nunique() == 63 and len(human) == 63 * 54
    got = {(r.run, r.topic): r.value for r in human.itertuples()}
    assert set(got) == set(ref)
    assert max(abs(got[k] - ref[k]) for k in ref) < 1e-4

    # the imported judge's correlations, computed here from pytrec_eval and scipy directly
    table = pd.read_csv(qrels_file, sep=r"\s+", header=None, names=["qid", "q0", "docid", "grade"], dtype=str)
    flip = pd.read_csv(
        wd / "imports" / "flip.qrels",
        sep=r"\s+",
        header=None,
        names=["qid", "q0", "docid", "grade"],
        dtype=str,
    )
    human_q = qrels_dict(zip(table["qid"], table["docid"], table["grade"]))
    flip_q = qrels_dict(zip(flip["qid"], flip["docid"], flip["grade"]))
    topics = sorted(human_q)
    means = {}
    for f in run_files:
        name = f.name[len("input.") : -len(".txt")]
        r = run_dict(f)
        per_topic = [pytrec(q, r, "ndcg_cut.10") for q in (human_q, flip_q)]  # one evaluation each
        means[name] = [np.mean([v.get(t, 0.0) for t in topics]) for v in per_topic]
    h = np.array([means[n][0] for n in sorted(means)])
    j = np.array([means[n][1] for n in sorted(means)])
    corr = read_tsv(res / "correlations.tsv").set_index(["judge", "measure"]).loc[("flip", "nDCG@10")]
    assert (corr["n_systems"], corr["n_topics"]) == (63, 53)
    assert corr["kendall_tau"] == pytest.approx(stats.kendalltau(h, j).statistic, abs=1e-12)
    assert corr["spearman"] == pytest.approx(stats.spearmanr(h, j).statistic, abs=1e-12)
    assert corr["kendall_tau_low"] <= corr["kendall_tau"] <= corr["kendall_tau_high"]

    # label agreement on the pool: the top 10 of every run by score, ties by docid descending
    pool = set()
    for f in run_files:
        lines = pd.read_csv(
            f,
            sep=r"\s+",
            header=None,
            names=["qid", "q0", "docid", "rank", "score", "tag"],
            dtype={"qid": str, "docid": str},
        )
        lines = lines[lines["qid"].isin(human_q)].sort_values(
            ["qid", "score", "docid"], ascending=[True, False, False]
        )
        pool |= set(map(tuple, lines.groupby("qid").head(10)[["qid", "docid"]].to_numpy()))
    graded = sorted(p for p in pool if p[1] in human_q[p[0]])
    assert (
        (corr["n_pool"], corr["n_pairs"], corr["n_labelled"])
        == (len(pool), len(graded), len(graded))
        == (7447, 7363, 7363)
    )
    hv = [human_q[q][d] for q, d in graded]
    jv = [flip_q[q][d] for q, d in graded]
    assert corr["kappa"] == pytest.approx(cohen_kappa_score(hv, jv), abs=1e-12)
    alpha = krippendorff.alpha(
        reliability_data=[hv, jv], value_domain=[0, 1, 2, 3], level_of_measurement="ordinal"
    )
    assert corr["alpha"] == pytest.approx(alpha, abs=1e-12)
    board = read_tsv(wd / "results" / "ranking" / "tables" / "leaderboard.tsv")
    assert list(board["judge"]) == ["flip"] and board["tau"].iloc[0] == pytest.approx(corr["kendall_tau"])

    # prediction-powered estimates (values checked against ppi-python in test_ranking_ppi.py): per
    # n, the three methods on the 63 systems and their 1,953 pairs, against the 53 topics' means
    ppi = read_tsv(wd / "results" / "ranking" / "tables" / "ppi.tsv")
    assert len(ppi) == 4 * 2 * 3 and set(ppi["n"]) == {5, 10, 20, 30}
    assert (ppi["n_topics"] == 53).all() and (ppi["draws"] == 200).all()
    systems = ppi[ppi["target"] == "systems"].set_index(["n", "method"])
    for n in (5, 10, 20, 30):
        # the judge agrees with the human grades on most pairs: PPI's interval is narrower
        assert systems.loc[(n, "ppi"), "width"] < systems.loc[(n, "human_only"), "width"]
    assert systems.loc[(30, "human_only"), "width"] < systems.loc[(5, "human_only"), "width"]
    assert (ppi[ppi["method"] != "judge_only"]["coverage"].between(0, 1)).all()
    assert (ppi.loc[ppi["target"] == "pairs", "n_targets"] == 63 * 62 // 2).all()

    # the systems' scores estimated from the annotator's 5 topics and the judge on all 53: the
    # human-only mean is trec_eval's on those topics, the judge-only one pytrec_eval's under flip
    est = read_tsv(res / "ppi_estimate.tsv").set_index("system")
    assert len(est) == 63 and set(est["judge"]) == {"flip"} and set(est["measure"]) == {"nDCG@10"}
    assert set(est["n_annotated"]) == {5} and set(est["n_topics"]) == {53}
    for name in sorted(means):
        row = est.loc[name]
        assert row["human_only"] == pytest.approx(np.mean([ref[(name, t)] for t in annotated]), abs=1e-4)
        assert row["judge_only"] == pytest.approx(means[name][1], abs=1e-12)
        assert row["ppi_low"] <= row["ppi"] <= row["ppi_high"] and row["human_low"] <= row["human_high"]
    # the judge agrees with the annotator on most pairs: PPI's intervals are the narrower
    assert (est["ppi_high"] - est["ppi_low"]).mean() < (est["human_high"] - est["human_low"]).mean()


def test_dl21_runs_download_through_file_urls(tmp_path, shared_data):
    wd = make_workdir(tmp_path / "dl", "ranking_dl21")
    (wd / "shared").symlink_to(shared_data)
    names = ["p_bm25", "TUW_TAS-B_768", "uogTrPC"]
    mirror = (shared_data / "trec-dl-runs" / "dl21").resolve().as_uri()
    cfg = wd / "config" / "config.yaml"
    files = '    dl21: {source: files, paths: ["runs/input.*.txt"]}'
    assert files in cfg.read_text()
    cfg.write_text(
        cfg.read_text().replace(files, f"    dl21: {{source: download, names: {names}, url: '{mirror}'}}")
    )
    flip_qrels(shared_data / "trec-dl" / "qrels.dl21-passage.txt", wd / "imports" / "flip.qrels")
    run = snakemake(wd, "ranking_runs", timeout=1800)
    assert run.returncode == 0, output(run)[-4000:]
    for name in names:
        got = wd / "results" / "ranking" / "dl21" / "runs" / f"{name}.txt"
        assert got.read_bytes() == (shared_data / "trec-dl-runs" / "dl21" / f"input.{name}.txt").read_bytes()
    assert "ranking_download_run" in output(run) and "ranking_score" not in output(run)


@needs_model
def test_a_live_judge_labels_the_base_run_past_the_pool(tmp_path, monkeypatch):
    """pool_depth 2, circularity depth 5: the embedded model labels the pool, then the base run's
    top 5 below it (one job; its pool pairs are not asked again), the built run is re-ordered by
    both, every pair of its top 5 with a known text labelled, and the estimate of the finished run
    counts exactly those extra requests, all cached."""
    import yaml

    from judgelab.wiring.estimate import estimate

    wd = make_workdir(tmp_path / "deep", "ranking")
    (wd / "deep.yaml").write_text(
        yaml.safe_dump(
            {
                "ranking": {
                    "pool_depth": 2,
                    "circularity": {"depth": 5},
                    # a committee of the live and the imported judge, a judge like the others
                    "committees": {"pair": {"judges": ["smollm2", "flip"], "rule": "mean", "quorum": 1}},
                }
            }
        )
    )
    cfg = ["--configfile", str(wd / "deep.yaml")]
    # the circularity and the correlations alone: no figure, no table above them
    target = ["results/ranking/fx/circularity.tsv", "results/ranking/fx/correlations.tsv"]
    dry = snakemake(wd, "-n", *target, *cfg)
    assert dry.returncode == 0, output(dry)[-3000:]
    assert [wc for rule, wc in dry_run_jobs(output(dry)) if rule == "ranking_circularity_judge"] == [
        {"dataset": "fx", "model": "smollm2"}
    ]
    run = snakemake(wd, *target, *cfg)
    assert run.returncode == 0, output(run)[-4000:]
    res = wd / "results" / "ranking" / "fx"
    pool = read_tsv(res / "labels" / "smollm2.tsv")
    extra = read_tsv(res / "circularity" / "labels" / "smollm2.tsv")
    circ = read_tsv(res / "circularity.tsv")
    base = str(circ["base"].iloc[0])
    top = read_run(res / "runs" / f"{base}.txt")
    top = top.sort_values(["qid", "score", "docid"], ascending=[True, False, False]).groupby("qid").head(5)
    table = read_dataset(str(wd / "results" / "datasets" / "fx.tsv"))
    known = set(table["docid"])
    want = {(q, d) for q, d in zip(top["qid"].astype(str), top["docid"].astype(str)) if d in known}
    assert set(zip(extra["qid"], extra["docid"])) == want
    in_pool = extra.merge(pool[["qid", "docid", "label"]], on=["qid", "docid"], suffixes=("", "_pool"))
    assert len(in_pool) and (in_pool["label"].astype("Int64") == in_pool["label_pool"].astype("Int64")).all()
    assert len(want) > len(in_pool)  # the base run's top 5 goes past the pool
    row = circ[circ["judge"] == "smollm2"].iloc[0]
    assert row["depth"] == 5 and row["labelled_at_depth"] == pytest.approx(
        extra["label"].notna().sum() / len(top)
    )
    log = (wd / "results" / "logs" / "ranking" / "fx" / "circularity" / "judge" / "smollm2.log").read_text()
    assert f"{len(want) - len(in_pool)} more with a known text to judge" in log, log[-2000:]
    # the committee: per pair the mean of the members' labels rounded half up, one member enough
    flip = read_tsv(res / "labels" / "flip.tsv")
    pair = read_tsv(res / "labels" / "pair.tsv").set_index(["qid", "docid"])
    both = pool[["qid", "docid", "label"]].merge(
        flip[["qid", "docid", "label"]], on=["qid", "docid"], how="outer"
    )
    for r in both.itertuples(index=False):
        got = [int(x) for x in (r.label_x, r.label_y) if pd.notna(x)]
        assert pair.loc[(r.qid, r.docid), "label"] == int(np.floor(np.mean(got) + 0.5)), r
    corr = read_tsv(res / "correlations.tsv").set_index(["judge", "measure"])
    committee = corr.loc[("pair", "nDCG@10")]
    assert committee["reference"] == "human" and committee["cost_source"] == "committee of smollm2, flip"
    assert committee["calls"] == corr.loc[("smollm2", "nDCG@10"), "calls"]
    assert ("pair", "human") in set(zip(circ["judge"], circ["reference"]))
    monkeypatch.chdir(wd)
    est, _ = estimate(Project.load([str(wd / "deep.yaml")], wd), directory=wd)
    row = est.set_index("stage").loc["circularity"]
    assert row["calls"] == len(want) - len(in_pool) and row["to_send"] == 0, est.to_string()
