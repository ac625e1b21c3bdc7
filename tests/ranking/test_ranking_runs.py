"""judgelab.studies.ranking.runs: reading TREC runs, names, the DL21 run list and download,
trec_eval's document order and the pool."""

from __future__ import annotations

import os
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest

from judgelab.data.readers import RUN_COLUMNS, read_run, run_name
from judgelab.errors import InputError
from judgelab.studies.ranking.runs import (
    DL21_RUNS_BASE,
    check_topics,
    dl21_run_names,
    download_runs,
    pool,
    read_runs,
    run_urls,
    top_k,
)

ROOT = Path(__file__).resolve().parents[2]
RANKING = ROOT / "tests" / "fixtures" / "ranking"


def shared_folder() -> Path:
    """The shared real data: ``ROOT.parent/shared/data``, else ``$JUDGELAB_SHARED``; skip if neither."""
    for folder in (ROOT.parent / "shared" / "data", os.environ.get("JUDGELAB_SHARED")):
        if folder and Path(folder).is_dir():
            return Path(folder)
    pytest.skip(f"no shared data: {ROOT.parent / 'shared' / 'data'} is absent and JUDGELAB_SHARED is unset")


def write(tmp_path: Path, text: str, name: str = "input.bad.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- reading ------------------------------------------------------------------------------------


def test_read_run_fixture():
    run = read_run(RANKING / "input.sysA.txt")
    assert list(run.columns) == RUN_COLUMNS
    assert run.attrs["name"] == "sysA" and run.attrs["first_line"] == 1
    assert len(run) == 8
    assert run.iloc[0].to_dict() == {"qid": "1", "docid": "d2", "rank": 1, "score": 2.0, "tag": "sysA"}
    assert run["rank"].dtype == np.int64 and run["score"].dtype == np.float64
    assert all(isinstance(v, str) for v in run["qid"]) and all(isinstance(v, str) for v in run["docid"])


def test_read_run_tabs_and_blank_lines(tmp_path):
    path = write(tmp_path, "\n\n7\tQ0\td1\t1\t0.5\tx\n\n7 Q0 d2 2 -1e3 x\n", "mine.trec")
    run = read_run(path)
    assert run.attrs["name"] == "mine" and run.attrs["first_line"] == 3
    assert run["docid"].tolist() == ["d1", "d2"] and run["score"].tolist() == [0.5, -1000.0]


@pytest.mark.parametrize(
    "file_name, given, expected",
    [
        ("input.p_bm25.txt", None, "p_bm25"),
        ("input.TUW_TAS-B_768.txt", None, "TUW_TAS-B_768"),
        ("bm25.run", None, "bm25"),
        ("bm25.trec", None, "bm25"),
        ("input.x.gz", None, "x.gz"),
        ("plain", None, "plain"),
        ("input.p_bm25.txt", "mine", "mine"),
    ],
)
def test_run_name(file_name, given, expected):
    assert run_name(Path("/some/dir") / file_name, given) == expected


def test_run_name_empty_is_an_error():
    with pytest.raises(InputError, match=r"input\.\.txt: cannot name the run"):
        run_name("input..txt")


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("1 Q0 d1 1 0.5 t\n1 Q0 d2 2 0.4\n", 2, "expected 6 fields 'qid Q0 docid rank score tag', got 5"),
        ("1 Q0 d1 1 0.5 t extra\n", 1, "got 7"),
        ("1 Q0 d1 1 0.5 t\n1 Q0 d2 2.0 0.4 t\n", 2, "rank '2.0' is not an integer"),
        ("1 Q0 d1 one 0.5 t\n", 1, "rank 'one' is not an integer"),
        ("1 Q0 d1 1 high t\n", 1, "score 'high' is not a number"),
        ("1 Q0 d1 1 nan t\n", 1, "score 'nan' is not a finite number"),
        (
            "1 Q0 d1 1 0.5 t\n2 Q0 d1 1 0.5 t\n\n1 Q0 d1 3 0.1 t\n",
            4,
            "docid d1 is listed twice for topic 1 (line 1 and line 4)",
        ),
    ],
)
def test_read_run_errors_name_file_and_line(tmp_path, text, line, message):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as exc:
        read_run(path)
    assert str(exc.value).startswith(f"{path}:{line}: ")
    assert message in str(exc.value)


@pytest.mark.parametrize("text", ["", "\n  \n\t\n"])
def test_read_run_empty_file(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=r"input\.bad\.txt: the run file has no line"):
        read_run(path)


def test_read_run_bad_bytes_named(tmp_path):
    path = tmp_path / "input.latin.txt"
    path.write_bytes(b"1 Q0 d1 1 0.5 t\n1 Q0 d\xe92 2 0.4 t\n")
    with pytest.raises(InputError, match=rf"{path}:2: not valid utf-8"):
        read_run(path)


def test_check_topics(tmp_path):
    run = read_run(RANKING / "input.sysA.txt")
    assert check_topics(run, RANKING / "input.sysA.txt", ["2", "1", "5"]) == ["1", "2"]
    other = read_run(write(tmp_path, "\n\n9001 Q0 x 1 1 t\n9002 Q0 y 1 1 t\n", "input.other.txt"))
    with pytest.raises(InputError) as exc:
        check_topics(other, tmp_path / "input.other.txt", ["1", "2"])
    assert str(exc.value).startswith(f"{tmp_path / 'input.other.txt'}:3: the run names none of the 2")
    assert "9001, 9002" in str(exc.value)


def test_read_runs_names_and_duplicates(tmp_path):
    runs = read_runs([RANKING / "input.sysA.txt", RANKING / "sysB.run"])
    assert list(runs) == ["sysA", "sysB"] and len(runs["sysB"]) == 6
    assert list(read_runs({"a": RANKING / "sysB.run"})) == ["a"]
    (tmp_path / "d").mkdir()
    copy = tmp_path / "d" / "sysA.trec"
    copy.write_bytes((RANKING / "input.sysA.txt").read_bytes())
    with pytest.raises(InputError) as exc:
        read_runs([RANKING / "input.sysA.txt", copy])
    assert str(exc.value).startswith(
        f"{copy}: run name 'sysA' is also the name of the run in {RANKING / 'input.sysA.txt'}"
    )


# --- the DL21 runs --------------------------------------------------------------------------------


def test_dl21_run_names_bundled():
    names = dl21_run_names()
    assert len(names) == 63 == len(set(names))
    assert "p_bm25" in names and "TUW_TAS-B_768" in names


def test_dl21_run_names_match_the_shared_files():
    folder = shared_folder() / "trec-dl-runs" / "dl21"
    files = sorted(run_name(p) for p in folder.glob("input.*.txt"))
    assert sorted(dl21_run_names()) == files


def test_run_urls():
    urls = run_urls(["p_bm25", "yorku21_a"])
    assert urls["p_bm25"] == (
        "https://raw.githubusercontent.com/Narabzad/llm-relevance-judgement-comparison"
        "/main/runs/dl21/input.p_bm25.txt"
    )
    assert urls["yorku21_a"] == f"{DL21_RUNS_BASE}/input.yorku21_a.txt"
    assert run_urls(["x"], base="file:///m/") == {"x": "file:///m/input.x.txt"}


def test_download_runs_fixture(tmp_path):
    urls = run_urls(["sysA"], base=RANKING.as_uri())
    got = download_runs(urls, tmp_path / "runs")
    assert got == {"sysA": tmp_path / "runs" / "input.sysA.txt"}
    assert got["sysA"].read_bytes() == (RANKING / "input.sysA.txt").read_bytes()
    names = sorted(p.name for p in (tmp_path / "runs").iterdir())
    # no .part left; the download's record (bytes, sha256, url) beside the file
    assert names == ["input.sysA.txt", "input.sysA.txt.download.json"]


def test_download_runs_missing_source_leaves_nothing(tmp_path):
    with pytest.raises(OSError):
        download_runs(run_urls(["absent"], base=RANKING.as_uri()), tmp_path / "runs")
    assert list((tmp_path / "runs").iterdir()) == []


def test_download_the_63_dl21_runs_from_file_urls(tmp_path):
    folder = shared_folder() / "trec-dl-runs" / "dl21"
    names = dl21_run_names()
    got = download_runs(run_urls(names, base=folder.as_uri()), tmp_path)
    assert sorted(got) == sorted(names)
    for name, path in got.items():
        assert path.read_bytes() == (folder / f"input.{name}.txt").read_bytes()
    runs = read_runs(got.values())
    assert sorted(runs) == sorted(names)
    assert all(r["qid"].nunique() == 53 for r in runs.values())


# --- trec_eval's order and the pool ---------------------------------------------------------------


def test_top_k_order_score_then_docid_descending():
    run = read_run(RANKING / "input.sysA.txt")
    top = top_k(run, 10)
    assert list(zip(top["qid"], top["docid"])) == [
        ("1", "d3"),
        ("1", "d1"),
        ("1", "dX"),
        ("1", "d4"),
        ("1", "d2"),
        ("2", "e2"),
        ("2", "e1"),
        ("99", "z1"),
    ]
    two = top_k(run, 2)
    assert two.groupby("qid").size().to_dict() == {"1": 2, "2": 2, "99": 1}
    assert list(top.columns) == RUN_COLUMNS


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_top_k_rejects_bad_k(k):
    with pytest.raises(ValueError):
        top_k(read_run(RANKING / "sysB.run"), k)


def dcg(gains: list[int]) -> float:
    """trec_eval's DCG: gain = grade, discount log2(rank + 1)."""
    return sum(g / np.log2(i + 2) for i, g in enumerate(gains))


def test_pytrec_eval_breaks_ties_as_top_k():
    """The tie order of top_k is pytrec_eval's (trec_eval's code through ir-measures): on runs full of
    ties, nDCG@5 from ir-measures equals nDCG@5 of the top_k order computed here by hand."""
    rng = np.random.default_rng(7)
    docs = [f"doc{i:02d}" for i in range(20)]
    grades = {d: int(g) for d, g in zip(docs, rng.integers(0, 4, size=20))}
    qrels = pd.DataFrame({"query_id": "q", "doc_id": docs, "relevance": [grades[d] for d in docs]})
    ideal = dcg(sorted(grades.values(), reverse=True)[:5])
    measure = ir_measures.parse_measure("nDCG@5")
    for trial in range(20):
        scores = rng.integers(0, 3, size=20).astype(float)  # three score values: many ties
        order = rng.permutation(20)
        run = pd.DataFrame(
            {
                "qid": "q",
                "docid": [docs[i] for i in order],
                "rank": range(1, 21),
                "score": scores[order],
                "tag": "t",
            }
        )
        mine = dcg([grades[d] for d in top_k(run, 5)["docid"]]) / ideal
        irm = ir_measures.calc_aggregate(
            [measure],
            qrels,
            run.rename(columns={"qid": "query_id", "docid": "doc_id"})[["query_id", "doc_id", "score"]],
        )[measure]
        assert irm == pytest.approx(mine, abs=1e-12), trial


def test_pool():
    runs = read_runs([RANKING / "input.sysA.txt", RANKING / "sysB.run"])
    got = pool(runs, 2)
    assert list(got.itertuples(index=False, name=None)) == [
        ("1", "d1", 2),
        ("1", "d2", 1),
        ("1", "d3", 1),
        ("2", "e1", 2),
        ("2", "e2", 2),
        ("99", "z1", 1),
    ]
    only = pool(runs, 10, qids=[1])
    assert only["docid"].tolist() == ["d1", "d2", "d3", "d4", "d5", "dX"]
    assert only["n_runs"].tolist() == [2, 2, 1, 2, 1, 1]
    assert pool(runs, 2, qids=["404"]).empty
    assert list(pool({}, 2).columns) == ["qid", "docid", "n_runs"]
