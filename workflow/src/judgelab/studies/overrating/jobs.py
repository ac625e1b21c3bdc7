"""Overrating ("When LLM Judges Inflate Scores", section 2) jobs: one function per workflow job;
its inputs, its outputs and one settings value per concern in (the judge, the sampling, the
tables' options: built by the plan, :mod:`.plan`, and carried whole as rule params), files out.
The judge holds the prompt's text and labels, so a changed prompt reruns exactly the jobs that use
it. The scripts under ``workflow/scripts/overrating/`` run them with
:func:`judgelab.project.runner.run` (each parameter by the name of the rule's input, output,
param or wildcard).

Pointwise, per dataset x model x scale: :func:`pointwise_judge_job` (or
:func:`imported_pointwise_job` for a judge read from a qrels file, no LLM call) ->
:func:`pointwise_metrics_job`. Pairwise, per dataset: :func:`pair_sampling_job`; per dataset x
model: :func:`pairwise_judge_job` -> :func:`pairwise_metrics_job`. Then :func:`table1_job` and
:func:`table2_job` over every metrics file, :func:`calibration_job` over every pointwise
judgments table, and one figure job per figure.

The tables these jobs hand on (pointwise and pairwise judgments, sampled pairs, metrics) are read
only by this study, so their readers live here (:func:`read_pointwise`, :func:`read_pairwise`,
:func:`read_sampled`, :func:`read_metrics`); their columns are those of
:func:`judgelab.studies.overrating.pointwise.pointwise_columns`, :func:`~judgelab.studies.overrating.pairwise.pairwise_columns` and
:func:`~judgelab.studies.overrating.pairwise.sample_pairs`. Matplotlib is imported by the figure jobs only.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pandas as pd

from judgelab.analysis import render
from judgelab.analysis.calibration import CalibrationSettings
from judgelab.data.imported import ImportReading, SourcePairs, read_judge
from judgelab.data.labels import SCALES, check_labels
from judgelab.data.tables import read_dataset, read_tsv, write_tsv
from judgelab.llm.judge import Judge
from judgelab.llm.judging import check_coverage
from judgelab.llm.pairwise import pair_outcomes
from judgelab.llm.session import JobContext
from judgelab.studies.overrating.pairwise import (
    SETTINGS,
    pairwise_metrics,
    run_pairwise_judge,
    sample_pairs,
)
from judgelab.studies.overrating.pointwise import (
    imported_pointwise,
    pointwise_metrics,
    run_pointwise_judge,
    transition_matrix,
)
from judgelab.studies.overrating.prompts import CONFIDENCE_DEFINITIONS, effective_scale
from judgelab.studies.overrating.settings import Sampling, TableSettings
from judgelab.studies.overrating.tables import flat_table1, render_table1, render_table2, table1, table2

log = logging.getLogger("judgelab")

#: The wildcards naming a pointwise run (its metrics rows and import summary start with them, in
#: this order) and a pairwise run.
POINTWISE_IDS = ("dataset", "model", "scale")
PAIRWISE_IDS = ("dataset", "model")


def _ids(wildcards: Mapping[str, str], names: Sequence[str]) -> dict[str, str]:
    return {k: str(wildcards[k]) for k in names}


def _read(path: str, **dtypes) -> pd.DataFrame:
    return read_tsv(path, {"dataset": str, "qid": str, "docid": str, "model": str, "answer": str, **dtypes})


def read_pointwise(path: str) -> pd.DataFrame:
    """A pointwise judgments table (judge job or imported judge)."""
    df = _read(path)
    df["label"] = df["label"].astype("Int64")
    for col in ("confidence", "confidence_renorm"):
        if col in df:
            df[col] = df[col].astype("Float64")
    return df


def read_sampled(path: str) -> pd.DataFrame:
    """The sampled pairs of a dataset (:func:`pair_sampling_job`)."""
    return _read(path, hi_docid=str, lo_docid=str, setting=str)


def read_pairwise(path: str) -> pd.DataFrame:
    """A pairwise judgments table (both orders of every sampled pair)."""
    df = _read(path, hi_docid=str, lo_docid=str, passage_1=str, passage_2=str, preferred=str)
    for col in ("confidence", "confidence_renorm"):
        if col in df:
            df[col] = df[col].astype("Float64")
    return df


def read_metrics(paths: Sequence[str]) -> pd.DataFrame:
    """Pointwise or pairwise metrics files, concatenated (ids as strings)."""
    frames = [
        pd.read_csv(p, sep="\t", dtype={"dataset": str, "model": str, "scale": str, "setting": str})
        for p in paths
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


# --------------------------------------------------------------------------------------------
# Pointwise


def pointwise_judge_job(
    pairs: str, judgments: str, judge: Judge, context: JobContext, scale: str
) -> pd.DataFrame:
    """Judge every pair of a dataset table on ``scale`` with ``judge`` (its template, whose labels
    must be the scale's, and its answer bound; no persona): label, parsed, answer, label_pos,
    p<label>..., label_mass, confidence, confidence_renorm per pair. The job stops when too few
    answers parse (the judge's coverage floor)."""
    check_labels(judge.labels, scale)
    table = read_dataset(pairs)
    with judge.session(context) as client:
        result = run_pointwise_judge(table, judge, client, desc=context.desc)
    check_coverage(result, judge, context.desc)
    write_tsv(result, judgments)
    return result


def imported_pointwise_job(
    pairs: str,
    judge_file: str,
    judgments: str,
    reading: ImportReading,
    summary: str | None = None,
    wildcards: Mapping[str, str] | None = None,
    qrels: str | None = None,
    topics: str | None = None,
) -> pd.DataFrame:
    """The pointwise judgments table of an imported judge (a qrels file; no LLM call).
    ``reading``: the scales the judge declares and the raw files' encoding (see
    :mod:`judgelab.data.imported`). ``qrels``, ``topics``: the dataset's raw files: the file may
    label their pairs outside the selection (skipped, counted in the import's table ``summary``,
    one row: the job's ``wildcards`` dataset, model and scale, then
    :data:`judgelab.data.imported.IMPORT_SUMMARY_COLUMNS`)."""
    table = read_dataset(pairs)
    known = SourcePairs.read(qrels, topics, reading.encoding) if qrels and topics else None
    scale, confidence_scale = reading.scale, reading.confidence_scale
    judge = read_judge(
        judge_file, table, source=known, scale=scale, confidence_scale=confidence_scale, drop=reading.drop
    )
    log.info("%s", judge.log_line())
    result = imported_pointwise(table, judge, scale, confidence_scale)
    write_tsv(result, judgments)
    if summary:
        write_tsv(judge.summary(**_ids(wildcards or {}, POINTWISE_IDS)), summary)
    log.info(
        "%s: %d of %d pairs labelled (scale %s), %d with a confidence",
        judge_file,
        int(result["parsed"].sum()),
        len(result),
        effective_scale(scale),
        int(result["confidence"].notna().sum()),
    )
    return result


def pointwise_metrics_job(
    pairs: str, judgments: str, metrics: str, transition: str, wildcards: Mapping[str, str]
) -> pd.DataFrame:
    """Metrics of one pointwise run (one row: the ids dataset, model, scale of the job's
    ``wildcards``, then the metrics) and its transition matrix (tidy, the ids first)."""
    ids = _ids(wildcards, POINTWISE_IDS)
    scale = ids["scale"]
    table = read_dataset(pairs)[["qid", "docid", "grade"]]
    judged = read_pointwise(judgments)
    judged = judged[
        [c for c in ("qid", "docid", "label", "confidence", "confidence_renorm", "truncated") if c in judged]
    ]
    merged = table.merge(judged, on=["qid", "docid"], how="left", validate="one_to_one")
    if len(judged) != len(table) or merged["qid"].isna().any():
        raise ValueError(f"{judgments} does not judge the pairs of {pairs}")
    row = {**ids, **pointwise_metrics(merged, scale)}
    df = pd.DataFrame([row])
    write_tsv(df, metrics)
    tm = transition_matrix(merged, scale)
    write_tsv(pd.concat([pd.DataFrame([ids] * len(tm)), tm], axis=1), transition)
    log.info(
        "%s: coverage %.3f, overrate %.1f%%, underrate %.1f%%, bias %.3f, kappa %.3f",
        "/".join(ids.values()),
        row["coverage"],
        row["overrate_pct"],
        row["underrate_pct"],
        row["mean_bias"],
        row["kappa"],
    )
    return df


# --------------------------------------------------------------------------------------------
# Pairwise


def pair_sampling_job(pairs: str, sampled: str, sampling: Sampling) -> pd.DataFrame:
    """The sampled pairs of a dataset (see :func:`judgelab.studies.overrating.pairwise.sample_pairs`):
    ``sampling``: pairs per setting per query, seed, relevance threshold."""
    table = read_dataset(pairs)
    result = sample_pairs(table, sampling.per_setting, sampling.seed, sampling.relevant_min)
    write_tsv(result, sampled)
    counts = result.groupby("setting").size().reindex(list(SETTINGS), fill_value=0).to_dict()
    log.info(
        "%d queries, %d pairs sampled (at most %d per setting per query): %s",
        table["qid"].nunique(),
        len(result),
        sampling.per_setting,
        counts,
    )
    return result


def pairwise_judge_job(
    pairs: str, sampled: str, judgments: str, judge: Judge, context: JobContext
) -> pd.DataFrame:
    """Judge every sampled pair in both orders with the forced-choice ``judge`` (its template, two
    labels and answer bound); its coverage check counts the judgments (a pair in one order) that
    parsed."""
    table = read_dataset(pairs)
    with judge.session(context) as client:
        result = run_pairwise_judge(table, read_sampled(sampled), judge, client, desc=context.desc)
    check_coverage(result, judge, context.desc)
    write_tsv(result, judgments)
    return result


def pairwise_metrics_job(
    judgments: str, metrics: str, outcomes: str, wildcards: Mapping[str, str]
) -> pd.DataFrame:
    """Per-pair outcomes (correct, tie, wrong win, missing) and the metrics per setting and
    overall (rows: the ids dataset, model of the job's ``wildcards``, then setting and the
    metrics)."""
    ids = _ids(wildcards, PAIRWISE_IDS)
    result = pair_outcomes(read_pairwise(judgments))
    write_tsv(result, outcomes)
    m = pairwise_metrics(result)
    df = pd.concat([pd.DataFrame([ids] * len(m)), m], axis=1)
    write_tsv(df, metrics)
    overall = m.iloc[-1]
    log.info(
        "%s: %d pairs, %d judged; acc %.1f%%, acc (no ties) %.1f%%, ties %.1f%% (by position: "
        "first %.1f%%, second %.1f%%), wrong wins %.1f%%",
        "/".join(ids.values()),
        overall["n_pairs"],
        overall["n_judged"],
        overall["accuracy_pct"],
        overall["accuracy_no_ties_pct"],
        overall["tie_rate_pct"],
        overall["first_both_pct"],
        overall["second_both_pct"],
        overall["wrong_win_pct"],
    )
    return df


# --------------------------------------------------------------------------------------------
# Tables and figures


def calibration_job(
    pairs: Sequence[str],
    judgments: Sequence[str],
    cells: Sequence[Mapping[str, str]],
    confidence: str,
    settings: CalibrationSettings,
    outputs: Mapping[str, str],
) -> pd.DataFrame:
    """Calibration of every pointwise run (``cells``: dataset, model, scale, in the order of
    ``judgments``; ``pairs``: the dataset tables): the label-token distribution read at the label
    step as P(relevant) (p1 on the binary scale, p2 + p3 on the graded one) against the human
    binary relevance, with the expected grade's MAE on the graded scale, and the token confidence
    of ``confidence`` (``full`` or ``renormalised``: ``overrating.confidence``) as the probability
    that the label is correct (:mod:`judgelab.analysis.calibration`). ``outputs``: calibration,
    reliability, png and pdf."""
    from judgelab.analysis.calibration import write_calibration

    if len(judgments) != len(cells):
        raise ValueError("one judgments table per calibration cell expected")
    column = CONFIDENCE_DEFINITIONS[confidence]
    grades = pd.concat([read_dataset(p) for p in pairs], ignore_index=True)[
        ["dataset", "qid", "docid", "grade"]
    ]

    def judges():
        for cell, path in zip(cells, judgments):
            labels = SCALES[cell["scale"]]
            judged = read_pointwise(path)
            on = grades[grades["dataset"] == cell["dataset"]].drop(columns="dataset")
            table = on.merge(
                judged[["qid", "docid", "label", *(f"p{x}" for x in labels), column]],
                on=["qid", "docid"],
                how="inner",
                validate="one_to_one",
            ).rename(columns={column: "confidence"})
            if len(table) != len(on):
                raise ValueError(f"{path} does not judge the dataset's {len(on)} pairs")
            yield dict(cell), table, labels, f"token_confidence_{confidence}"

    return write_calibration(
        judges(), settings.bins, outputs, ["dataset", "model"], "scale", "Overrating - reliability"
    )


#: The prefix of Table 2's per-setting files among the table job's outputs (``by_setting_tsv``..).
BY_SETTING = "by_setting_"


def table1_job(
    metrics: Sequence[str], outputs: Mapping[str, str], settings: TableSettings | None = None
) -> pd.DataFrame:
    """The paper's Table 1 from the pointwise metrics files: ``outputs`` maps ``metrics`` (the
    metrics concatenated) and tsv, md, tex, html; ``settings``: the "Avg Confidence" definition
    (``full``, the paper's, or ``renormalised``; the other follows) and the judges' display names
    by model key (None: the defaults, ``full`` and the keys)."""
    settings = settings or TableSettings()
    confidence = settings.confidence
    point = read_metrics(metrics)
    write_tsv(point, outputs["metrics"])
    empty = pd.DataFrame(columns=["dataset", "model", "scale"])
    t1 = table1(point if len(point) else empty, confidence, settings.names or None)
    render.write_table(flat_table1(t1), lambda fmt: render_table1(t1, fmt, confidence), outputs)
    log.info(
        "Table 1: %d dataset x judge rows from %d pointwise runs (Avg Confidence: %s)",
        len(t1),
        len(point),
        confidence,
    )
    return t1


def table2_job(
    metrics: Sequence[str], outputs: Mapping[str, str], settings: TableSettings | None = None
) -> pd.DataFrame:
    """The paper's Table 2 (all settings pooled) and its per-setting variant from the pairwise
    metrics files: ``outputs`` maps ``metrics`` (the metrics concatenated) and tsv, md, tex, html
    of Table 2, and ``by_setting_tsv``, ``by_setting_md``, .. of the per-setting table;
    ``settings`` as :func:`table1_job`."""
    settings = settings or TableSettings()
    confidence = settings.confidence
    out = {k: v for k, v in outputs.items() if not k.startswith(BY_SETTING)}
    out_by_setting = {k.removeprefix(BY_SETTING): v for k, v in outputs.items() if k.startswith(BY_SETTING)}
    pair = read_metrics(metrics)
    write_tsv(pair, out["metrics"])
    src = pair if len(pair) else pd.DataFrame(columns=["dataset", "model", "setting"])
    display = settings.names or None
    t2 = table2(src, "overall", confidence=confidence, names=display)
    render.write_table(t2, lambda fmt: render_table2(t2, fmt, confidence=confidence), out)
    by = table2(src, None, confidence=confidence, names=display)
    render.write_table(
        by,
        lambda fmt: render_table2(by, fmt, ids=("dataset", "model", "setting"), confidence=confidence),
        out_by_setting,
    )
    log.info(
        "Table 2: %d dataset x judge rows, %d per setting (Avg Confidence: %s)", len(t2), len(by), confidence
    )
    return t2


def transition_figure_job(transition: str, png: str, pdf: str, title: str) -> None:
    """The heatmap of one pointwise run's transition matrix."""
    from judgelab.studies.overrating import figures as of

    of.transition_heatmap(pd.read_csv(transition, sep="\t"), title, png, pdf)


def pairwise_figure_job(metrics: str, png: str, pdf: str, title: str) -> None:
    """The rates by setting of one pairwise run."""
    from judgelab.studies.overrating import figures as of

    of.pairwise_rates(pd.read_csv(metrics, sep="\t", dtype={"setting": str}), title, png, pdf)


def confidence_figure_job(metrics: Sequence[str], png: str, pdf: str, title: str, confidence: str) -> None:
    """``metrics``: the pointwise metrics files of one dataset x model (one per scale);
    ``confidence``: the token-confidence definition shown (full or renormalised)."""
    from judgelab.studies.overrating import figures as of

    of.confidence_by_outcome(read_metrics(metrics), title, png, pdf, confidence=confidence)
