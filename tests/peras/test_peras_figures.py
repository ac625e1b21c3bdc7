"""Figures and the analysis job functions on fabricated judge tables (no model): every figure file
is written as a non-empty PNG and PDF, also when metrics are undefined (NaN)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.data.imported import ImportReading
from judgelab.data.prepare import build_trec_table
from judgelab.data.tables import read_dataset, write_dataset
from judgelab.errors import InputError
from judgelab.studies.peras import figures as fg
from judgelab.studies.peras import jobs as stages
from judgelab.studies.peras.jobs import group_metrics_job
from judgelab.studies.peras.settings import FigureSettings, Group, SignificanceSettings

PERSONAS = ["default", "LA", "HN", "LC", "HE"]
GROUP = Group("fx", "ext", "imported", tuple(PERSONAS))
KINDS = ["radar_agreement", "radar_calibration", "heatmap", "confidence"]


def fabricate(fixtures, tmp_path, seed=0):
    """Imported-judge files for PERSONAS on the fixture dataset: HE never parses, LC always says 0."""
    fx = fixtures / "trec"
    pairs = tmp_path / "fx.tsv"
    write_dataset(build_trec_table("fx", fx / "qrels.txt", fx / "topics.txt", fx / "texts.tsv"), pairs)
    table = read_dataset(pairs)
    rng = np.random.default_rng(seed)
    files = {"judgments": [], "confidence": []}
    for p in PERSONAS:
        lines = []
        for r in table.itertuples():
            if p == "HE":
                break
            lab = 0 if p == "LC" else (int(r.grade) if rng.random() < 0.6 else int(rng.integers(0, 4)))
            lines.append(f"{r.qid} Q0 {r.docid} {lab} {int(rng.integers(10, 100))}")
        src = tmp_path / "imports" / f"{p}.txt"
        src.parent.mkdir(exist_ok=True)
        src.write_text("".join(x + "\n" for x in lines))
        j, c = (tmp_path / k / f"{p}.tsv" for k in ("judgments", "confidence"))
        # graded judges (LC labels everything 0, so its scale must be declared)
        stages.import_job(
            str(pairs), str(src), {"judgments": str(j), "confidence": str(c)}, ImportReading("graded"), {}
        )
        files["judgments"].append(str(j))
        files["confidence"].append(str(c))
    files["metrics"] = str(tmp_path / "metrics" / "group.tsv")
    group_metrics_job(str(pairs), files["judgments"], files["confidence"], GROUP, files["metrics"])
    return str(pairs), files


def outputs(tmp_path):
    out = {k: str(tmp_path / "fig" / f"{k}.png") for k in KINDS}
    out.update({f"{k}_pdf": str(tmp_path / "fig" / f"{k}.pdf") for k in KINDS})
    out.update(
        {
            "interpersona": str(tmp_path / "fig" / "interpersona.tsv"),
            "confidence_table": str(tmp_path / "fig" / "confidence_by_grade.tsv"),
        }
    )
    return out


def test_every_figure_is_written_with_nan_metrics(fixtures, tmp_path):
    pairs, files = fabricate(fixtures, tmp_path)
    sig = tmp_path / "significance.tsv"
    res = stages.significance_job(
        pairs,
        files["judgments"],
        files["confidence"],
        GROUP,
        SignificanceSettings(reference="default", n_boot=200, seed=1, alpha=0.05),
        str(sig),
    )
    assert set(res["persona"]) == set(PERSONAS) - {"default"}
    assert res.loc[res["persona"] == "HE", "delta"].isna().all()  # nothing parsed: undefined, kept
    metrics = pd.read_csv(files["metrics"], sep="\t")
    assert metrics.loc[metrics["persona"] == "HE", ["kappa", "HMR"]].isna().all().all()
    out = outputs(tmp_path)
    stages.figures_job(
        pairs,
        files["judgments"],
        files["confidence"],
        files["metrics"],
        GROUP,
        FigureSettings(reference="default", confidence_personas=("HN", "LC"), confidence_label=0),
        out,
        significance=str(sig),
    )
    for k in KINDS:
        png, pdf = out[k], out[f"{k}_pdf"]
        with open(png, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n", png
        with open(pdf, "rb") as fh:
            assert fh.read(5) == b"%PDF-", pdf
    kappa = pd.read_csv(out["interpersona"], sep="\t")
    assert len(kappa) == len(PERSONAS) ** 2
    he = kappa[(kappa["persona_a"] == "HE")]
    assert he["kappa"].isna().all() and (he["n_pairs"] == 0).all()
    conf = pd.read_csv(out["confidence_table"], sep="\t")
    assert set(conf["persona"]) == {"HN", "LC"}
    # LC labels every pair 0: its label-0 confidences cover all 8 pairs
    assert conf.loc[conf["persona"] == "LC", "n"].sum() == 8


def test_radar_copes_with_all_nan_and_few_personas(tmp_path):
    m = pd.DataFrame(
        {
            "persona": ["default", "LA"],
            "kappa": [np.nan, np.nan],
            "qwk": [0.2, np.nan],
            "macro_f1": [np.nan, 0.4],
        }
    )
    fg.radar(m, fg.AGREEMENT, "t", tmp_path / "r.png", tmp_path / "r.pdf")
    assert (tmp_path / "r.png").stat().st_size > 1000 and (tmp_path / "r.pdf").stat().st_size > 1000
    tidy = fg.interpersona_kappa(
        {"a": pd.Series([pd.NA] * 3, dtype="Int64"), "b": pd.Series([1, 2, 2], dtype="Int64")}
    )
    assert tidy["kappa"].isna().sum() == 3
    fg.interpersona_heatmap(tidy, "t", tmp_path / "h.png")
    assert (tmp_path / "h.png").stat().st_size > 1000


@pytest.mark.parametrize("label", [0, 3])
def test_confidence_table_counts(label):
    pairs = pd.DataFrame({"qid": ["1"] * 4, "docid": list("abcd"), "grade": [0, 1, 2, 3]})
    c = pd.DataFrame(
        {
            "qid": ["1"] * 4,
            "docid": list("abcd"),
            "label": pd.array([label, label, 1, pd.NA], "Int64"),
            "confidence": pd.array([80, 60, 50, pd.NA], "Float64"),
        }
    )
    t = fg.confidence_by_grade_table(pairs, {"HN": c}, label).set_index("grade")
    assert t.loc[0, "mean_confidence"] == 80 and t.loc[1, "mean_confidence"] == 60
    assert t.loc[2, "n"] == 0 and np.isnan(t.loc[2, "mean_confidence"])


def test_radar_figures_read_the_configured_support(fixtures, tmp_path, monkeypatch):
    """``peras.support: common``: the radar charts show the metrics' ``common_*`` values with the
    common-support significance marks and say so in the title; an unknown support names the key."""
    import matplotlib.pyplot as plt

    pairs, files = fabricate(fixtures, tmp_path)
    # without HE (it never parses, so its common support would be empty)
    keep = [i for i, p in enumerate(PERSONAS) if p != "HE"]
    group = Group("fx", "ext", "imported", tuple(PERSONAS[i] for i in keep))
    judgments, confidence = ([files[k][i] for i in keep] for k in ("judgments", "confidence"))
    metrics = str(tmp_path / "metrics" / "common.tsv")
    group_metrics_job(pairs, judgments, confidence, group, metrics)
    sig = tmp_path / "significance.tsv"
    settings = SignificanceSettings(reference="default", n_boot=100, seed=1, alpha=0.05)
    res = stages.significance_job(pairs, judgments, confidence, group, settings, str(sig))
    assert set(res["support"]) == {"parsed", "common"}
    titles = []
    real = plt.Figure.suptitle

    def record(fig, text, *a, **kw):
        titles.append(text)
        return real(fig, text, *a, **kw)

    monkeypatch.setattr(plt.Figure, "suptitle", record)
    for support in ("parsed", "common"):
        figure = FigureSettings("default", ("HN", "LC"), 0, support=support)
        stages.figures_job(
            pairs, judgments, confidence, metrics, group, figure, outputs(tmp_path / support), str(sig)
        )
    n_common = int(pd.read_csv(metrics, sep="\t")["common_n_parsed"].iloc[0])
    assert not any("common support" in t for t in titles[:2])
    assert all(t.endswith(f"(common support: {n_common} pairs)") for t in titles[2:4])
    with pytest.raises(InputError, match="peras.support"):
        stages.figures_job(
            pairs,
            judgments,
            confidence,
            metrics,
            group,
            FigureSettings("default", ("HN",), 0, support="both"),
            outputs(tmp_path / "bad"),
            str(sig),
        )
