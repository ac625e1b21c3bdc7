"""The next study starts from docs/study-template: new_study.py writes a complete, runnable study
into a copy of this checkout (package, rules, scripts, prompt, caption, schema section, STUDIES,
config/README.md table, test config, its tests, its page), which then passes the habits CI checks
and its own tests, and runs end to end with the embedded model; a second run has nothing to do."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT, needs_model
from snakerun import output, snakemake

pytestmark = pytest.mark.slow


def _copy_checkout(dest: Path) -> None:
    """The tracked and untracked-but-not-ignored files of this checkout (no results, no caches)."""
    listed = (
        subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    if not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to copy")
    root = tmp_path_factory.mktemp("checkout")
    _copy_checkout(root)
    env = {**os.environ, "PYTHONPATH": str(root / "workflow" / "src")}
    run = subprocess.run(
        [
            sys.executable,
            str(root / "docs" / "study-template" / "new_study.py"),
            "example",
            "--title",
            "Example study",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return root, env


def test_the_made_study_is_complete_and_clean(made):
    root, env = made
    pkg = root / "workflow" / "src" / "judgelab" / "studies" / "example"
    assert sorted(p.name for p in pkg.glob("*.py")) == [
        "__init__.py",
        "jobs.py",
        "paths.py",
        "plan.py",
        "science.py",
    ]
    assert 'STUDIES = ("peras", ' in (root / "workflow/src/judgelab/studies/__init__.py").read_text()
    made_files = [
        str(pkg),
        str(root / "tests" / "example"),
        *map(str, (root / "workflow" / "scripts" / "example").glob("*.py")),
    ]
    for cmd in (["ruff", "check", *made_files], ["ruff", "format", "--check", *made_files]):
        run = subprocess.run([sys.executable, "-m", *cmd], capture_output=True, text=True, cwd=root)
        assert run.returncode == 0, run.stdout + run.stderr
    run = subprocess.run(
        [sys.executable, "-m", "snakefmt", "--check", "workflow/rules/example"],
        capture_output=True,
        cwd=root,
    )
    assert run.returncode == 0
    # its rule files listed in docs/layout.md (tests/test_study_shape.py checks it against the
    # folder), and switched off in the default config until its share of the budget is measured
    assert "| example | judge, table (+ common) |" in (root / "docs" / "layout.md").read_text()
    stages = sorted(p.stem for p in (root / "workflow" / "rules" / "example").glob("*.smk"))
    assert stages == ["common", "example", "judge", "table"]
    assert "\nexample:\n  enabled: false" in (root / "config" / "config.yaml").read_text()
    # its test config finds the fixtures it names where a run of .test/example looks for them
    assert (root / ".test" / "example" / "fixtures" / "trec" / "qrels.txt").is_file()
    docs = subprocess.run(
        [sys.executable, "-m", "judgelab.project.schema_docs", "--check", "--root", str(root)],
        env=env,
        capture_output=True,
    )
    assert docs.returncode == 0, docs.stderr
    readme = (root / "config" / "README.md").read_text(encoding="utf-8")
    assert "<!-- keys: example -->" in readme and '| `template` | `"example/judge"` |' in readme
    # a second study of the same name is refused, nothing overwritten
    again = subprocess.run(
        [sys.executable, str(root / "docs/study-template/new_study.py"), "example"],
        capture_output=True,
        text=True,
    )
    assert again.returncode != 0 and "already there" in again.stderr
    # its own tests and its page, in the standard places
    assert (root / "docs" / "studies" / "example.md").read_text().startswith("# Example study (`example`)")
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/example"],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
    )
    assert tests.returncode == 0 and "2 passed" in tests.stdout, tests.stdout + tests.stderr


@needs_model
def test_the_made_study_runs_end_to_end(made, tmp_path):
    root, env = made
    work = tmp_path / "run"
    (work / "config").mkdir(parents=True)
    shutil.copy(root / ".test" / "example" / "config" / "config.yaml", work / "config" / "config.yaml")
    (work / "fixtures").symlink_to(root / "tests" / "fixtures")
    snakefile = root / "Snakefile"
    dry = snakemake(work, "-n", "example", env=env, snakefile=snakefile)
    assert dry.returncode == 0, output(dry)[-3000:]
    assert "example_judge" in output(dry) and "rule peras_judge:" not in output(dry)
    run = snakemake(work, "example", env=env, snakefile=snakefile)
    assert run.returncode == 0, output(run)[-3000:]
    table = pd.read_csv(work / "results" / "example" / "tables" / "agreement.tsv", sep="\t")
    assert table[["dataset", "model", "n"]].values.tolist() == [["fx", "smollm2", 8]]
    judged = pd.read_csv(work / "results" / "example" / "judgments" / "fx" / "smollm2.tsv", sep="\t")
    assert len(judged) == 8 and judged["answer"].notna().all()
    assert table["n_parsed"].iloc[0] == int(judged["parsed"].sum())
    assert (work / "results" / "example" / "tables" / "agreement.md").read_text().startswith("| dataset |")
    again = snakemake(work, "-n", "example", env=env, snakefile=snakefile)
    assert "Nothing to be done" in output(again), output(again)[-2000:]
