"""The sensitivity study as a workflow (.test/sensitivity): GPT-4o's published DL21 files of three
prompts, copied from the shared mirror with their digests checked, against the full DL21 qrels; no
model call. One run shared by the file's tests; skipped without ../shared/data."""

from __future__ import annotations

import pandas as pd
import pytest
from snakerun import dry_run_jobs, make_workdir, output, snakemake

from judgelab.studies.sensitivity.published import read_pointwise
from judgelab.studies.sensitivity.science import pointwise_row

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def run(tmp_path_factory, request):
    from conftest import SHARED

    if not SHARED.exists():
        pytest.skip(f"{SHARED} is absent (real data is only beside the repository in CI)")
    wd = make_workdir(tmp_path_factory.mktemp("sensitivity") / "wd", "sensitivity")
    (wd / "shared").symlink_to(SHARED)
    done = snakemake(wd, "sensitivity")
    assert done.returncode == 0, output(done)
    return wd


def test_the_tables_from_the_published_files(run):
    agreement = pd.read_csv(run / "results/sensitivity/tables/agreement.tsv", sep="\t", dtype={"prompt": str})
    assert sorted(zip(agreement["type"], agreement["prompt"])) == sorted(
        [(t, p) for t in ("binary", "graded", "pairwise") for p in ("0", "16")] + [("graded", "32")]
    )
    qrels = pd.read_csv(run / "shared/trec-dl/qrels.dl21-passage.txt", sep=r"\s+", header=None, dtype=str)
    grades = {(q, d): int(g) for q, d, g in zip(qrels[0], qrels[2], qrels[3])}
    published = run / "shared/prompt-sensitivity/Judgements/gpt-4o/graded/gpt-4o_graded_dl21_0.txt"
    row = agreement[(agreement["type"] == "graded") & (agreement["prompt"] == "0")].iloc[0]
    expected = pointwise_row("graded", read_pointwise(published, "graded", grades), 1854)
    for c in ("kappa", "weighted_kappa", "alpha", "coverage"):
        assert row[c] == pytest.approx(expected[c]), c
    # UMBRELA's file labels all 10,828 DL21 pairs; it is compared on the prompts' 1,854
    umbrela = agreement[agreement["group"] == "umbrela"].iloc[0]
    assert (umbrela["lines"], umbrela["n"]) == (10828, 1854)
    pairwise = agreement[agreement["type"] == "pairwise"]
    assert ((pairwise["agree"] + pairwise["disagree"] + pairwise["tie"]).round(12) == 1).all()
    spread = pd.read_csv(run / "results/sensitivity/tables/spread.tsv", sep="\t")
    graded = spread[spread["type"] == "graded"].iloc[0]
    assert graded["prompts"] == 2 and graded["umbrela"] == pytest.approx(umbrela["kappa"])
    for f in ("groups.md", "spread.html", "agreement.tex"):
        assert (run / "results/sensitivity/tables" / f).stat().st_size > 0
    assert (run / "results/sensitivity/figures/agreement.png").stat().st_size > 0


def test_a_new_seed_reruns_the_tables_only(run):
    """The bootstrap's seed is a tracked param of the tables job: changing it reruns that job and
    nothing before it (the downloads and the agreement stay as they are)."""
    (run / "seed.yaml").write_text("sensitivity: {bootstrap: {seed: 7}}\n", encoding="utf-8")
    dry = snakemake(run, "sensitivity", "-n", "--configfile", str(run / "seed.yaml"))
    assert dry.returncode == 0, output(dry)
    assert {rule for rule, _ in dry_run_jobs(output(dry))} == {"sensitivity_tables", "sensitivity"}
