"""Ranking-study jobs: one function per workflow job, plain paths and values in, files out.

Per dataset: :func:`system_run_job` (one per system, ``source: systems``) or
:func:`download_run_job` (one per run, ``source: download``); :func:`judge_pool_job` (one per
live judge: the pool labelled with a PERAS template and persona) or :func:`import_labels_job`
(one per imported judge, no LLM call); :func:`score_job` (one per run x qrels);
:func:`correlations_job` (scores.tsv, correlations.tsv, pool.tsv); :func:`figures_job` (one per
judge x measure). Over every dataset: :func:`leaderboard_job`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from judgelab.data.tables import read_dataset, read_judgments, write_tsv
from judgelab.errors import InputError
from judgelab.project.runner import as_value
from judgelab.studies.ranking.runs import check_topics, read_run

# The libraries of one kind of job are imported by that job only (scipy.stats, scikit-learn,
# bm25s, ir-measures, the backends), so the many small jobs start fast.

log = logging.getLogger("judgelab")

#: Columns of an imported judge's label table.
IMPORTED_COLUMNS = ["qid", "docid", "label", "confidence"]


def read_labels(path: str | Path) -> pd.DataFrame:
    """A judge's label table (a live judge's judgments, or an imported judge's labels): qid, docid,
    label (Int64, missing where the judge gave none), and whatever else it holds."""
    return read_judgments(path)


def read_runs_checked(files: Mapping[str, str], topics) -> dict[str, pd.DataFrame]:
    """Run name -> run table of every file; a run naming none of ``topics`` is an error naming its
    file and first line."""
    runs = {}
    for name, path in files.items():
        run = read_run(path, name)
        check_topics(run, path, topics)
        runs[name] = run
    return runs


def _files(names: Sequence[str] | str, paths: Sequence[str]) -> dict[str, str]:
    names = [str(n) for n in as_value(names)]
    if len(names) != len(paths):
        raise ValueError(f"{len(names)} run names for {len(paths)} run files")
    return dict(zip(names, [str(p) for p in paths]))


# -- runs ---------------------------------------------------------------------------------------


def system_run_job(
    pairs: str, out: str, *, system: str | dict, name: str, candidates: str, depth: int
) -> pd.DataFrame:
    """The run of one system over the dataset table (see :mod:`judgelab.studies.ranking.systems`)."""
    from judgelab.studies.ranking.systems import rank, write_run

    spec = dict(as_value(system))
    run = rank(read_dataset(pairs), spec, candidates=candidates, depth=int(depth), tag=name)
    write_run(run, out)
    log.info(
        "%s (%s): %d topics, %d documents (candidates: %s, depth %d)",
        name,
        ", ".join(f"{k}={v}" for k, v in spec.items()),
        run["qid"].nunique(),
        len(run),
        candidates,
        int(depth),
    )
    return run


def download_run_job(url: str, out: str) -> None:
    """Fetch one run file (atomically; ``file://`` works) and check that it reads as a run."""
    from judgelab.data.sources import download

    download(url, out)
    run = read_run(out)
    log.info("%s: %d lines, %d topics", url, len(run), run["qid"].nunique())


# -- labels -------------------------------------------------------------------------------------


def import_labels_job(
    pairs: str, judge_file: str, out: str, *, scale: str | None = None, confidence_scale: str | None = None
) -> pd.DataFrame:
    """An imported judge's labels (qid, docid, label, confidence) read against the dataset table:
    errors name the file and line (:func:`judgelab.data.imported.read_judge_file`)."""
    from judgelab.data.imported import read_judge_file

    table = read_dataset(pairs)
    read = read_judge_file(judge_file, table, scale=scale or None, confidence_scale=confidence_scale or None)
    result = read[IMPORTED_COLUMNS]
    write_tsv(result, out)
    log.info("%s: %d of the dataset's %d pairs labelled", judge_file, len(result), len(table))
    return result


def judge_pool_job(
    pairs: str,
    runs: Sequence[str],
    out: str,
    *,
    run_names: Sequence[str] | str,
    pool_depth: int,
    persona: str,
    persona_file: str | None,
    template: str,
    labels: str | Sequence[str],
    model: str | dict,
    max_tokens: int,
    placement: str,
    cache: str,
    threads: int | None = None,
    desc: str = "ranking judge",
    model_name: str | None = None,
    answer: str = "parse",
    coverage: str | dict | None = None,
) -> pd.DataFrame:
    """Label the dataset's pool (every run's top ``pool_depth`` over the table's topics) where the
    passage text is known, with the PERAS judgment of ``template`` and ``persona``
    (:func:`judgelab.llm.judging.run_judgments`: the same requests as the PERAS judge job for the same
    pair, read the same way - ``answer`` -, so pairs it asked are cache hits with PERAS's labels;
    :func:`judgelab.llm.judging.judge_table`, coverage check included). Writes the judgment table
    (PERAS's columns), one row per pool pair whose text is known; a pair whose answer does not
    parse has a missing label."""
    from judgelab.llm.judge import Coverage, Judge
    from judgelab.llm.judging import judge_table
    from judgelab.llm.personas import read_persona
    from judgelab.llm.session import JobContext, model_spec
    from judgelab.studies.ranking.pool import judge_pairs, pool_table

    table = read_dataset(pairs)
    files = _files(run_names, runs)
    pool_ = pool_table(read_runs_checked(files, table["qid"].unique()), table, int(pool_depth))
    to_judge = judge_pairs(pool_, str(table["dataset"].iloc[0]) if len(table) else "")
    log.info(
        "pool of %d runs at depth %d: %d pairs, %d with a human grade, %d with a known passage text (judged)",
        len(files),
        int(pool_depth),
        len(pool_),
        int(pool_["human"].notna().sum()),
        len(to_judge),
    )
    judge = Judge(
        model=model_name or "model",
        spec=model_spec(model),
        template=template,
        labels=tuple(as_value(labels)),
        persona=read_persona(persona, persona_file),
        placement=placement,
        max_tokens=max_tokens,
        answer=answer,
        coverage=Coverage.from_param(coverage),
    )
    result = judge_table(to_judge, judge, JobContext(cache, threads, desc))
    write_tsv(result, out)
    return result


# -- scores -------------------------------------------------------------------------------------


def score_job(
    run: str,
    pairs: str,
    labels: Sequence[str],
    out: str,
    *,
    run_name: str,
    qrels: Sequence[Sequence[str]] | str,
    judges: Sequence[str] | str,
    measures: Sequence[str] | str,
) -> pd.DataFrame:
    """One run scored with ``measures`` under every qrels of ``qrels`` ((name, kind, judge)
    triples): kind ``human`` (the dataset table's grades), ``judge`` (the judge's labels; an
    unlabelled pair has no row) or ``filled`` (the human grades, holes filled with the judge's
    labels). ``labels``: the label files of ``judges``, in order. Rows: the columns of
    :data:`judgelab.studies.ranking.tables.SCORES_COLUMNS`."""
    from judgelab.studies.ranking.pool import fill_holes, human_qrels
    from judgelab.studies.ranking.scores import qrels_from_labels, score_runs

    table = read_dataset(pairs)
    judges = [str(j) for j in as_value(judges)]
    if len(judges) != len(labels):
        raise ValueError(f"{len(labels)} label files for the judges {judges}")
    judge_labels = dict(zip(judges, labels))
    r = read_run(run, run_name)
    check_topics(r, run, table["qid"].unique())
    human = human_qrels(table)
    parts = []
    for name, kind, judge in as_value(qrels):
        if kind == "human":
            q = human
        elif kind == "judge":
            q = qrels_from_labels(read_labels(judge_labels[judge]))
        elif kind == "filled":
            q, n_filled = fill_holes(human, read_labels(judge_labels[judge]))
            log.info("%s: %d human grades, %d holes filled by %s", name, len(human), n_filled, judge)
        else:
            raise ValueError(f"unknown qrels kind {kind!r} (human, judge, filled)")
        scores = score_runs({run_name: r}, q, as_value(measures), key="ranking.measures")
        scores.insert(1, "qrels", name)
        parts.append(scores)
        for m in scores[scores["topic"] == "all"].itertuples():
            log.info(
                "%s under %s (%d labelled pairs): %s %.4f, judged@k %.3f",
                run_name,
                name,
                len(q),
                m.measure,
                m.value,
                m.judged_at_k,
            )
    result = pd.concat(parts, ignore_index=True)[["run", "qrels", "measure", "topic", "value", "judged_at_k"]]
    write_tsv(result, out)
    return result


# -- the dataset's tables -----------------------------------------------------------------------


def correlations_job(
    pairs: str,
    runs: Sequence[str],
    labels: Sequence[str],
    scores: Sequence[str],
    out: Mapping[str, str],
    *,
    dataset: str,
    run_names: Sequence[str] | str,
    judges: Sequence[str] | str,
    comparisons: Sequence[Sequence[str]] | str,
    measures: Sequence[str] | str,
    pool_depth: int,
    settings: Mapping | str,
) -> pd.DataFrame:
    """The dataset's tables: ``out["scores"]`` (every run x qrels file concatenated),
    ``out["pool"]`` (the pool with the human grade and every judge's label) and
    ``out["correlations"]`` (per judge x measure: its system ranking against its reference's and
    its label agreement on the pool). ``labels``: the label files of ``judges``, in order;
    ``comparisons``: (judge, reference) pairs."""
    from judgelab.studies.ranking.pool import AGREEMENT_KEYS, label_agreement, labels_on_pool, pool_table
    from judgelab.studies.ranking.tables import CORRELATION_COLUMNS, compare, mean_judged, read_scores

    table = read_dataset(pairs)
    files = _files(run_names, runs)
    pool_ = pool_table(read_runs_checked(files, table["qid"].unique()), table, int(pool_depth))
    judges = [str(j) for j in as_value(judges)]
    if len(judges) != len(labels):
        raise ValueError(f"{len(labels)} label files for the judges {judges}")
    agreement = {}
    shown = pool_[["qid", "docid", "n_runs", "human", "text_known"]].copy()
    for judge, path in zip(judges, labels):
        on_pool = labels_on_pool(pool_, read_labels(path))
        shown[judge] = on_pool
        agreement[judge] = label_agreement(pool_, on_pool)
    write_tsv(shown, out["pool"])
    all_scores = pd.concat([read_scores(p) for p in scores], ignore_index=True)
    write_tsv(all_scores, out["scores"])
    settings = dict(as_value(settings))
    rows = []
    for judge, reference in as_value(comparisons):
        for measure in as_value(measures):
            row = {"dataset": dataset, "judge": judge, "reference": reference, "measure": measure}
            row.update(compare(all_scores, reference, judge, measure, settings))
            row.update({k: agreement[judge][k] for k in AGREEMENT_KEYS})
            row["reference_judged_at_k"] = mean_judged(all_scores, reference, measure)
            row["judge_judged_at_k"] = mean_judged(all_scores, judge, measure)
            rows.append(row)
            log.info(
                "%s vs %s, %s: %d systems, %d topics, tau %.3f [%.3f, %.3f], tau_ap %.3f, rho %.3f, "
                "rbo %.3f; labels on the pool: %d of %d graded pairs, kappa %.3f, alpha %.3f",
                judge,
                reference,
                measure,
                row["n_systems"],
                row["n_topics"],
                row["kendall_tau"],
                row["kendall_tau_low"],
                row["kendall_tau_high"],
                row["tau_ap"],
                row["spearman"],
                row["rbo"],
                row["n_labelled"],
                row["n_pairs"],
                row["kappa"],
                row["alpha"],
            )
    result = pd.DataFrame(rows, columns=CORRELATION_COLUMNS)
    write_tsv(result, out["correlations"])
    log.info(
        "%s: %d runs, pool %d pairs (%d with a human grade, %d with a known text), %d score rows",
        dataset,
        len(files),
        len(pool_),
        int(pool_["human"].notna().sum()),
        int(pool_["text_known"].sum()),
        len(all_scores),
    )
    return result


def leaderboard_job(correlations: Sequence[str], out: Mapping[str, str]) -> pd.DataFrame:
    """LLMJudge Table 3 over every dataset's correlations: ``out`` maps tsv, md, tex, html."""
    from judgelab.studies.ranking.tables import (
        TABLE_FORMATS,
        leaderboard,
        read_correlations,
        render_leaderboard,
    )

    frames = [read_correlations(p) for p in correlations]
    board = leaderboard(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame())
    write_tsv(board, out["tsv"])
    for fmt in TABLE_FORMATS[1:]:
        Path(out[fmt]).write_text(render_leaderboard(board, fmt), encoding="utf-8")
    log.info("leaderboard: %d dataset x measure x judge rows", len(board))
    return board


def figures_job(
    scores: str,
    correlations: str,
    out: Mapping[str, str],
    *,
    dataset: str,
    judge: str,
    reference: str,
    measure: str,
) -> None:
    """The score scatter and the rank-rank plot of one dataset x judge x measure: ``out`` maps
    scores_png, scores_pdf, ranks_png, ranks_pdf."""
    from judgelab.studies.ranking import figures
    from judgelab.studies.ranking.tables import read_correlations, read_scores, system_means

    corr = read_correlations(correlations)
    sel = corr[(corr["judge"] == judge) & (corr["reference"] == reference) & (corr["measure"] == measure)]
    if len(sel) != 1:
        raise InputError(
            f"{correlations} has {len(sel)} rows for {judge} vs {reference} on {measure}, not one"
        )
    row = sel.iloc[0]
    systems = system_means(read_scores(scores), reference, judge, measure)
    title = (dataset, measure)
    figures.score_scatter(systems, reference, judge, row, title, out["scores_png"], out["scores_pdf"])
    figures.rank_rank(systems, reference, judge, row, title, out["ranks_png"], out["ranks_pdf"])
