"""A finished run stays done when its folder moves relative to the workflow, or the workflow
moves (issue 26, case 5): the bundled sample is tracked by name and content (a ``bundled`` param),
not by its path from the run folder; editing a bundled file still reruns the jobs that read it.

The run is `.test/byo` (no model: an imported judge of the bundled DL19 sample, read by PERAS and
the overrating study) plus the simulation's records of the bundled PandaLM sample."""

from __future__ import annotations

import json

import pytest
from snakerun import copy_checkout, dry_run_jobs, make_workdir, output, snakemake

from judgelab.errors import InputError
from judgelab.project import bundled

pytestmark = pytest.mark.slow

TARGETS = ("all", "results/simulation/pandalm/records.jsonl")


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    """A finished run of its workflow copy, then the run folder moved one level deeper."""
    base = tmp_path_factory.mktemp("moved")
    workflow = copy_checkout(base / "judgelab")
    run = make_workdir(base / "runs" / "run", "byo")
    done = snakemake(run, *TARGETS, snakefile=workflow / "Snakefile")
    assert done.returncode == 0, output(done)[-3000:]
    (base / "runs" / "deeper").mkdir()
    there = base / "runs" / "deeper" / "run"
    run.rename(there)
    return workflow, there


def test_a_run_folder_moved_relative_to_its_workflow_has_nothing_to_do(moved):
    workflow, run = moved
    dry = snakemake(run, "-n", *TARGETS, snakefile=workflow / "Snakefile")
    assert dry.returncode == 0, output(dry)[-3000:]
    assert "Nothing to be done" in output(dry), output(dry)[-3000:]


def test_the_same_run_under_a_copy_of_the_workflow_elsewhere_has_nothing_to_do(moved, tmp_path):
    _, run = moved
    other = copy_checkout(tmp_path / "elsewhere" / "judgelab")
    dry = snakemake(run, "-n", *TARGETS, snakefile=other / "Snakefile")
    assert "Nothing to be done" in output(dry), output(dry)[-3000:]


def test_editing_a_bundled_file_reruns_the_jobs_that_read_it(moved, tmp_path):
    _, run = moved
    other = copy_checkout(tmp_path / "edited" / "judgelab")
    topics = other / "resources" / "sample" / "dl19" / "topics.txt"
    topics.write_text(topics.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    dry = snakemake(run, "-n", *TARGETS, snakefile=other / "Snakefile")
    assert dry.returncode == 0, output(dry)[-3000:]
    rules = {rule for rule, _ in dry_run_jobs(output(dry))}
    # the prepare job and both imports read DL19's topics; PandaLM's records do not
    assert {"prepare_dataset", "import_judge", "overrating_import"} <= rules, rules
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
