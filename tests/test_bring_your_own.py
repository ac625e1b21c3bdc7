"""The "Bring your own" commands of docs/changing.md, run as written in a copy of the checkout: an
imported judge with no model, one study at a time, a paper config's dry run, the run moved. The
`.test/byo` run (the same imported judge, its numbers checked, and the run moved or copied with
its workflow) is tests/test_moved_run.py's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT
from snakerun import copy_checkout

pytestmark = pytest.mark.slow

NOTHING = "Nothing to be done"


def env_for(workflow: Path) -> dict:
    """The environment of a run of the workflow at ``workflow`` (its own package), without keys."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = str(workflow / "workflow" / "src")
    return env


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
        checkout / "results" / "peras" / "imported" / "dl19" / "mine" / "imported" / "default.tsv", sep="\t"
    )
    assert summary[["labelled", "in_selection", "outside_selection"]].values.tolist() == [[24, 8, 16]]
    assert (checkout / "results" / "overrating" / "tables" / "table1.md").exists()
    assert not (checkout / ".judgelab-cache").exists()  # no model was asked anything
    text = sh(paper)
    assert "rule peras_judge:" in text and "This was a dry-run" in text
    text = sh(moved)
    assert NOTHING in text, text[-3000:]
    assert (tmp_path / "judgelab-moved" / "results" / "peras" / "metrics" / "metrics.tsv").exists()
