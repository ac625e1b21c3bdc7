"""A study that only the shipped defaults enable, and that has nothing to do under the user's own
config (no judge, no dataset), is skipped with one line saying why; a study the user's own config
enables still fails, naming the key (issue 26, case 8). The user's config is read layer by layer:
their --configfile files, --config values, a run folder's own config/config.yaml."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT
from snakerun import output, snakemake

from judgelab.errors import InputError
from judgelab.wiring.facade import Project

SAMPLE = ROOT / "resources" / "sample" / "dl19"


def mine(tmp_path, **extra) -> str:
    """judges: [] and one imported judge for DL19 (PERAS's metrics need no model)."""
    cfg = {
        "judges": [],
        "imported_judges": {"mine": {"path": str(SAMPLE / "qrels.txt"), "datasets": ["dl19"]}},
    }
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({**cfg, **extra}))
    return str(path)


def test_studies_the_defaults_enable_with_nothing_to_do_are_skipped(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    project = Project.load([mine(tmp_path)], ROOT)
    assert sorted(project.skipped) == ["overrating", "perturbations", "ranking", "sensitivity", "simulation"]
    assert "no judge to compare with the human qrels" in project.skipped["ranking"]
    assert project.studies == ["peras"] and project.plan("peras").groups  # the imported judge's group
    assert any("metrics.tsv" in t for t in project.all_targets())


def test_a_study_your_config_enables_still_fails_naming_the_key(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(InputError, match=r"config key 'ranking.judges': no judge to compare"):
        Project.load([mine(tmp_path, ranking={"enabled": True})], ROOT)
    # a run folder's own config/config.yaml is the user's too
    run = tmp_path / "run"
    (run / "config").mkdir(parents=True)
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    (run / "config" / "config.yaml").write_text(yaml.safe_dump({**cfg, "judges": []}))
    with pytest.raises(InputError, match=r"config key 'peras': the study is enabled but judges nothing"):
        Project.load([], run, ROOT)


def test_the_workflow_runs_the_peras_only_config_and_says_what_it_skipped(tmp_path):
    dry = snakemake(ROOT, "-n", "all", "--configfile", mine(tmp_path), cores=1)
    text = output(dry)
    assert dry.returncode == 0, text[-3000:]
    for study in ("overrating", "perturbations", "simulation", "ranking", "sensitivity"):
        assert text.count(f"judgelab: study {study} skipped: ") == 1, text[-3000:]
    assert "rule peras_import_judge:" in text and "rule ranking_score" not in text
