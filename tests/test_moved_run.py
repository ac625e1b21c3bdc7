"""A researcher's own labels through the real workflow with no model, and a finished run that
stays done when its folder moves relative to the workflow, or the workflow moves (issue 26, case
5): the bundled sample is tracked by name and content (a ``bundled`` param), not by its path from
the run folder; editing a bundled file still reruns the jobs that read it.

The run is `.test/byo` (no model, `judges: []`: an imported judge file that labels the whole
bundled DL19 sample while the dataset keeps 2 pairs per grade, persona `default` only, scored by
PERAS and diagnosed by the overrating study) plus the simulation's records of the bundled PandaLM
sample. The "Bring your own" commands of docs/changing.md run in tests/test_bring_your_own.py."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from snakerun import copy_checkout, dry_run_jobs, make_workdir, output, snakemake

from judgelab.errors import InputError
from judgelab.project import bundled

pytestmark = pytest.mark.slow

TARGETS = ("all", "results/simulation/pandalm/records.jsonl")
NOTHING = "Nothing to be done"


def env_for(workflow: Path) -> dict:
    """The environment of a run of the workflow at ``workflow`` (its own package), without keys."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(workflow / "workflow" / "src")
    return env


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    """A finished run of its workflow copy (nothing to do after it), then the run folder moved one
    level deeper."""
    base = tmp_path_factory.mktemp("moved")
    workflow = copy_checkout(base / "judgelab")
    run = make_workdir(base / "runs" / "run", "byo")
    done = snakemake(run, *TARGETS, snakefile=workflow / "Snakefile")
    assert done.returncode == 0, output(done)[-3000:]
    again = snakemake(run, "-n", *TARGETS, snakefile=workflow / "Snakefile")
    assert again.returncode == 0, output(again)[-3000:]
    assert NOTHING in output(again), output(again)[-3000:]
    (base / "runs" / "deeper").mkdir()
    there = base / "runs" / "deeper" / "run"
    run.rename(there)
    return workflow, there


def test_an_imported_judge_is_scored_by_peras_and_diagnosed_by_the_overrating_study(moved):
    _, run = moved
    res = run / "results"
    summary = pd.read_csv(res / "peras" / "imported" / "dl19" / "mine" / "imported" / "default.tsv", sep="\t")
    assert summary[["labelled", "in_selection", "outside_selection", "unlabelled"]].values.tolist() == [
        [24, 8, 16, 0]
    ]
    log = (res / "logs" / "peras" / "import" / "dl19" / "mine" / "imported" / "default.log").read_text()
    assert "16 outside it (skipped" in log
    metrics = pd.read_csv(res / "peras" / "metrics" / "metrics.tsv", sep="\t")
    assert metrics[["model", "persona", "n_pairs", "n_parsed"]].values.tolist() == [["mine", "default", 8, 8]]
    # every third pair of the file is one grade above the human's (an overrating judge): on the
    # 8 selected pairs, the same kappa as scikit-learn's
    from sklearn.metrics import cohen_kappa_score

    table = pd.read_csv(res / "datasets" / "dl19.tsv", sep="\t", dtype=str)
    labels = {
        (q, d): int(g)
        for q, _, d, g, _ in (
            line.split()
            for line in (run / "imports" / "dl19.qrels").read_text().splitlines()
            if line[0] != "#"
        )
    }
    y, yhat = [int(g) for g in table["grade"]], [labels[k] for k in zip(table["qid"], table["docid"])]
    assert metrics["kappa"].iloc[0] == pytest.approx(cohen_kappa_score(y, yhat))
    assert "| dl19 | mine |" in (res / "overrating" / "tables" / "table1.md").read_text()


def test_the_run_and_its_workflow_copied_elsewhere_have_nothing_to_do(moved, tmp_path):
    """The finished run and its workflow, copied (file times kept) to another place, run with the
    copy's own package."""
    workflow, run = moved
    second = tmp_path / "second"
    shutil.copytree(workflow.parent, second, symlinks=True)
    wf2 = second / workflow.name
    dry = snakemake(
        second / run.relative_to(workflow.parent),
        "-n",
        *TARGETS,
        env=env_for(wf2),
        snakefile=wf2 / "Snakefile",
    )
    assert dry.returncode == 0, output(dry)[-3000:]
    assert NOTHING in output(dry), output(dry)[-3000:]


def test_a_run_folder_moved_relative_to_its_workflow_has_nothing_to_do(moved):
    workflow, run = moved
    dry = snakemake(run, "-n", *TARGETS, snakefile=workflow / "Snakefile")
    assert dry.returncode == 0, output(dry)[-3000:]
    assert NOTHING in output(dry), output(dry)[-3000:]


def test_the_same_run_under_a_copy_of_the_workflow_elsewhere_has_nothing_to_do(moved, tmp_path):
    _, run = moved
    other = copy_checkout(tmp_path / "elsewhere" / "judgelab")
    dry = snakemake(run, "-n", *TARGETS, snakefile=other / "Snakefile")
    assert NOTHING in output(dry), output(dry)[-3000:]


def test_editing_a_bundled_file_reruns_the_jobs_that_read_it(moved, tmp_path):
    _, run = moved
    other = copy_checkout(tmp_path / "edited" / "judgelab")
    topics = other / "resources" / "sample" / "dl19" / "topics.txt"
    topics.write_text(topics.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    dry = snakemake(run, "-n", *TARGETS, snakefile=other / "Snakefile")
    assert dry.returncode == 0, output(dry)[-3000:]
    rules = {rule for rule, _ in dry_run_jobs(output(dry))}
    # the prepare job and both imports read DL19's topics; PandaLM's records do not
    assert {"prepare_dataset", "peras_import_judge", "overrating_import"} <= rules, rules
    assert "simulation_prepare" not in rules
    assert "Params have changed since last execution" in output(dry)


def test_a_job_finds_its_bundled_files_in_its_own_workflow_and_checks_their_content(tmp_path):
    root = tmp_path / "wf"
    (root / "workflow" / "scripts" / "peras").mkdir(parents=True)
    (root / "resources" / "sample").mkdir(parents=True)
    (root / "Snakefile").write_text("", encoding="utf-8")
    data = root / "resources" / "sample" / "q.txt"
    data.write_text("1\tq\n", encoding="utf-8")
    value = bundled.param({"topics": data}, root)
    assert json.loads(value) == {"topics": {"file": "resources/sample/q.txt", "sha256": bundled.digest(data)}}
    found = bundled.workflow_root(root / "workflow" / "scripts" / "peras")
    assert found == root.resolve()
    assert bundled.resolve(value, found) == {"topics": str(found / "resources" / "sample" / "q.txt")}
    data.write_text("1\tanother\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"q\.txt \(topics\) changed since the run was planned"):
        bundled.resolve(value, found)
    data.unlink()
    with pytest.raises(InputError, match=r"q\.txt \(topics\) does not exist"):
        bundled.resolve(value, found)
    with pytest.raises(InputError, match="no workflow folder"):
        bundled.workflow_root(tmp_path)
