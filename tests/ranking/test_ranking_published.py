"""A published judge by name in the ranking study, for real: `.test/ranking_dl21` with
`ranking.imported_judges: [umbrela-zeroshot-gpt-4]` (Arabzadeh and Clarke's GPT-4 UMBRELA labels of
DL21) and `published_judges.mirror` at the shared copies. The rule fetches the file (digest
checked), the judge is imported with no LLM call, and its nDCG@10 per run and topic, its tau
against the human order and its kappa on the pool equal pytrec_eval, scipy and scikit-learn
called on the published file directly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
import yaml
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from snakerun import make_workdir, output, snakemake

from judgelab.data.readers import read_run

pytestmark = pytest.mark.slow

JUDGE = "umbrela-zeroshot-gpt-4"
RUNS = 10  # the first ten of the 63 runs (file order): enough systems for a tau, a short run


def qrels_of(path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        qid, _, docid, grade = line.split()
        out.setdefault(qid, {})[docid] = int(grade)
    return out


def run_dict(path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for r in read_run(path).itertuples():
        out.setdefault(r.qid, {})[r.docid] = float(r.score)
    return out


def test_a_published_judge_by_name_in_the_ranking_study(tmp_path, shared_data):
    wd = make_workdir(tmp_path / "pub", "ranking_dl21")
    (wd / "shared").symlink_to(shared_data)
    run_files = sorted((shared_data / "trec-dl-runs" / "dl21").glob("input.*.txt"))[:RUNS]
    (wd / "runs").mkdir()
    for f in run_files:
        (wd / "runs" / f.name).symlink_to(f)
    (wd / "published.yaml").write_text(
        yaml.safe_dump(
            {
                "published_judges": {"mirror": "shared/published-judges"},
                "ranking": {
                    "imported_judges": [JUDGE],
                    "ppi": {"n": [10], "draws": 20},
                    "circularity": {"enabled": False},
                },
            }
        )
    )
    run = snakemake(
        wd,
        "ranking",
        "--configfile",
        str(wd / "config" / "config.yaml"),
        str(wd / "published.yaml"),
        timeout=1800,
    )
    assert run.returncode == 0, output(run)[-4000:]
    assert "download_published_judge" in output(run) and not (wd / "cache").exists()  # no LLM call

    source = shared_data / "published-judges" / "narabzad-2024"
    published = source / "Methods" / "Umbrela_zeroshot" / "gpt4" / "umbrella_gpt-4_zeroshot_dl21.txt"
    fetched = wd / "results" / "published" / JUDGE / "dl21.txt"
    assert fetched.read_bytes() == published.read_bytes()

    human_q = qrels_of(shared_data / "trec-dl" / "qrels.dl21-passage.txt")
    judge_q = qrels_of(published)
    res = wd / "results" / "ranking" / "dl21"
    scores = pd.read_csv(res / "scores.tsv", sep="\t", dtype={"topic": str, "run": str})
    mine = scores[(scores["qrels"] == JUDGE) & (scores["measure"] == "nDCG@10") & (scores["topic"] != "all")]
    means = {}
    for f in run_files:
        name = f.name[len("input.") : -len(".txt")]
        r = run_dict(f)
        per_topic = [
            {
                t: v["ndcg_cut_10"]
                for t, v in pytrec_eval.RelevanceEvaluator(q, {"ndcg_cut.10"}).evaluate(r).items()
            }
            for q in (human_q, judge_q)
        ]
        got = mine[mine["run"] == name].set_index("topic")["value"]
        expected = pd.Series(per_topic[1]).reindex(got.index).fillna(0.0)
        assert len(got) == 53 and np.allclose(got.to_numpy(), expected.to_numpy(), atol=1e-12), name
        topics = sorted(human_q)
        means[name] = [np.mean([v.get(t, 0.0) for t in topics]) for v in per_topic]
    h = np.array([means[n][0] for n in sorted(means)])
    j = np.array([means[n][1] for n in sorted(means)])
    corr = (
        pd.read_csv(res / "correlations.tsv", sep="\t")
        .set_index(["judge", "measure"])
        .loc[(JUDGE, "nDCG@10")]
    )
    assert corr["n_systems"] == RUNS
    assert corr["kendall_tau"] == pytest.approx(stats.kendalltau(h, j).statistic, abs=1e-12)

    # kappa on the pool's judged pairs (every run's top 10), against scikit-learn's
    pool = set()
    for f in run_files:
        lines = read_run(f)
        lines = lines[lines["qid"].isin(human_q)].sort_values(
            ["qid", "score", "docid"], ascending=[True, False, False]
        )
        pool |= set(map(tuple, lines.groupby("qid").head(10)[["qid", "docid"]].to_numpy()))
    graded = sorted(p for p in pool if p[1] in human_q[p[0]])
    assert corr["n_labelled"] == len(graded)
    kappa = cohen_kappa_score([human_q[q][d] for q, d in graded], [judge_q[q][d] for q, d in graded])
    assert corr["kappa"] == pytest.approx(kappa, abs=1e-12)
    board = pd.read_csv(wd / "results" / "ranking" / "tables" / "leaderboard.tsv", sep="\t")
    assert list(board["judge"]) == [JUDGE]
