"""Job functions of the overrating study (seed 004, section 2): one function per workflow job,
plain paths and values in, files out (they move to ``judgelab/jobs/overrating.py`` when the
workflow layer is reorganised). Prompt texts and label sets are parameters, so a changed prompt
reruns exactly the jobs that use it.

Pointwise, per dataset x model x scale: :func:`pointwise_judge_job` (or
:func:`imported_pointwise_job` for a judge read from a qrels file) ->
:func:`pointwise_metrics_job`. Pairwise, per dataset: :func:`pair_sampling_job`; per dataset x
model: :func:`pairwise_judge_job` -> :func:`pairwise_metrics_job`. Then :func:`tables_job` over
every metrics file, and one figure job per figure.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from . import overrating as ov
from . import overrating_figures as of
from .datasets import read_table
from .jobs import _backend, _log_usage
from .judging import open_client, write_tsv

log = logging.getLogger("judgelab")

#: files :func:`tables_job` writes into its folder
TABLE_FILES = ["pointwise_metrics.tsv", "pairwise_metrics.tsv"] + [
    f"{t}.{ext}" for t in ("table1", "table2", "table2_by_setting") for ext in ("tsv", "md", "tex", "html")]


def _prompt(template: str, labels: Sequence[str], kind: str) -> ov.Prompt:
    return ov.Prompt(template, tuple(str(x) for x in labels), kind)


def _read(path: str, **dtypes) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""],
                       dtype={"dataset": str, "qid": str, "docid": str, "model": str, "answer": str,
                              **dtypes})


def read_pointwise(path: str) -> pd.DataFrame:
    df = _read(path)
    df["label"] = df["label"].astype("Int64")
    df["confidence"] = df["confidence"].astype("Float64")
    return df


def read_pairwise(path: str) -> pd.DataFrame:
    df = _read(path, hi_docid=str, lo_docid=str, passage_1=str, passage_2=str, preferred=str)
    df["confidence"] = df["confidence"].astype("Float64")
    return df


# --------------------------------------------------------------------------------------------
# Pointwise


def pointwise_judge_job(pairs: str, out: str, *, scale: str, template: str, labels: Sequence[str],
                        model: str | dict, max_tokens: int, cache: str, threads: int | None = None,
                        desc: str = "overrating pointwise") -> pd.DataFrame:
    """Judge every pair of a dataset table on ``scale`` with ``template`` (its ``labels``):
    label, parsed, answer, label_pos, p<label>..., label_mass, confidence per pair."""
    prompt = _prompt(template, ov.check_labels(labels, scale), "judgment")
    table = read_table(pairs)
    backend = _backend(model, threads)
    client = open_client(backend, cache)
    t0 = time.perf_counter()
    try:
        result = ov.run_pointwise(table, prompt, client, max_tokens=int(max_tokens), desc=desc)
    finally:
        backend.close()
    _log_usage(desc, client, model, t0)
    write_tsv(result, out)
    return result


def imported_pointwise_job(pairs: str, judge_file: str, out: str, *, scale: str | None,
                           confidence_scale: str | None = None) -> pd.DataFrame:
    """The pointwise judgments table of an imported judge (a qrels file; no LLM call)."""
    result = ov.imported_pointwise(read_table(pairs), judge_file, scale, confidence_scale)
    write_tsv(result, out)
    log.info("%s: %d of %d pairs labelled (scale %s), %d with a confidence", judge_file,
             int(result["parsed"].sum()), len(result), ov.effective_scale(scale),
             int(result["confidence"].notna().sum()))
    return result


def pointwise_metrics_job(pairs: str, judgments: str, out_metrics: str, out_transition: str, *,
                          ids: Mapping[str, str]) -> pd.DataFrame:
    """Metrics of one pointwise run (one row: ``ids`` = dataset, model, scale, then the metrics)
    and its transition matrix (tidy)."""
    scale = ids["scale"]
    table = read_table(pairs)[["qid", "docid", "grade"]]
    judged = read_pointwise(judgments)[["qid", "docid", "label", "confidence"]]
    merged = table.merge(judged, on=["qid", "docid"], how="left", validate="one_to_one")
    if len(judged) != len(table) or merged["qid"].isna().any():
        raise ValueError(f"{judgments} does not judge the pairs of {pairs}")
    row = {**ids, **ov.pointwise_metrics(merged, scale)}
    df = pd.DataFrame([row])
    write_tsv(df, out_metrics)
    tm = ov.transition_matrix(merged, scale)
    write_tsv(pd.concat([pd.DataFrame([ids] * len(tm)), tm], axis=1), out_transition)
    log.info("%s: coverage %.3f, overrate %.1f%%, underrate %.1f%%, bias %.3f, kappa %.3f",
             "/".join(ids.values()), row["coverage"], row["overrate_pct"], row["underrate_pct"],
             row["mean_bias"], row["kappa"])
    return df


# --------------------------------------------------------------------------------------------
# Pairwise


def pair_sampling_job(pairs: str, out: str, *, per_setting: int, seed: int,
                      relevant_min: int = 1) -> pd.DataFrame:
    """The sampled pairs of a dataset (see :func:`judgelab.overrating.sample_pairs`)."""
    table = read_table(pairs)
    sampled = ov.sample_pairs(table, int(per_setting), int(seed), int(relevant_min))
    write_tsv(sampled, out)
    counts = sampled.groupby("setting").size().reindex(list(ov.SETTINGS), fill_value=0).to_dict()
    log.info("%d queries, %d pairs sampled (at most %d per setting per query): %s",
             table["qid"].nunique(), len(sampled), int(per_setting), counts)
    return sampled


def pairwise_judge_job(pairs: str, sampled: str, out: str, *, template: str, labels: Sequence[str],
                       model: str | dict, max_tokens: int, cache: str, threads: int | None = None,
                       desc: str = "overrating pairwise") -> pd.DataFrame:
    """Judge every sampled pair in both orders with the forced-choice ``template``."""
    prompt = _prompt(template, labels, "pairwise")
    table = read_table(pairs)
    pairs_df = _read(sampled, hi_docid=str, lo_docid=str)
    backend = _backend(model, threads)
    client = open_client(backend, cache)
    t0 = time.perf_counter()
    try:
        result = ov.run_pairwise(table, pairs_df, prompt, client, max_tokens=int(max_tokens), desc=desc)
    finally:
        backend.close()
    _log_usage(desc, client, model, t0)
    write_tsv(result, out)
    return result


def pairwise_metrics_job(judgments: str, out_metrics: str, out_outcomes: str, *,
                         ids: Mapping[str, str]) -> pd.DataFrame:
    """Per-pair outcomes (correct, tie, wrong win, missing) and the metrics per setting and
    overall (rows: ``ids`` = dataset, model, then setting and the metrics)."""
    judged = read_pairwise(judgments)
    outcomes = ov.pair_outcomes(judged)
    write_tsv(outcomes, out_outcomes)
    m = ov.pairwise_metrics(outcomes)
    df = pd.concat([pd.DataFrame([ids] * len(m)), m], axis=1)
    write_tsv(df, out_metrics)
    overall = m.iloc[-1]
    log.info("%s: %d pairs, %d judged; acc %.1f%%, acc (no ties) %.1f%%, ties %.1f%%, wrong wins %.1f%%",
             "/".join(ids.values()), overall["n_pairs"], overall["n_judged"], overall["accuracy_pct"],
             overall["accuracy_no_ties_pct"], overall["tie_rate_pct"], overall["wrong_win_pct"])
    return df


# --------------------------------------------------------------------------------------------
# Tables and figures


def _concat(paths: Sequence[str]) -> pd.DataFrame:
    frames = [pd.read_csv(p, sep="\t", dtype={"dataset": str, "model": str, "scale": str,
                                              "setting": str}) for p in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _write_table(df: pd.DataFrame, render, stem: Path) -> None:
    write_tsv(df, stem.with_suffix(".tsv"))
    for fmt in ("md", "tex", "html"):
        stem.with_suffix(f".{fmt}").write_text(render(fmt), encoding="utf-8")


def tables_job(pointwise: Sequence[str], pairwise: Sequence[str], out_dir: str) -> list[str]:
    """Seed 004 Tables 1 and 2 (and Table 2 per setting) as tsv, md, tex and html (for the report)
    in ``out_dir``, beside the concatenated metrics (:data:`TABLE_FILES`). ``pointwise``: pointwise
    metrics files; ``pairwise``: pairwise metrics files (either may be empty)."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    point = _concat(pointwise)
    pair = _concat(pairwise)
    write_tsv(point, folder / "pointwise_metrics.tsv")
    write_tsv(pair, folder / "pairwise_metrics.tsv")
    t1 = ov.table1(point) if len(point) else pd.DataFrame(columns=["dataset", "model", "confidence_scale"]
                                                          + [(g, c) for g, c, *_ in ov.TABLE1_COLUMNS])
    _write_table(ov.flat_table1(t1), lambda fmt: ov.render_table1(t1, fmt), folder / "table1")
    empty2 = pd.DataFrame(columns=["dataset", "model", "setting"] + [m for _, m, _ in ov.TABLE2_COLUMNS])
    t2 = ov.table2(pair) if len(pair) else empty2
    _write_table(t2, lambda fmt: ov.render_table2(t2, fmt), folder / "table2")
    by = pair[["dataset", "model", "setting"] + [m for _, m, _ in ov.TABLE2_COLUMNS]] if len(pair) else empty2
    _write_table(by, lambda fmt: ov.render_table2(by, fmt, ids=("dataset", "model", "setting")),
                 folder / "table2_by_setting")
    log.info("Table 1: %d dataset x model rows; Table 2: %d", len(t1), len(t2))
    return [str(folder / f) for f in TABLE_FILES]


def transition_figure_job(transition: str, out_png: str, out_pdf: str, *, title: str) -> None:
    of.transition_heatmap(pd.read_csv(transition, sep="\t"), title, out_png, out_pdf)


def pairwise_figure_job(metrics: str, out_png: str, out_pdf: str, *, title: str) -> None:
    of.pairwise_rates(pd.read_csv(metrics, sep="\t", dtype={"setting": str}), title, out_png, out_pdf)


def confidence_figure_job(metrics: Sequence[str], out_png: str, out_pdf: str, *, title: str) -> None:
    """``metrics``: the pointwise metrics files of one dataset x model (one per scale)."""
    of.confidence_by_outcome(_concat(metrics), title, out_png, out_pdf)
