"""Published judges by name in the ranking study, for real: `.test/ranking_dl21` with
`ranking.imported_judges: [umbrela-zeroshot-gpt-4, autonuggetizer-weighted-gpt-4o]` and
`published_judges.mirror` at the shared copies, over 10 DL21 runs. The rule fetches each file
(digest checked) and the judges are imported with no LLM call.

* A label judge, Arabzadeh and Clarke's GPT-4 UMBRELA labels of DL21: its nDCG@10 per run and
  topic, its tau against the human order and its kappa on the pool equal pytrec_eval, scipy and
  scikit-learn called on the published file directly.
* A judge that gives scores, their GPT-4o AutoNuggetizer weighted nugget scores (real numbers in
  0-1.66667; the DL21 file also holds the DL19 and DL20 pairs, dropped and counted): the scores
  enter as gains round(1000 x score), so nDCG@10 per run and topic equals pytrec_eval over the
  scaled qrels written here from the published file, Compat (Clarke's compatibility) equals
  ir-measures' over them, tau equals scipy's; kappa is n/a; alpha, with `ranking.score_alpha:
  linear` declaring the map, equals `krippendorff.alpha(level_of_measurement="interval")` on the
  mapped scores, the map named in `alpha_map` - and taking the map away reruns the tables only,
  not the imports or the scores (a dry run; alpha n/a without the map is
  tests/test_published_scores.py's). The run the judge builds (circularity) is its base run
  re-ordered by the score.

One workflow run serves every test of the module."""

from __future__ import annotations

import math

import ir_measures
import krippendorff
import numpy as np
import pandas as pd
import pytest
import pytrec_eval
import yaml
from conftest import SHARED
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from snakerun import dry_run_jobs, make_workdir, output, snakemake

from judgelab.data.readers import read_run

pytestmark = pytest.mark.slow

JUDGE = "umbrela-zeroshot-gpt-4"
LABELS = "Methods/Umbrela_zeroshot/gpt4/umbrella_gpt-4_zeroshot_dl21.txt"
SCORER = "autonuggetizer-weighted-gpt-4o"
SCORES = "raw-qrels/gpt-4o/nuggets/weighted/qrels.autonuggetizer.w.dl21.txt"
HIGH = 1.66667  # the catalog's declared range of SCORER: scores 0-1.66667
MAP = "scores 0-1.66667 -> grades 0-3, linear"
RUNS = 10  # the first ten of the 63 runs (file order): enough systems for a tau, a short run


def lines_of(path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines() if line.strip()]


def qrels_of(path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for qid, _, docid, grade in lines_of(path):
        out.setdefault(qid, {})[docid] = int(grade)
    return out


def run_dict(path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for r in read_run(path).itertuples():
        out.setdefault(r.qid, {})[r.docid] = float(r.score)
    return out


@pytest.fixture(scope="module")
def shared():
    """The shared real data (conftest's ``shared_data``, for the module's fixtures)."""
    if not SHARED.exists():
        pytest.skip(f"{SHARED} is absent (real data is only beside the repository in CI)")
    return SHARED


@pytest.fixture(scope="module")
def workflow(tmp_path_factory, shared):
    """The workflow run once with `score_alpha: linear`, and a dry run without it."""
    wd = make_workdir(tmp_path_factory.mktemp("pub") / "run", "ranking_dl21")
    (wd / "shared").symlink_to(shared)
    run_files = sorted((shared / "trec-dl-runs" / "dl21").glob("input.*.txt"))[:RUNS]
    (wd / "runs").mkdir()
    for f in run_files:
        (wd / "runs" / f.name).symlink_to(f)
    layer = {
        "published_judges": {"mirror": "shared/published-judges"},
        "ranking": {
            "imported_judges": [JUDGE, SCORER],
            "measures": ["nDCG@10", "Compat"],
            "score_alpha": "linear",
            "ppi": {"n": [10], "draws": 20},
            "circularity": {"enabled": True},
            "figures": True,  # the mean-difference figures are checked here
            "correlation": {"n_boot": 100},  # the intervals are not what this file checks
        },
    }
    (wd / "published.yaml").write_text(yaml.safe_dump(layer))
    args = ["ranking", "--configfile", str(wd / "config" / "config.yaml"), str(wd / "published.yaml")]
    first = snakemake(wd, *args, timeout=1800)
    assert first.returncode == 0, output(first)[-4000:]
    del layer["ranking"]["score_alpha"]
    (wd / "published.yaml").write_text(yaml.safe_dump(layer))
    without = snakemake(wd, *args, "-n", timeout=600)
    assert without.returncode == 0, output(without)[-4000:]
    corr = pd.read_csv(wd / "results" / "ranking" / "dl21" / "correlations.tsv", sep="\t")
    return {"wd": wd, "runs": run_files, "first": output(first), "without": output(without), "corr": corr}


@pytest.fixture(scope="module")
def truth(shared):
    """The human grades, the label judge's qrels, and the score judge's scores of DL21's judged
    pairs with the number of its other lines, read here directly from the files."""
    human = qrels_of(shared / "trec-dl" / "qrels.dl21-passage.txt")
    source = shared / "published-judges" / "narabzad-2024"
    scores, other = {}, 0
    for qid, _, docid, value in lines_of(source / SCORES):
        if docid in human.get(qid, {}):
            scores[(qid, docid)] = float(value)
        else:
            other += 1
    return {"human": human, "labels": qrels_of(source / LABELS), "scores": scores, "other": other}


def ndcg_per_topic(qrels, run_files, scores: pd.DataFrame, name: str) -> dict[str, list[float]]:
    """Per run: the checks of its nDCG@10 per topic under ``name`` against pytrec_eval under
    ``qrels``; returns the run's mean over the human topics (trec_eval -c), for the tau."""
    mine = scores[(scores["qrels"] == name) & (scores["measure"] == "nDCG@10") & (scores["topic"] != "all")]
    means = {}
    for f in run_files:
        run = f.name[len("input.") : -len(".txt")]
        evaluated = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run_dict(f))
        per_topic = {t: v["ndcg_cut_10"] for t, v in evaluated.items()}
        got = mine[mine["run"] == run].set_index("topic")["value"]
        expected = pd.Series(per_topic).reindex(got.index).fillna(0.0)
        assert len(got) == 53 and np.allclose(got.to_numpy(), expected.to_numpy(), atol=1e-12), (name, run)
        means[run] = per_topic
    return means


def tau_against_scipy(human_means, judge_means, topics, row) -> None:
    """The row's tau against scipy's over the runs' means on ``topics`` (0 where a run has none)."""
    runs = sorted(human_means)
    h = np.array([np.mean([human_means[r].get(t, 0.0) for t in topics]) for r in runs])
    j = np.array([np.mean([judge_means[r].get(t, 0.0) for t in topics]) for r in runs])
    assert row["n_systems"] == RUNS
    assert row["kendall_tau"] == pytest.approx(stats.kendalltau(h, j).statistic, abs=1e-12)


def pool_pairs(run_files, human) -> list[tuple[str, str]]:
    """The pool's judged pairs (every run's top 10, trec_eval's order), sorted."""
    pool = set()
    for f in run_files:
        lines = read_run(f)
        lines = lines[lines["qid"].isin(human)].sort_values(
            ["qid", "score", "docid"], ascending=[True, False, False]
        )
        pool |= set(map(tuple, lines.groupby("qid").head(10)[["qid", "docid"]].to_numpy()))
    return sorted(p for p in pool if p[1] in human[p[0]])


def test_the_files_are_fetched_and_the_other_pairs_dropped_and_counted(workflow, truth, shared):
    wd = workflow["wd"]
    source = shared / "published-judges" / "narabzad-2024"
    for name, rel in ((JUDGE, LABELS), (SCORER, SCORES)):
        fetched = wd / "results" / "published" / name / "dl21.txt"
        assert fetched.read_bytes() == (source / rel).read_bytes(), name
    assert "download_published_judge" in workflow["first"] and not (wd / "cache").exists()  # no LLM call
    assert (len(truth["scores"]), truth["other"]) == (8956, 11513)  # DL21 pairs; DL19 and DL20's
    log = (wd / "results" / "logs" / "ranking" / "dl21" / "import" / f"{SCORER}.log").read_text()
    assert f"dropped: {truth['other']} lines of pairs unknown to the dataset (unknown), 0 scores" in log
    table = wd / "results" / "ranking" / "dl21" / "labels" / f"{SCORER}.tsv"
    labels = pd.read_csv(table, sep="\t", dtype=str)
    assert list(labels.columns) == ["qid", "docid", "label", "confidence", "score"]
    assert labels["label"].isna().all()
    got = {(q, d): float(s) for q, d, s in zip(labels["qid"], labels["docid"], labels["score"])}
    assert got == truth["scores"]


def test_a_label_judge_equals_pytrec_eval_scipy_and_sklearn(workflow, truth):
    res = workflow["wd"] / "results" / "ranking" / "dl21"
    scores = pd.read_csv(res / "scores.tsv", sep="\t", dtype={"topic": str, "run": str})
    human = ndcg_per_topic(truth["human"], workflow["runs"], scores, "human")
    judge = ndcg_per_topic(truth["labels"], workflow["runs"], scores, JUDGE)
    corr = workflow["corr"].set_index(["judge", "measure"]).loc[(JUDGE, "nDCG@10")]
    tau_against_scipy(human, judge, sorted(truth["human"]), corr)
    # kappa on the pool's judged pairs (every run's top 10), against scikit-learn's
    graded = pool_pairs(workflow["runs"], truth["human"])
    assert corr["n_labelled"] == len(graded)
    h = [truth["human"][q][d] for q, d in graded]
    kappa = cohen_kappa_score(h, [truth["labels"][q][d] for q, d in graded])
    assert corr["kappa"] == pytest.approx(kappa, abs=1e-12) and pd.isna(corr["alpha_map"])
    board = pd.read_csv(workflow["wd"] / "results" / "ranking" / "tables" / "leaderboard.tsv", sep="\t")
    assert list(board[board["measure"] == "nDCG@10"]["judge"]) == [JUDGE, SCORER]


def test_scores_as_gains_equal_pytrec_eval_on_the_scaled_qrels_and_scipy(workflow, truth, tmp_path):
    scaled = tmp_path / "scaled.qrels"  # the gains as written here: round(1000 x score)
    scaled.write_text("".join(f"{q} 0 {d} {round(1000 * s)}\n" for (q, d), s in truth["scores"].items()))
    with scaled.open() as fh:
        judge_q = pytrec_eval.parse_qrel(fh)
    res = workflow["wd"] / "results" / "ranking" / "dl21"
    scores = pd.read_csv(res / "scores.tsv", sep="\t", dtype={"topic": str, "run": str})
    human = ndcg_per_topic(truth["human"], workflow["runs"], scores, "human")
    judge = ndcg_per_topic(judge_q, workflow["runs"], scores, SCORER)
    row = workflow["corr"].set_index(["judge", "measure"]).loc[(SCORER, "nDCG@10")]
    tau_against_scipy(human, judge, sorted(truth["human"]), row)
    # Compat (an order measure, so the scaled gains serve it): per run and topic as ir-measures
    # gives it over the scaled qrels, and its tau as scipy's
    compat = scores[
        (scores["qrels"] == SCORER) & (scores["measure"] == "Compat") & (scores["topic"] != "all")
    ]
    means = {}
    for f in workflow["runs"]:
        run = f.name[len("input.") : -len(".txt")]
        want = {m.query_id: m.value for m in ir_measures.Compat.iter_calc(judge_q, run_dict(f))}
        got = compat[compat["run"] == run].set_index("topic")["value"]
        assert np.allclose(
            got.to_numpy(), pd.Series(want).reindex(got.index).fillna(0.0).to_numpy(), atol=1e-12
        )
        means[run] = want
    human_compat = {
        f.name[len("input.") : -len(".txt")]: {
            m.query_id: m.value for m in ir_measures.Compat.iter_calc(truth["human"], run_dict(f))
        }
        for f in workflow["runs"]
    }
    row = workflow["corr"].set_index(["judge", "measure"]).loc[(SCORER, "Compat")]
    tau_against_scipy(human_compat, means, sorted(truth["human"]), row)


def test_a_score_judge_has_no_kappa_and_alpha_only_after_the_declared_map(workflow, truth):
    human, scores = truth["human"], truth["scores"]
    graded = pool_pairs(workflow["runs"], human)
    both = [p for p in graded if p in scores]
    res = workflow["wd"] / "results" / "ranking"
    row = workflow["corr"].set_index(["judge", "measure"]).loc[(SCORER, "nDCG@10")]
    assert (row["n_pairs"], row["n_labelled"]) == (len(graded), len(both))
    for k in ("kappa", "qwk", "macro_f1"):
        assert math.isnan(row[k]), k
    h = [human[q][d] for q, d in both]
    mapped = [3 * scores[p] / HIGH for p in both]  # [0, 1.66667] onto the grades [0, 3]
    want = krippendorff.alpha(reliability_data=[h, mapped], level_of_measurement="interval")
    assert row["alpha"] == pytest.approx(want, abs=1e-12) and row["alpha_map"] == MAP
    assert pd.isna(workflow["corr"].set_index(["judge", "measure"]).loc[(JUDGE, "nDCG@10"), "alpha_map"])
    board = (res / "tables" / "leaderboard.md").read_text()
    assert "| Krippendorff's α | α map |" in board
    assert f"| n/a | {row['alpha']:.3f} | {MAP} |" in board
    robustness = pd.read_csv(res / "tables" / "robustness.tsv", sep="\t")
    assert list(robustness["alpha_map"].dropna().unique()) == [MAP]
    # the map changes the tables only: without it, the imports and the scores are not made again
    rules = {rule for rule, _ in dry_run_jobs(workflow["without"])}
    assert "ranking_correlations" in rules
    assert not rules & {"ranking_import", "ranking_score", "download_published_judge", "ranking_ppi"}


def test_the_judge_built_run_is_the_base_reordered_by_the_score(workflow, truth):
    res = workflow["wd"] / "results" / "ranking" / "dl21"
    circ = pd.read_csv(res / "circularity.tsv", sep="\t").set_index(["judge", "measure"])
    row = circ.loc[(SCORER, "nDCG@10")]
    built = read_run(res / "circularity" / "runs" / f"{SCORER}.txt")
    base = read_run(workflow["wd"] / "runs" / f"input.{row['base']}.txt")
    depth = int(row["depth"])
    for qid, docs in built.sort_values(["qid", "rank"]).groupby("qid"):
        top = base[base["qid"] == qid].sort_values(["score", "docid"], ascending=False).head(depth)
        new = list(docs["docid"])[:depth]
        assert set(new) == set(top["docid"]), qid
        # scored documents first, by score descending, then the unscored
        values = [truth["scores"].get((qid, d)) for d in new]
        scored = [v for v in values if v is not None]
        assert values[: len(scored)] == scored and scored == sorted(scored, reverse=True), qid


def test_value_agreement_and_tau_gap_of_the_published_label_judge(workflow, truth):
    """bland_altman.tsv's system level for the GPT-4 UMBRELA labels equals numpy on the runs'
    pytrec_eval means (over the human topics, 0 where a run has none); the bias and limits reach
    the leaderboard and the robustness table, tau_gap its columns, and each judge has its
    mean-difference figure."""
    res = workflow["wd"] / "results" / "ranking"
    ba = pd.read_csv(res / "dl21" / "bland_altman.tsv", sep="\t").set_index(["judge", "measure", "level"])
    topics = sorted(truth["human"])

    def means(qrels) -> np.ndarray:
        out = []
        for f in workflow["runs"]:
            per = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run_dict(f))
            out.append(np.mean([per.get(t, {}).get("ndcg_cut_10", 0.0) for t in topics]))
        return np.array(out)

    d = means(truth["labels"]) - means(truth["human"])
    row = ba.loc[(JUDGE, "nDCG@10", "system")]
    assert row["n"] == RUNS and row["bias"] == pytest.approx(d.mean(), abs=1e-12)
    assert row["loa_high"] == pytest.approx(d.mean() + 1.96 * d.std(ddof=1), abs=1e-12)
    assert ba.loc[(JUDGE, "nDCG@10", "response"), "n"] == RUNS * 53
    corr = workflow["corr"].set_index(["judge", "measure"]).loc[(JUDGE, "nDCG@10")]
    assert corr["ba_bias"] == pytest.approx(row["bias"], abs=1e-12)
    assert -1.0 <= corr["tau_gap"] <= 1.0 and -1.0 <= corr["tau_gap_at_k"] <= 1.0
    board = pd.read_csv(res / "tables" / "leaderboard.tsv", sep="\t")
    board = board[board["measure"] == "nDCG@10"].set_index("judge")
    assert board.loc[JUDGE, "ba_loa_low"] == pytest.approx(row["loa_low"], abs=1e-12)
    robustness = pd.read_csv(res / "tables" / "robustness.tsv", sep="\t")
    robustness = robustness[robustness["measure"] == "nDCG@10"].set_index("judge")
    assert robustness.loc[JUDGE, "ba_bias"] == pytest.approx(row["bias"], abs=1e-12)
    for judge in (JUDGE, SCORER):
        assert (res / "dl21" / "bland_altman" / f"{judge}.png").stat().st_size > 1000
