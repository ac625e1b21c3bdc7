"""The judges stage for real (results/judges): the bundled LLMJudge slice judged by the 33 published
submissions with no download and no model, every row's kappa and alpha equal to scikit-learn's and
krippendorff's on the slice files; on the full LLMJudge test qrels, a submission named through the
catalog gives PERAS's imported-judge path's kappa and alpha; a run with no imported or published
judge has no such stage."""

from __future__ import annotations

import copy
from pathlib import Path

import krippendorff
import pandas as pd
import pytest
import yaml
from conftest import ROOT
from sklearn.metrics import cohen_kappa_score
from snakerun import make_workdir, output, snakemake

from judgelab.wiring.facade import Project

SLICE = ROOT / "resources" / "sample" / "llmjudge"
OFF = {s: {"enabled": False} for s in ("peras", "overrating", "perturbations", "simulation", "ranking")}


def grades(path: Path) -> dict[tuple[str, str], int]:
    out = {}
    for line in path.read_text().splitlines():
        qid, _, docid, label = line.split()
        out[(qid, docid)] = int(label)
    return out


def run_folder(tmp_path: Path, overlay: dict) -> Path:
    """`.test/byo` (no live judge) with ``overlay`` as a second --configfile."""
    wd = make_workdir(tmp_path / "run", "byo")
    (wd / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    return wd


def smk(wd: Path, *targets: str):
    return snakemake(
        wd,
        *targets,
        "--configfile",
        str(wd / "config" / "config.yaml"),
        str(wd / "overlay.yaml"),
        timeout=900,
    )


@pytest.mark.slow
def test_the_bundled_llmjudge_slice_against_scikit_learn_and_krippendorff(tmp_path):
    wd = run_folder(
        tmp_path,
        {
            "datasets": {"llmjudge": {"source": "sample", "format": "llmjudge"}},
            "published_judges": {"use": ["llmjudge-2024"]},
            "personas": {"generation": {"enabled": False}},
            **copy.deepcopy(OFF),
        },
    )
    run = smk(wd, "judges")
    assert run.returncode == 0, output(run)[-4000:]
    text = output(run)
    assert "download_published_judge" not in text and "download" not in text.split("Job stats")[-1][:2000]
    assert not (wd / "cache").exists()  # no model
    every = pd.read_csv(wd / "results" / "judges" / "leaderboard.tsv", sep="\t")
    assert set(every["dataset"]) == {"llmjudge"}  # byo's own imported judge: no study here uses it
    board = every[every["dataset"] == "llmjudge"]
    assert len(board) == 33
    assert list(board["kappa"]) == sorted(board["kappa"], reverse=True)
    human = grades(SLICE / "qrels.txt")
    assert len(human) == 475
    for row in board.itertuples():
        judge = grades(SLICE / "published" / f"{row.judge}.txt")
        keys = sorted(human)
        h, j = [human[k] for k in keys], [judge[k] for k in keys]
        assert row.n_labelled == 475 and row.coverage == 1.0
        assert row.kappa == pytest.approx(cohen_kappa_score(h, j, labels=[0, 1, 2, 3]), abs=1e-12), row.judge
        alpha = krippendorff.alpha(
            reliability_data=[h, j], level_of_measurement="ordinal", value_domain=[0, 1, 2, 3]
        )
        assert row.alpha == pytest.approx(alpha, abs=1e-12), row.judge
    for ext in ("png", "pdf"):
        assert (wd / "results" / "judges" / "llmjudge" / f"agreement.{ext}").stat().st_size > 5000
    assert "| llmjudge | llmjudge-" in (wd / "results" / "judges" / "leaderboard.md").read_text()


@pytest.mark.slow
def test_a_submission_by_catalog_name_gives_the_imported_paths_kappa_and_alpha(tmp_path, shared_data):
    """The full LLMJudge test qrels (4,423 pairs, no passage text): RMITIR-llama70B (two labels 5,
    dropped and counted) and Olz-exp through the catalog (the judges stage) and the same files as
    imported judges of PERAS (after their out-of-scale lines are removed by hand: an imported file's
    bad line is an error) give the same kappa and alpha."""
    scores = shared_data / "published-judges" / "llmjudge-2024" / "scores"
    imports = tmp_path / "imports"
    imports.mkdir()
    for sub in ("RMITIR-llama70B", "Olz-exp"):
        kept = [ln for ln in (scores / f"{sub}.txt").read_text().splitlines() if int(ln.split()[3]) <= 3]
        (imports / f"{sub}.txt").write_text("\n".join(kept) + "\n")
    lj = shared_data / "llmjudge"
    wd = run_folder(
        tmp_path,
        {
            "datasets": {
                "lj": {
                    "source": "files",
                    "format": "llmjudge",
                    "qrels": str(lj / "llmjudge_test_qrel_idx.txt"),
                    "topics": str(lj / "llm4eval_query_2024.txt"),
                }
            },
            "imported_judges": {
                f"mine-{sub}": {"path": str(imports / f"{sub}.txt"), "datasets": ["lj"], "scale": "graded"}
                for sub in ("RMITIR-llama70B", "Olz-exp")
            },
            "published_judges": {
                "use": [],
                "mirror": str(shared_data / "published-judges"),
                "entries": {},
            },
            "personas": {"generation": {"enabled": False}},
            **{**copy.deepcopy(OFF), "peras": {"enabled": True, "datasets": ["lj"], "judges": []}},
        },
    )
    # the catalog's LLMJudge judges label dataset `llmjudge`; here the dataset is `lj`: add them as
    # config entries of the same files under this dataset's name
    catalog = Project(yaml.safe_load((ROOT / "config" / "config.yaml").read_text()), ROOT).catalog
    over = yaml.safe_load((wd / "overlay.yaml").read_text())
    for sub in ("RMITIR-llama70B", "Olz-exp"):
        f = catalog.judges[f"llmjudge-{sub}"].files["llmjudge"]
        over["published_judges"]["entries"][f"cat-{sub}"] = {
            "source": "llmjudge-2024",
            "judge_model": "",
            "method": "llmjudge-submission",
            "values": "labels 0-3",
            "files": {"lj": {"url": f.url, "sha256": f.sha256, "bytes": f.bytes, "file": f.file}},
        }
        over["published_judges"]["use"].append(f"cat-{sub}")
    (wd / "overlay.yaml").write_text(yaml.safe_dump(over))
    # PERAS's metrics table only (its figures, significance and classifier add nothing here)
    run = smk(wd, "judges", "results/peras/metrics/metrics.tsv")
    assert run.returncode == 0, output(run)[-4000:]
    board = pd.read_csv(wd / "results" / "judges" / "leaderboard.tsv", sep="\t").set_index("judge")
    metrics = pd.read_csv(wd / "results" / "peras" / "metrics" / "metrics.tsv", sep="\t")
    metrics = metrics[metrics["persona"] == "default"].set_index("model")
    for sub in ("RMITIR-llama70B", "Olz-exp"):
        mine, cat = metrics.loc[f"mine-{sub}"], board.loc[f"cat-{sub}"]
        assert cat["kappa"] == pytest.approx(mine["kappa"], abs=1e-12)
        assert cat["alpha"] == pytest.approx(mine["alpha"], abs=1e-12)
        assert board.loc[f"mine-{sub}", "kappa"] == pytest.approx(mine["kappa"], abs=1e-12)
    assert (
        board.loc["cat-RMITIR-llama70B", "out_of_scale"] == 2
        and board.loc["cat-RMITIR-llama70B", "n_labelled"] == 4421
    )


def test_no_imported_or_published_judge_no_judges_stage():
    cfg = {
        "datasets": {"dl21": {"source": "sample", "format": "trec"}},
        "models": {"smollm2": {"backend": "local"}},
        "judges": ["smollm2"],
        **copy.deepcopy(OFF),
        "peras": {"enabled": True},
    }
    p = Project(cfg, ROOT)
    assert p.standing == {} and p.standing_targets() == []
    assert not any("/judges/" in t for t in p.all_targets())


def test_the_bundled_slice_is_cut_from_the_shared_files_byte_for_byte(tmp_path, shared_data):
    from judgelab.data.sample import cut_llmjudge_slice

    counts = cut_llmjudge_slice(
        shared_data / "llmjudge", shared_data / "published-judges" / "llmjudge-2024" / "scores", tmp_path
    )
    assert counts["qrels.txt"] == 475 and counts["topics.txt"] == 4 and len(counts) == 35
    for f in sorted(tmp_path.rglob("*.txt")):
        assert f.read_bytes() == (SLICE / f.relative_to(tmp_path)).read_bytes(), f
