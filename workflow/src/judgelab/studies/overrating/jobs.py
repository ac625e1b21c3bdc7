"""Overrating (seed 004, section 2) jobs: one function per workflow job, plain paths and values
in, files out. Prompt texts and label sets are parameters, so a changed prompt reruns exactly the
jobs that use it.

Pointwise, per dataset x model x scale: :func:`pointwise_judge_job` (or
:func:`imported_pointwise_job` for a judge read from a qrels file, no LLM call) ->
:func:`pointwise_metrics_job`. Pairwise, per dataset: :func:`pair_sampling_job`; per dataset x
model: :func:`pairwise_judge_job` -> :func:`pairwise_metrics_job`. Then :func:`table1_job` and
:func:`table2_job` over every metrics file, and one figure job per figure.

The tables these jobs hand on (pointwise and pairwise judgments, sampled pairs, metrics) are read
only by this study, so their readers live here (:func:`read_pointwise`, :func:`read_pairwise`,
:func:`read_sampled`, :func:`read_metrics`); their columns are those of
:func:`judgelab.studies.overrating.pointwise.pointwise_columns`, :func:`~judgelab.studies.overrating.pairwise.pairwise_columns` and
:func:`~judgelab.studies.overrating.pairwise.sample_pairs`. Matplotlib is imported by the figure jobs only.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from judgelab.data.imported import SourcePairs, read_judge
from judgelab.data.tables import read_dataset, write_tsv
from judgelab.llm.judging import require_coverage
from judgelab.llm.session import LLMSession
from judgelab.project.runner import as_value
from judgelab.studies.overrating.pairwise import (
    SETTINGS,
    pair_outcomes,
    pairwise_metrics,
    run_pairwise,
    sample_pairs,
)
from judgelab.studies.overrating.pointwise import (
    imported_pointwise,
    pointwise_metrics,
    run_pointwise,
    transition_matrix,
)
from judgelab.studies.overrating.prompts import PAIRWISE_KIND, Prompt, check_labels, effective_scale
from judgelab.studies.overrating.tables import flat_table1, render_table1, render_table2, table1, table2

log = logging.getLogger("judgelab")


def _prompt(template: str, labels: str | Sequence[str], kind: str) -> Prompt:
    return Prompt(template, tuple(str(x) for x in as_value(labels)), kind)


def _read(path: str, **dtypes) -> pd.DataFrame:
    return pd.read_csv(
        path,
        sep="\t",
        keep_default_na=False,
        na_values=[""],
        dtype={"dataset": str, "qid": str, "docid": str, "model": str, "answer": str, **dtypes},
    )


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
    pairs: str,
    out: str,
    *,
    scale: str,
    template: str,
    labels: str | Sequence[str],
    model: str | dict,
    max_tokens: int,
    cache: str,
    threads: int | None = None,
    desc: str = "overrating pointwise",
    model_name: str | None = None,
    coverage: str | dict | None = None,
) -> pd.DataFrame:
    """Judge every pair of a dataset table on ``scale`` with ``template`` (its ``labels``, JSON
    or a list): label, parsed, answer, label_pos, p<label>..., label_mass, confidence,
    confidence_renorm per pair. ``model_name``: the model's key in ``models`` (named in errors);
    ``coverage``: the job's coverage check (:class:`judgelab.llm.judging.Coverage`)."""
    prompt = _prompt(template, labels, "judgment")
    check_labels(prompt.labels, scale)
    table = read_dataset(pairs)
    session = LLMSession(model, cache, threads, desc, name=model_name)
    with session as client:
        result = run_pointwise(table, prompt, client, max_tokens=int(max_tokens), desc=desc)
    _require_coverage(result, session, coverage, int(max_tokens), desc)
    write_tsv(result, out)
    return result


def _require_coverage(result: pd.DataFrame, session: LLMSession, coverage, bound: int, desc: str) -> None:
    require_coverage(
        result["parsed"],
        result["answer"],
        coverage=coverage,
        model=session.name,
        backend=session.spec.get("backend"),
        bound=bound,
        what=desc,
    )


def imported_pointwise_job(
    pairs: str,
    judge_file: str,
    out: str,
    *,
    scale: str | None,
    confidence_scale: str | None = None,
    source: Mapping[str, str] | None = None,
    encoding: str | None = None,
    out_summary: str | None = None,
    ids: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The pointwise judgments table of an imported judge (a qrels file; no LLM call).
    ``source``: the dataset's raw ``qrels`` and ``topics`` (read with ``encoding``): the file may
    label their pairs outside the selection (skipped, counted in the import's table
    ``out_summary``, one row: ``ids``, then :data:`judgelab.data.imported.IMPORT_SUMMARY_COLUMNS`)."""
    table = read_dataset(pairs)
    known = SourcePairs.read(source["qrels"], source["topics"], encoding) if source else None
    judge = read_judge(judge_file, table, source=known, scale=scale, confidence_scale=confidence_scale)
    log.info("%s", judge.log_line())
    result = imported_pointwise(table, judge, scale, confidence_scale)
    write_tsv(result, out)
    if out_summary:
        write_tsv(judge.summary(**dict(ids or {})), out_summary)
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
    pairs: str, judgments: str, out_metrics: str, out_transition: str, *, ids: Mapping[str, str]
) -> pd.DataFrame:
    """Metrics of one pointwise run (one row: ``ids`` = dataset, model, scale, then the metrics)
    and its transition matrix (tidy)."""
    scale = ids["scale"]
    table = read_dataset(pairs)[["qid", "docid", "grade"]]
    judged = read_pointwise(judgments)
    judged = judged[[c for c in ("qid", "docid", "label", "confidence", "confidence_renorm") if c in judged]]
    merged = table.merge(judged, on=["qid", "docid"], how="left", validate="one_to_one")
    if len(judged) != len(table) or merged["qid"].isna().any():
        raise ValueError(f"{judgments} does not judge the pairs of {pairs}")
    row = {**ids, **pointwise_metrics(merged, scale)}
    df = pd.DataFrame([row])
    write_tsv(df, out_metrics)
    tm = transition_matrix(merged, scale)
    write_tsv(pd.concat([pd.DataFrame([ids] * len(tm)), tm], axis=1), out_transition)
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


def pair_sampling_job(
    pairs: str, out: str, *, per_setting: int, seed: int, relevant_min: int
) -> pd.DataFrame:
    """The sampled pairs of a dataset (see :func:`judgelab.studies.overrating.pairwise.sample_pairs`)."""
    table = read_dataset(pairs)
    sampled = sample_pairs(table, int(per_setting), int(seed), int(relevant_min))
    write_tsv(sampled, out)
    counts = sampled.groupby("setting").size().reindex(list(SETTINGS), fill_value=0).to_dict()
    log.info(
        "%d queries, %d pairs sampled (at most %d per setting per query): %s",
        table["qid"].nunique(),
        len(sampled),
        int(per_setting),
        counts,
    )
    return sampled


def pairwise_judge_job(
    pairs: str,
    sampled: str,
    out: str,
    *,
    template: str,
    labels: str | Sequence[str],
    model: str | dict,
    max_tokens: int,
    cache: str,
    threads: int | None = None,
    desc: str = "overrating pairwise",
    model_name: str | None = None,
    coverage: str | dict | None = None,
) -> pd.DataFrame:
    """Judge every sampled pair in both orders with the forced-choice ``template``; its coverage
    check (``coverage``) counts the judgments (a pair in one order) that parsed."""
    prompt = _prompt(template, labels, PAIRWISE_KIND)
    table = read_dataset(pairs)
    session = LLMSession(model, cache, threads, desc, name=model_name)
    with session as client:
        result = run_pairwise(
            table, read_sampled(sampled), prompt, client, max_tokens=int(max_tokens), desc=desc
        )
    _require_coverage(result, session, coverage, int(max_tokens), desc)
    write_tsv(result, out)
    return result


def pairwise_metrics_job(
    judgments: str, out_metrics: str, out_outcomes: str, *, ids: Mapping[str, str]
) -> pd.DataFrame:
    """Per-pair outcomes (correct, tie, wrong win, missing) and the metrics per setting and
    overall (rows: ``ids`` = dataset, model, then setting and the metrics)."""
    outcomes = pair_outcomes(read_pairwise(judgments))
    write_tsv(outcomes, out_outcomes)
    m = pairwise_metrics(outcomes)
    df = pd.concat([pd.DataFrame([ids] * len(m)), m], axis=1)
    write_tsv(df, out_metrics)
    overall = m.iloc[-1]
    log.info(
        "%s: %d pairs, %d judged; acc %.1f%%, acc (no ties) %.1f%%, ties %.1f%%, wrong wins %.1f%%",
        "/".join(ids.values()),
        overall["n_pairs"],
        overall["n_judged"],
        overall["accuracy_pct"],
        overall["accuracy_no_ties_pct"],
        overall["tie_rate_pct"],
        overall["wrong_win_pct"],
    )
    return df


# --------------------------------------------------------------------------------------------
# Tables and figures


def _write_table(df: pd.DataFrame, render, out: Mapping[str, str]) -> None:
    write_tsv(df, out["tsv"])
    for fmt in ("md", "tex", "html"):
        Path(out[fmt]).write_text(render(fmt), encoding="utf-8")


def table1_job(
    metrics: Sequence[str],
    out: Mapping[str, str],
    *,
    confidence: str = "full",
    names: str | Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Seed 004 Table 1 from the pointwise metrics files: ``out`` maps ``metrics`` (the metrics
    concatenated, tsv) and tsv, md, tex, html (the table). ``confidence``: the token-confidence
    definition of its "Avg Confidence" (full or renormalised; the other follows); ``names``: the
    judges' display names by model key (JSON or a mapping)."""
    point = read_metrics(metrics)
    write_tsv(point, out["metrics"])
    empty = pd.DataFrame(columns=["dataset", "model", "scale"])
    t1 = table1(point if len(point) else empty, confidence, as_value(names) if names else None)
    _write_table(flat_table1(t1), lambda fmt: render_table1(t1, fmt, confidence), out)
    log.info(
        "Table 1: %d dataset x judge rows from %d pointwise runs (Avg Confidence: %s)",
        len(t1),
        len(point),
        confidence,
    )
    return t1


def table2_job(
    metrics: Sequence[str],
    out: Mapping[str, str],
    out_by_setting: Mapping[str, str],
    *,
    confidence: str = "full",
    names: str | Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Seed 004 Table 2 (all settings pooled) and its per-setting variant from the pairwise
    metrics files: ``out`` maps ``metrics`` (the metrics concatenated) and tsv, md, tex, html;
    ``out_by_setting`` the per-setting table's tsv, md, tex, html. ``confidence`` and ``names``
    as :func:`table1_job`."""
    pair = read_metrics(metrics)
    write_tsv(pair, out["metrics"])
    src = pair if len(pair) else pd.DataFrame(columns=["dataset", "model", "setting"])
    display = as_value(names) if names else None
    t2 = table2(src, "overall", confidence, display)
    _write_table(t2, lambda fmt: render_table2(t2, fmt, confidence=confidence), out)
    by = table2(src, None, confidence, display)
    _write_table(
        by,
        lambda fmt: render_table2(by, fmt, ids=("dataset", "model", "setting"), confidence=confidence),
        out_by_setting,
    )
    log.info(
        "Table 2: %d dataset x judge rows, %d per setting (Avg Confidence: %s)", len(t2), len(by), confidence
    )
    return t2


def transition_figure_job(transition: str, out_png: str, out_pdf: str, *, title: str) -> None:
    from judgelab.studies.overrating import figures as of

    of.transition_heatmap(pd.read_csv(transition, sep="\t"), title, out_png, out_pdf)


def pairwise_figure_job(metrics: str, out_png: str, out_pdf: str, *, title: str) -> None:
    from judgelab.studies.overrating import figures as of

    of.pairwise_rates(pd.read_csv(metrics, sep="\t", dtype={"setting": str}), title, out_png, out_pdf)


def confidence_figure_job(
    metrics: Sequence[str], out_png: str, out_pdf: str, *, title: str, confidence: str = "full"
) -> None:
    """``metrics``: the pointwise metrics files of one dataset x model (one per scale);
    ``confidence``: the token-confidence definition shown (full or renormalised)."""
    from judgelab.studies.overrating import figures as of

    of.confidence_by_outcome(read_metrics(metrics), title, out_png, out_pdf, confidence=confidence)
