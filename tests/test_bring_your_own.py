"""A researcher's own labels and runs, through the real workflow with no model: an imported judge
file that labels the whole bundled DL19 sample while the dataset keeps 2 pairs per grade
(`.test/byo`: `judges: []`, persona `default` only), scored by PERAS and diagnosed by the overrating
study; the finished run, with its workflow, copied elsewhere has nothing to do; and the "Bring your
own" commands of docs/changing.md, run as written in a copy of the checkout."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT
from snakerun import copy_checkout, make_workdir, output, snakemake

pytestmark = pytest.mark.slow

NOTHING = "Nothing to be done"


def env_for(workflow: Path) -> dict:
    """The environment of a run of the workflow at ``workflow`` (its own package), without keys."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(workflow / "workflow" / "src")
    return env


def test_an_imported_judge_run_and_the_run_moved_elsewhere(tmp_path):
    first = tmp_path / "first"
    wf = copy_checkout(first / "judgelab")
    byo = make_workdir(first / "byo", "byo")
    # the simulation study's first stage reads the bundled PandaLM sample (no model call)
    sim = make_workdir(first / "sim", "simulation")
    records = "results/simulation/pandalm/records.jsonl"

    def run(wd: Path, root: Path, *args: str):
        res = snakemake(wd, *args, env=env_for(root), snakefile=root / "Snakefile", timeout=900)
        assert res.returncode == 0, output(res)[-4000:]
        return output(res)

    run(byo, wf, "all")
    run(sim, wf, records)
    summary = pd.read_csv(
        byo / "results" / "imported" / "dl19" / "mine" / "imported" / "default.tsv", sep="\t"
    )
    assert summary[["labelled", "in_selection", "outside_selection", "unlabelled"]].values.tolist() == [
        [24, 8, 16, 0]
    ]
    log = (byo / "results" / "logs" / "import" / "dl19" / "mine" / "imported" / "default.log").read_text()
    assert "16 outside it (skipped" in log
    metrics = pd.read_csv(byo / "results" / "metrics" / "metrics.tsv", sep="\t")
    assert metrics[["model", "persona", "n_pairs", "n_parsed"]].values.tolist() == [["mine", "default", 8, 8]]
    # every third pair of the file is one grade above the human's (an overrating judge): on the
    # 8 selected pairs, the same kappa as scikit-learn's
    from sklearn.metrics import cohen_kappa_score

    table = pd.read_csv(byo / "results" / "datasets" / "dl19.tsv", sep="\t", dtype=str)
    labels = {
        (q, d): int(g)
        for q, _, d, g, _ in (
            line.split()
            for line in (byo / "imports" / "dl19.qrels").read_text().splitlines()
            if line[0] != "#"
        )
    }
    y, yhat = [int(g) for g in table["grade"]], [labels[k] for k in zip(table["qid"], table["docid"])]
    assert metrics["kappa"].iloc[0] == pytest.approx(cohen_kappa_score(y, yhat))
    t1 = (byo / "results" / "overrating" / "tables" / "table1.md").read_text()
    assert "| dl19 | mine |" in t1
    assert NOTHING in run(byo, wf, "-n", "all")

    # the finished runs and their workflow, copied (file times kept) to another place
    second = tmp_path / "second"
    shutil.copytree(first, second, symlinks=True)
    wf2 = second / "judgelab"
    for wd in (second / "byo", second / "sim"):
        text = run(wd, wf2, "-n", "all" if wd.name == "byo" else records)
        assert NOTHING in text, text[-3000:]


#: the page that holds the "Bring your own" commands (README.md links to it)
BYO_PAGE = Path("docs") / "changing.md"


def doc_section(title: str, page: Path = BYO_PAGE) -> str:
    text = (ROOT / page).read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"{page} has no section {title!r}"
    return m.group(1)


def bash_blocks(section: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", section, re.S)


def test_the_bring_your_own_commands_run_as_written(tmp_path):
    checkout = copy_checkout(tmp_path / "judgelab")
    blocks = bash_blocks(doc_section("Bring your own"))
    assert len(blocks) == 4, blocks
    env = env_for(checkout)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # this Python's snakemake
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        env.pop(var, None)

    def sh(block: str) -> str:
        res = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        assert res.returncode == 0, f"{block}\n---\n{(res.stdout + res.stderr)[-4000:]}"
        return res.stdout + res.stderr

    imported, one_study, paper, moved = blocks
    sh(imported)
    sh(one_study)
    summary = pd.read_csv(
        checkout / "results" / "imported" / "dl19" / "mine" / "imported" / "default.tsv", sep="\t"
    )
    assert summary[["labelled", "in_selection", "outside_selection"]].values.tolist() == [[24, 8, 16]]
    assert (checkout / "results" / "overrating" / "tables" / "table1.md").exists()
    assert not (checkout / ".judgelab-cache").exists()  # no model was asked anything
    text = sh(paper)
    assert "rule judge:" in text and "This was a dry-run" in text
    text = sh(moved)
    assert NOTHING in text, text[-3000:]
    assert (tmp_path / "judgelab-moved" / "results" / "metrics" / "metrics.tsv").exists()
