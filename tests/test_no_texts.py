"""A dataset judged only by imported or published judges needs no passage texts (issue 40): where no
live model reads its passages (PERAS's live cells, the overrating study's live judges, the
perturbations, the ranking study's live judges or systems), `source: files` may leave `texts` out
and `source: download` fetches the qrels and topics only; the prepare job takes no texts and the
table's passage column is empty. A live judge on such a dataset is one error naming
`datasets.<name>.texts`. The data: 40 pairs of the LLMJudge test qrels and one LLMJudge
submission's labels of them (tests/fixtures/llmjudge_test, no passage file)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT
from sklearn.metrics import cohen_kappa_score
from snakerun import dry_run_jobs, make_workdir, output, snakemake

from judgelab import cli
from judgelab.data.prepare import build_table
from judgelab.data.readers import read_qrels
from judgelab.data.tables import read_dataset
from judgelab.errors import InputError
from judgelab.project.stages import download_job, prepare_dataset_job
from judgelab.studies.ranking.pool import pool_table
from judgelab.wiring.facade import Project

FX = ROOT / "tests" / "fixtures" / "llmjudge_test"
QRELS, QUERIES, OLZ = FX / "qrels.txt", FX / "queries.txt", FX / "Olz-exp.txt"


def human() -> dict[tuple[str, str], int]:
    return {(q.qid, q.docid): q.grade for q in read_qrels(QRELS)}


def olz() -> dict[tuple[str, str], int]:
    return {(q.qid, q.docid): q.grade for q in read_qrels(OLZ)}


def lj(**extra) -> dict:
    """The LLMJudge cut as a dataset of `source: files` without texts."""
    return {"source": "files", "format": "llmjudge", "qrels": str(QRELS), "topics": str(QUERIES), **extra}


def project(tmp_path: Path, overlay: dict) -> Project:
    """The project of a run folder of `.test/byo` (no live judge, the imported judge `mine` on the
    bundled DL19 sample) with ``overlay`` as a --configfile."""
    wd = make_workdir(tmp_path / "run", "byo")
    over = tmp_path / "over.yaml"
    over.write_text(yaml.safe_dump(overlay))
    return Project.load([str(over)], wd, ROOT)


def imported_only(**datasets) -> dict:
    """An overlay: ``datasets`` (default `lj`), the LLMJudge submission `olz` labelling them, no
    live judge."""
    datasets = datasets or {"lj": lj()}
    return {
        "datasets": datasets,
        "imported_judges": {"olz": {"path": str(OLZ), "datasets": list(datasets)}},
        "peras": {"judges": []},
    }


# -- the table --------------------------------------------------------------------------------


def test_the_table_without_texts_has_every_judged_pair_and_empty_passages(tmp_path):
    table = build_table("lj", "llmjudge", QRELS, QUERIES, None)
    assert len(table) == 40 and set(table["passage"]) == {""}
    assert dict(zip(zip(table["qid"], table["docid"]), table["grade"])) == human()
    assert table.set_index("qid").loc["q22", "query"].iloc[0] == "how to unlock the word document"
    # the qrels and topics are still read and checked: a query without text names its line
    bad = tmp_path / "q.txt"
    bad.write_text("q49 0 p1 3\nq999 0 p2 1\n")
    with pytest.raises(InputError, match=r"q\.txt:2: query q999 has no text"):
        build_table("lj", "llmjudge", bad, QUERIES, None)
    # the TREC format alike; the table reads back with its empty passages as empty strings
    trec = ROOT / "tests" / "fixtures" / "trec"
    full, subset = prepare_table_of(trec / "qrels.txt", trec / "topics.txt", tmp_path / "t.tsv")
    assert len(full) == 8 and read_dataset(tmp_path / "t.tsv")["passage"].tolist() == [""] * len(subset)


def prepare_table_of(qrels: Path, topics: Path, out: Path):
    sel = {"format": "trec", "encoding": "utf-8", "queries": [], "per_grade": 1, "seed": 0}
    subset = prepare_dataset_job("fx", str(qrels), str(topics), sel, str(out))
    return build_table("fx", "trec", qrels, topics, None), subset


def test_judgelab_prepare_takes_no_texts(tmp_path):
    out = tmp_path / "lj.tsv"
    argv = ["prepare", "lj", "--format", "llmjudge", "--qrels", str(QRELS), "--topics", str(QUERIES)]
    assert cli.main([*argv, "--out", str(out)]) in (0, None)
    assert len(read_dataset(out)) == 40 and set(read_dataset(out)["passage"]) == {""}


def test_a_pool_of_a_table_without_texts_has_no_known_text():
    table = build_table("lj", "llmjudge", QRELS, QUERIES, None)
    run = table[["qid", "docid"]].assign(rank=1, score=1.0, tag="r")
    pool = pool_table({"r": run}, table, 10)
    assert len(pool) == 20 and not pool["text_known"].any() and set(pool["passage"]) == {""}


# -- the project ------------------------------------------------------------------------------


def test_a_dataset_only_imported_judges_label_takes_no_texts(tmp_path):
    p = project(tmp_path, imported_only())
    assert p.studies == ["peras", "overrating"] and ("lj", "olz", "imported") in p.plan("peras").groups
    assert not p.needs_texts("lj") and p.text_readers("lj") == []
    # the prepare job's inputs and params: qrels and topics, nothing bundled, no texts anywhere
    inputs = p.raw_inputs("lj")
    assert sorted(inputs) == ["qrels", "topics"]
    assert [p.local(f).resolve() for f in inputs.values()] == [QRELS, QUERIES]
    assert json.loads(p.raw_bundled("lj")) == {} and "texts" not in json.dumps(p.selection("lj"))
    # texts that are at hand are read all the same: the bundled sample's (no live judge either)
    assert not p.needs_texts("dl19") and "texts" in json.loads(p.raw_bundled("dl19"))


def test_a_live_judge_on_a_dataset_without_texts_is_one_error_naming_the_key(tmp_path):
    with pytest.raises(InputError) as err:
        project(
            tmp_path / "a",
            {
                **imported_only(),
                "judges": ["smollm2"],
                # named: a study's `datasets: null` takes only the datasets with passage texts
                "peras": {"judges": ["smollm2"], "datasets": ["lj"]},
                "overrating": {"enabled": False},
            },
        )
    assert err.value.key == "datasets.lj.texts"
    assert "peras (live judges smollm2) read them" in err.value.message
    assert 'passage JSONL ({"docid", "doc"} per line)' in err.value.message
    # `datasets: null` (every dataset with texts): lj, without, is left to the imported judge
    p = project(tmp_path / "n", {**imported_only(), "judges": ["smollm2"], "peras": {"judges": ["smollm2"]}})
    assert "lj" not in p.plan("peras").datasets and not p.needs_texts("lj")
    # PERAS's live cells on another dataset only: lj needs no texts
    cells = {"judges": ["smollm2"], "datasets": ["dl19"]}
    p = project(tmp_path / "b", {**imported_only(), "peras": cells})
    assert p.text_readers("dl19") == ["peras"] and not p.needs_texts("lj")
    # the ranking study's systems rank the passages: no live judge, still the texts
    ranking = {
        "enabled": True,
        "judges": [],
        "runs": {"lj": {"source": "systems"}},
        "systems": {"len": {"kind": "length"}, "rnd": {"kind": "random", "seed": 0}},
        "imported_judges": ["olz"],
        "ppi": {"enabled": False},
    }
    with pytest.raises(InputError) as err:
        project(tmp_path / "c", {**imported_only(), "ranking": ranking})
    assert err.value.key == "datasets.lj.texts"
    assert "ranking (its systems: ranking.runs.lj.source: systems)" in err.value.message


def test_a_download_without_texts_fetches_the_qrels_and_topics_only(tmp_path):
    urls = {"qrels": QRELS.as_uri(), "topics": QUERIES.as_uri()}
    p = project(tmp_path, imported_only(lj={"source": "download", "format": "llmjudge", "urls": urls}))
    assert (
        p.download_urls("lj") == urls and p.downloads(texts=False) == ["lj"] and p.downloads(texts=True) == []
    )
    raw = p.raw_inputs("lj")
    assert raw == {"qrels": "results/raw/lj/qrels.raw", "topics": "results/raw/lj/topics.raw"}
    # what the download job does with the rule's param and outputs
    outputs = {k: str(tmp_path / f) for k, f in raw.items()}
    download_job(p.download_urls("lj"), outputs)
    assert sorted(f.name for f in (tmp_path / "results" / "raw" / "lj").glob("*.raw")) == [
        "qrels.raw",
        "topics.raw",
    ]
    assert Path(outputs["qrels"]).read_bytes() == QRELS.read_bytes()
    table = prepare_dataset_job(
        "lj", outputs["qrels"], outputs["topics"], p.selection("lj"), str(tmp_path / "t.tsv")
    )
    assert len(table) == 40 and set(table["passage"]) == {""}
    # a public source alike: no URL of the texts (nothing is fetched here)
    p = project(tmp_path / "pub", imported_only(llmjudge={"source": "download", "format": "llmjudge"}))
    assert sorted(p.download_urls("llmjudge")) == ["qrels", "topics"]
    # with a live judge the texts are fetched: overrides without their URL name the key
    with pytest.raises(InputError, match=r"datasets\.lj\.urls'?: no URL for \['texts'\]"):
        project(
            tmp_path / "live",
            {
                **imported_only(lj={"source": "download", "format": "llmjudge", "urls": urls}),
                "peras": {"judges": ["smollm2"]},
            },
        )


# -- the workflow -----------------------------------------------------------------------------


def runs(folder: Path) -> list[Path]:
    """Three runs over the 40 pairs: qrels order, reversed, and the submission's labels first."""
    folder.mkdir()
    pairs = list(human())
    labels = olz()
    orders = {
        "fwd": pairs,
        "rev": pairs[::-1],
        "olz": sorted(pairs, key=lambda k: -labels[k]),
    }
    out = []
    for name, order in orders.items():
        lines, rank = [], {}
        for qid, docid in order:
            rank[qid] = rank.get(qid, 0) + 1
            lines.append(f"{qid} Q0 {docid} {rank[qid]} {100 - rank[qid]} {name}")
        f = folder / f"input.{name}.txt"
        f.write_text("\n".join(lines) + "\n")
        out.append(f)
    return out


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """`.test/byo` with two LLMJudge datasets without texts - `lj` (source files: qrels and topics)
    and `ljd` (source download from file:// URLs) - labelled by its imported judge `mine`, here the
    LLMJudge submission Olz-exp (imports/{dataset}.qrels), scored by PERAS and the ranking study
    (three run files of `lj`); no live judge. The run of PERAS's metrics and `ranking`, and its
    output (each job's rule, inputs and outputs)."""
    base = tmp_path_factory.mktemp("notexts")
    wd = make_workdir(base / "run", "byo")
    for d in ("lj", "ljd"):
        (wd / "imports" / f"{d}.qrels").write_bytes(OLZ.read_bytes())
    runs(wd / "runs")
    urls = {"qrels": QRELS.as_uri(), "topics": QUERIES.as_uri()}
    overlay = {
        "datasets": {"lj": lj(), "ljd": {"source": "download", "format": "llmjudge", "urls": urls}},
        "imported_judges": {"mine": {"datasets": ["lj", "ljd"]}},  # its DL19 file: not here
        "peras": {"judges": []},
        "ranking": {
            "enabled": True,
            "judges": [],
            "runs": {"lj": {"source": "files", "paths": ["runs/input.*.txt"]}},
            "imported_judges": ["mine"],
            "measures": ["nDCG@10"],
            "ppi": {"enabled": False},
            "circularity": {"enabled": False},
            "correlation": {"n_boot": 100},
            "figures": False,
        },
    }
    over = base / "over.yaml"
    over.write_text(yaml.safe_dump(overlay))
    # PERAS's metrics table (its figures, significance and classifier add nothing here)
    run = snakemake(wd, "results/peras/metrics/metrics.tsv", "ranking", "--configfile", str(over))
    assert run.returncode == 0, output(run)[-4000:]
    return wd, output(run)


def job_blocks(text: str, rule: str) -> dict[str, str]:
    """The block of each job of ``rule`` in a run's output, by its dataset wildcard."""
    blocks = {}
    for block in text.split("\n\n"):
        jobs = dry_run_jobs(block)
        if jobs and jobs[0][0] == rule:
            blocks[jobs[0][1]["dataset"]] = block
    return blocks


@pytest.mark.slow
def test_the_prepare_jobs_take_no_texts_and_the_download_fetches_qrels_and_topics(workdir):
    wd, text = workdir
    prepare = job_blocks(text, "prepare_dataset")
    inputs = {d: next(line for line in prepare[d].splitlines() if "input:" in line) for d in ("lj", "ljd")}
    assert "queries.txt" in inputs["lj"] and "qrels.txt" in inputs["lj"] and inputs["lj"].count(",") == 1
    assert inputs["ljd"].split("input: ")[1] == "results/raw/ljd/qrels.raw, results/raw/ljd/topics.raw"
    download = job_blocks(text, "download_qrels_topics")
    assert list(download) == ["ljd"] and "rule download_dataset:" not in text
    assert "output: results/raw/ljd/qrels.raw, results/raw/ljd/topics.raw\n" in download["ljd"] + "\n"
    assert sorted(p.name for p in (wd / "results" / "raw" / "ljd").glob("*.raw")) == [
        "qrels.raw",
        "topics.raw",
    ]
    for d in ("lj", "ljd"):
        table = read_dataset(wd / "results" / "datasets" / f"{d}.tsv")
        assert len(table) == 40 and set(table["passage"]) == {""}
        log = (wd / "results" / "logs" / "datasets" / f"{d}.log").read_text()
        assert "no passage texts (no live model reads them)" in log


@pytest.mark.slow
def test_peras_scores_the_imported_judge_as_scikit_learn(workdir):
    wd, _ = workdir
    metrics = pd.read_csv(
        wd / "results" / "peras" / "metrics" / "metrics.tsv", sep="\t", dtype={"persona": str}
    )
    h, j = human(), olz()
    y, yhat = [h[k] for k in h], [j[k] for k in h]
    assert sorted(metrics["dataset"]) == ["lj", "ljd"]
    for _, row in metrics.iterrows():
        assert (row["model"], row["persona"], row["n_pairs"], row["n_parsed"]) == ("mine", "default", 40, 40)
        assert row["kappa"] == pytest.approx(cohen_kappa_score(y, yhat), abs=1e-12)
        assert row["qwk"] == pytest.approx(cohen_kappa_score(y, yhat, weights="quadratic"), abs=1e-12)


@pytest.mark.slow
def test_the_ranking_study_scores_the_runs_under_the_imported_labels_as_pytrec_eval(workdir):
    import pytrec_eval

    wd, _ = workdir
    res = wd / "results" / "ranking" / "lj"
    pool = pd.read_csv(res / "pool.tsv", sep="\t", keep_default_na=False, dtype=str)
    assert len(pool) > 20 and set(pool["text_known"]) == {"False"}  # no text, none needed
    assert all(pool["mine"] == [str(olz()[k]) for k in zip(pool["qid"], pool["docid"])])
    scores = pd.read_csv(res / "scores.tsv", sep="\t", dtype={"run": str, "qrels": str, "topic": str})
    for qrels_name, labels in (("human", human()), ("mine", olz())):
        qrels: dict[str, dict[str, int]] = {}
        for (q, d), g in labels.items():
            qrels.setdefault(q, {})[d] = g
        for f in sorted((wd / "runs").glob("input.*.txt")):
            run: dict[str, dict[str, float]] = {}
            for line in f.read_text().splitlines():
                q, _, d, _, s, _ = line.split()
                run.setdefault(q, {})[d] = float(s)
            per_topic = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
            want = {q: v["ndcg_cut_10"] for q, v in per_topic.items()}
            want["all"] = sum(want.values()) / len(per_topic)
            name = f.name.split(".")[1]
            mine = scores[(scores["run"] == name) & (scores["qrels"] == qrels_name)]
            got = dict(zip(mine["topic"], mine["value"]))
            assert got == pytest.approx(want, abs=1e-9), (name, qrels_name)
