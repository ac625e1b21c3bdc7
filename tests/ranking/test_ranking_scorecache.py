"""judgelab.studies.ranking.scorecache: every run of a dataset scored in one job, each run's scores
under each qrels kept by content digest. The table is byte for byte the one the per-run jobs
wrote before (each run scored alone, its file read back and the files concatenated); adding a run
scores only that run, a new qrels scores every run under it alone, a renamed run file is a hit,
changed bytes or another measure are misses; over 13 of the 63 DL21 runs too (skipped without the
shared data)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_ranking_correlation import shared_folder

from judgelab.data.readers import read_run
from judgelab.data.tables import write_tsv
from judgelab.errors import InputError
from judgelab.studies.ranking.scorecache import (
    SCORING_VERSION,
    ScoreCache,
    entry_key,
    library_versions,
    qrels_digest,
    score_all,
)
from judgelab.studies.ranking.scores import read_qrels_table, score_runs
from judgelab.studies.ranking.tables import read_scores

RUNS = {
    "a": "1 Q0 d1 1 3.0 a\n1 Q0 d2 2 2.0 a\n1 Q0 d3 3 1.0 a\n2 Q0 d4 1 2.0 a\n2 Q0 d5 2 1.0 a\n",
    "b": "1 Q0 d3 1 3.0 b\n1 Q0 d1 2 2.0 b\n2 Q0 d5 1 2.0 b\n2 Q0 d4 2 1.0 b\n",
    "c": "1 Q0 d2 1 1.0 c\n1 Q0 d9 2 1.0 c\n2 Q0 d4 1 5.0 c\n",
}
HUMAN = pd.DataFrame(
    {"qid": ["1", "1", "1", "2", "2"], "docid": ["d1", "d2", "d3", "d4", "d5"], "relevance": [3, 0, 1, 2, 0]}
)
JUDGE = HUMAN.assign(relevance=[2, 2, 0, 0, 3])
MEASURES = ["nDCG@10", "P(rel=2)@2"]


def per_run_jobs(
    run_files: dict[str, Path], qrels: list[tuple[str, pd.DataFrame]], measures, tmp: Path
) -> str:
    """What the per-run scoring jobs and the tables job wrote before: each run scored alone under
    every qrels into its own file, the files read back and concatenated into scores.tsv."""
    files = []
    for name, path in run_files.items():
        run = read_run(path, name)
        parts = []
        for qname, q in qrels:
            s = score_runs({name: run}, q, measures)
            s.insert(1, "qrels", qname)
            parts.append(s)
        files.append(tmp / "old" / f"{name}.tsv")
        write_tsv(pd.concat(parts, ignore_index=True), files[-1])
    out = tmp / "old" / "scores.tsv"
    write_tsv(pd.concat([read_scores(f) for f in files], ignore_index=True), out)
    return out.read_text()


def write_runs(folder: Path, runs: dict[str, str]) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, text in runs.items():
        out[name] = folder / f"{name}.txt"
        out[name].write_text(text)
    return out


def new_table(run_files, qrels, measures, cache: ScoreCache, tmp: Path) -> tuple[pd.DataFrame, str]:
    table = score_all(run_files, qrels, measures, cache, ["1", "2"])
    write_tsv(table, tmp / "new.tsv")
    return table, (tmp / "new.tsv").read_text()


def test_the_table_is_the_per_run_jobs_and_only_what_changed_is_scored(tmp_path):
    runs = write_runs(tmp_path / "runs", RUNS)
    qrels = [("human", HUMAN), ("j", JUDGE)]
    cache = ScoreCache(tmp_path / "cache")
    first, text = new_table({k: runs[k] for k in ("a", "b")}, qrels, MEASURES, cache, tmp_path)
    assert text == per_run_jobs({k: runs[k] for k in ("a", "b")}, qrels, MEASURES, tmp_path)
    assert (cache.hits, sorted(cache.misses)) == (0, [("a", "human"), ("a", "j"), ("b", "human"), ("b", "j")])
    assert list(first.columns) == ["run", "qrels", "measure", "topic", "value", "judged_at_k"]

    # one run more: only it is scored, and the table is still the per-run jobs' one
    cache = ScoreCache(tmp_path / "cache")
    _, text = new_table(runs, qrels, MEASURES, cache, tmp_path)
    assert text == per_run_jobs(runs, qrels, MEASURES, tmp_path)
    assert (cache.hits, cache.misses) == (4, [("c", "human"), ("c", "j")])

    # a new judge's qrels: every run under it, nothing else
    other = HUMAN.assign(relevance=[0, 3, 3, 1, 1])
    cache = ScoreCache(tmp_path / "cache")
    _, text = new_table(runs, [*qrels, ("k", other)], MEASURES, cache, tmp_path)
    assert text == per_run_jobs(runs, [*qrels, ("k", other)], MEASURES, tmp_path)
    assert (cache.hits, cache.misses) == (6, [("a", "k"), ("b", "k"), ("c", "k")])

    # the same qrels rows in another order, a run file renamed: hits; a run's bytes or the measures
    # changed: misses
    cache = ScoreCache(tmp_path / "cache")
    moved = tmp_path / "elsewhere" / "renamed.txt"
    moved.parent.mkdir()
    shutil.copy(runs["a"], moved)
    score_all({"a": moved}, [("human", HUMAN.iloc[::-1])], MEASURES, cache, ["1", "2"])
    assert (cache.hits, cache.misses) == (1, [])
    runs["b"].write_text(RUNS["b"].replace("2.0 b", "2.5 b"))
    score_all({"b": runs["b"]}, [("human", HUMAN)], MEASURES, cache, ["1", "2"])
    score_all({"a": runs["a"]}, [("human", HUMAN)], ["nDCG@10"], cache, ["1", "2"])
    assert (cache.hits, cache.misses) == (1, [("b", "human"), ("a", "human")])


def test_keys_digests_and_entries():
    assert qrels_digest(HUMAN) == qrels_digest(HUMAN.iloc[[4, 2, 0, 1, 3]])
    assert qrels_digest(HUMAN) != qrels_digest(JUDGE)
    v = library_versions()
    assert set(v) == {"ir-measures", "pytrec-eval-terrier"} and v["ir-measures"] != "absent"
    k = entry_key("r", "q", MEASURES, v)
    assert k == entry_key("r", "q", list(MEASURES), dict(reversed(list(v.items()))))
    assert len({k, entry_key("r", "q", MEASURES[::-1], v), entry_key("r", "q2", MEASURES, v)}) == 3
    assert entry_key("r", "q", MEASURES, {**v, "ir-measures": "0"}) != k
    assert SCORING_VERSION >= 1


def test_an_entry_is_written_whole_and_read_back_exactly(tmp_path):
    cache = ScoreCache(tmp_path / "c")
    rows = pd.DataFrame(
        {
            "measure": ["nDCG@10"] * 2,
            "topic": ["007", "all"],
            "value": [0.1 + 0.2, 1 / 3],
            "judged_at_k": [1.0, None],
        }
    )
    assert cache.get("ab" * 32) is None
    cache.put("ab" * 32, rows)
    back = cache.get("ab" * 32)
    assert back is not None and list(back["topic"]) == ["007", "all"]
    assert back["value"].tolist() == rows["value"].tolist() and pd.isna(back["judged_at_k"].iloc[1])
    assert [p.name for p in (tmp_path / "c" / "ab").iterdir()] == [f"{'ab' * 32}.tsv"]  # no temporary left


def test_a_run_naming_no_judged_topic_is_an_error_only_when_it_is_scored(tmp_path):
    runs = write_runs(tmp_path / "runs", {"x": "77 Q0 d1 1 1.0 x\n"})
    with pytest.raises(InputError) as err:
        score_all(runs, [("human", HUMAN)], MEASURES, ScoreCache(tmp_path / "cache"), ["1", "2"])
    assert err.value.path == str(runs["x"]) and err.value.line == 1


def changed_grades(qrels: pd.DataFrame, share: float, seed: int) -> pd.DataFrame:
    """An imported-style judge: the qrels with a seeded ``share`` of the grades moved to another
    grade (as tests/ranking/test_ranking_correlation.py makes one)."""
    rng = np.random.default_rng(seed)
    rel = qrels["relevance"].to_numpy().copy()
    change = rng.random(len(rel)) < share
    rel[change] = (rel[change] + rng.integers(1, 4, int(change.sum()))) % 4
    return qrels.assign(relevance=rel)


def dl21(shared: Path) -> tuple[dict[str, Path], pd.DataFrame]:
    files = sorted((shared / "trec-dl-runs" / "dl21").glob("input.*.txt"))
    assert len(files) == 63
    runs = {f.name[len("input.") : -len(".txt")]: f for f in files}
    return runs, read_qrels_table(shared / "trec-dl" / "qrels.dl21-passage.txt")


def test_dl21_one_job_equals_the_per_run_jobs_and_a_new_run_is_the_only_one_scored(tmp_path):
    all_runs, human = dl21(shared_folder())
    # every fifth of the 63 runs (13): the per-run jobs' equality on real runs; the workflow test
    # (test_ranking_workflow.py) adds a run to all 63 through Snakemake
    runs = {n: all_runs[n] for n in sorted(all_runs)[::5]}
    judge = changed_grades(human, 0.2, seed=3)
    *first, last = runs
    qrels = [("human", human), ("flip", judge)]
    topics = human["qid"].unique()
    cache = ScoreCache(tmp_path / "cache")
    score_all({n: runs[n] for n in first}, qrels, ["nDCG@10"], cache, topics)
    assert (cache.hits, len(cache.misses)) == (0, 12 * 2)
    cache = ScoreCache(tmp_path / "cache")
    table = score_all(runs, qrels, ["nDCG@10"], cache, topics)
    assert (cache.hits, cache.misses) == (12 * 2, [(last, "human"), (last, "flip")])
    write_tsv(table, tmp_path / "new.tsv")
    assert (tmp_path / "new.tsv").read_text() == per_run_jobs(runs, qrels, ["nDCG@10"], tmp_path)
