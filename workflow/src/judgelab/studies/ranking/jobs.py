"""Ranking-study jobs: one function per workflow job, its inputs, outputs and settings values
(:mod:`judgelab.studies.ranking.settings`, a :class:`~judgelab.llm.judge.Judge`) in, files out.

Per dataset: :func:`system_run_job` (one per system, ``source: systems``) or
:func:`download_run_job` (one per run, ``source: download``); :func:`judge_pool_job` (one per
live judge: the pool labelled with a PERAS template and persona) or :func:`import_labels_job`
(one per imported judge, no LLM call); :func:`score_job` (every run x qrels, one job per dataset);
:func:`correlations_job` (correlations.tsv, pool.tsv); :func:`figures_job` (one per
judge x measure). With ``peras.repeats`` above 1: :func:`repeats_pool_job` (one per live judge:
its pool labelled k times) and :func:`repeat_taus_job` (each repeat's tau, their spread, the
majority's tau). Over every dataset: :func:`leaderboard_job`, :func:`calibration_job` (the
calibration of every judge's pool labels).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgelab.analysis.calibration import CalibrationSettings
from judgelab.analysis.committee import Committee
from judgelab.data.imported import ImportReading
from judgelab.data.readers import read_run
from judgelab.data.tables import read_dataset, read_judgments, write_tsv
from judgelab.errors import InputError
from judgelab.llm.judge import Judge
from judgelab.llm.session import JobContext
from judgelab.params import Files
from judgelab.studies.ranking.runs import check_topics
from judgelab.studies.ranking.settings import (
    AnnotatedEstimate,
    Circularity,
    CircularityFigure,
    Comparisons,
    CorrelationSettings,
    Figure,
    JudgeCost,
    Pooling,
    PPISettings,
    RepeatTaus,
    Scoring,
    System,
)

# The libraries of one kind of job are imported by that job only (scipy.stats, scikit-learn,
# bm25s, ir-measures, the backends), so the many small jobs start fast.

log = logging.getLogger("judgelab")


@dataclass(frozen=True)
class DatasetFiles(Files):
    """A dataset's files that the correlation and circularity jobs read, filled from the rule's
    inputs of these names: ``pairs``, the dataset table (the human grades); ``runs``, its run files
    (in the plan's run order); ``scores``, its scores table (:func:`score_job`)."""

    pairs: str
    runs: Sequence[str]
    scores: str


#: Columns of an imported judge's label table.
IMPORTED_COLUMNS = ["qid", "docid", "label", "confidence"]

#: Columns of the label table of an imported judge that gives scores: no label, its ``score``.
SCORED_COLUMNS = [*IMPORTED_COLUMNS, "score"]


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


def _label_files(judges: Sequence[str], labels: Sequence[str]) -> dict[str, str]:
    """Judge -> label file (``labels`` in the order of ``judges``)."""
    if len(judges) != len(labels):
        raise ValueError(f"{len(labels)} label files for the judges {list(judges)}")
    return dict(zip(judges, [str(p) for p in labels]))


# -- runs ---------------------------------------------------------------------------------------


def system_run_job(pairs: str, run: str, system: System) -> pd.DataFrame:
    """The run of one system over the dataset table, written to ``run`` (see
    :mod:`judgelab.studies.ranking.systems`)."""
    from judgelab.studies.ranking.systems import rank, write_run

    spec = dict(system.spec)
    result = rank(
        read_dataset(pairs), spec, candidates=system.candidates, depth=system.depth, tag=system.name
    )
    write_run(result, run)
    log.info(
        "%s (%s): %d topics, %d documents (candidates: %s, depth %d)",
        system.name,
        ", ".join(f"{k}={v}" for k, v in spec.items()),
        result["qid"].nunique(),
        len(result),
        system.candidates,
        system.depth,
    )
    return result


def download_run_job(url: str, run: str) -> None:
    """Fetch one run file to ``run`` (atomically; ``file://`` works) and check that it reads as a
    run; one that came without a length (no Content-Length) is checked before it takes its name
    (it ends with a line end and reads as a run: :func:`judgelab.data.sources.download`)."""
    from judgelab.data.sources import download, lines_and

    download(url, run, shape=lines_and(read_run))
    table = read_run(run)
    log.info("%s: %d lines, %d topics", url, len(table), table["qid"].nunique())


# -- labels -------------------------------------------------------------------------------------


def import_labels_job(pairs: str, judge_file: str, labels: str, reading: ImportReading) -> pd.DataFrame:
    """An imported judge's labels (qid, docid, label, confidence) read against the dataset table
    with the scales the judge declares (``reading``): errors name the file and line
    (:func:`judgelab.data.imported.read_judge`); a published judge's dropped lines are counted
    in the log. A judge that gives scores (``reading.scale`` ``scores``) has no label: its table
    holds its ``score`` (:data:`SCORED_COLUMNS`)."""
    from judgelab.data.imported import read_judge

    table = read_dataset(pairs)
    read = read_judge(
        judge_file,
        table,
        scale=reading.scale or None,
        confidence_scale=reading.confidence_scale or None,
        drop=reading.drop,
        score_range=reading.score_range,
    )
    if reading.scale == "scores":
        result = read.labels.assign(label=pd.array([pd.NA] * len(read.labels), dtype="Int64"))
        result = result[SCORED_COLUMNS]
    else:
        result = read.labels[IMPORTED_COLUMNS]
    write_tsv(result, labels)
    log.info(read.log_line())
    what = "scored" if reading.scale == "scores" else "labelled"
    log.info("%s: %d of the dataset's %d pairs %s", judge_file, len(result), len(table), what)
    return result


def committee_job(labels: Sequence[str], committee_labels: str, committee: Committee) -> pd.DataFrame:
    """A committee's labels (:func:`judgelab.analysis.committee.committee_labels`) from its
    members' label files (``labels``, in ``committee.members`` order)."""
    from judgelab.analysis import committee as com

    members = {m: read_labels(p) for m, p in zip(committee.members, labels)}
    table = com.committee_labels(members, committee.rule, committee.quorum or None)
    write_tsv(table, committee_labels)
    log.info(
        "%s (%s of %s): %d pairs, %d labelled (%s)",
        committee.name,
        committee.rule,
        ", ".join(committee.members),
        len(table),
        int(table["label"].notna().sum()),
        {int(k): int(v) for k, v in table["label"].value_counts().sort_index().items()},
    )
    return table


def judge_pool_job(
    pairs: str,
    runs: Sequence[str],
    labels: str,
    pooling: Pooling,
    judge: Judge,
    context: JobContext,
    persona_file: str | None = None,
) -> pd.DataFrame:
    """Label the dataset's pool (every run's top ``pooling.depth`` over the table's topics) where
    the passage text is known, with ``judge``: the PERAS judgment of the study's template and
    persona (``persona_file``: a generated persona's instruction, when the judge's persona is
    one), so its requests are the PERAS judge job's for the same pair, read the same way, and
    pairs PERAS asked are cache hits with PERAS's labels
    (:func:`judgelab.llm.judging.judge_table`, coverage check included). Writes the judgment
    table ``labels`` (PERAS's columns), one row per pool pair whose text is known; a pair whose
    answer does not parse has a missing label."""
    from judgelab.llm.judging import judge_table
    from judgelab.studies.ranking.pool import judge_pairs, pool_table

    table = read_dataset(pairs)
    files = pooling.files(runs)
    pool_ = pool_table(read_runs_checked(files, table["qid"].unique()), table, pooling.depth)
    to_judge = judge_pairs(pool_, str(table["dataset"].iloc[0]) if len(table) else "")
    log.info(
        "pool of %d runs at depth %d: %d pairs, %d with a human grade, %d with a known passage text (judged)",
        len(files),
        pooling.depth,
        len(pool_),
        int(pool_["human"].notna().sum()),
        len(to_judge),
    )
    result = judge_table(to_judge, judge.resolved(persona_file), context)
    write_tsv(result, labels)
    return result


@dataclass(frozen=True)
class PoolFiles(Files):
    """A live judge's pool files that its repeats job reads, filled from the rule's inputs of these
    names: ``labels``, its pool labels (:func:`judge_pool_job`: sample 0, and the label
    distributions repeats are drawn from); ``pairs``, the dataset table, and ``runs``, its run files
    (in the plan's run order), from which a judge that parses rebuilds the pool it asks again
    (empty for one read from the logits: it asks nothing)."""

    labels: str
    pairs: str = ""
    runs: Sequence[str] = ()


def repeats_pool_job(
    files: PoolFiles,
    repeats: str,
    pooling: Pooling,
    judge: Judge,
    samples: int,
    context: JobContext | None = None,
    persona_file: str | None = None,
) -> pd.DataFrame:
    """A live judge's pool labelled ``samples`` (k) times (``peras.repeats``,
    :func:`judgelab.project.repeats.repeat_labels`): a judge read from the logits draws its k
    labels from its pool labels' distributions (no call, no ``context``: rule
    ``ranking_repeat_draws``); one that parses asks samples 1..k-1 of the pool pairs whose text is
    known (sample 0 is its pool labels'; the requests are PERAS's repeats' for the same pair, so
    pairs PERAS repeated are cache hits: rule ``ranking_repeats``). Writes the repeats table
    ``repeats``, one row per pool pair x sample."""
    from judgelab.project.repeats import repeat_labels, sampling_note

    judged = read_labels(files.labels)
    if judge.answer == "logits":
        result = repeat_labels(judged, judged, judge, samples)
    else:
        from judgelab.studies.ranking.pool import judge_pairs, pool_table

        table = read_dataset(files.pairs)
        runs = read_runs_checked(pooling.files(files.runs), table["qid"].unique())
        to_judge = judge_pairs(
            pool_table(runs, table, pooling.depth), str(table["dataset"].iloc[0]) if len(table) else ""
        )
        result = repeat_labels(to_judge, judged, judge.resolved(persona_file), samples, context)
    write_tsv(result, repeats)
    log.info(
        "%d pool pairs x %s; %d labels missing",
        len(judged),
        sampling_note(judge, samples),
        int(result["label"].isna().sum()),
    )
    return result


# -- scores -------------------------------------------------------------------------------------


def score_job(
    pairs: str,
    runs: Sequence[str],
    labels: Sequence[str],
    scores: str,
    scoring: Scoring,
    cache: str,
) -> pd.DataFrame:
    """Every run of the dataset (``runs``, the files of ``scoring.run_names`` in order) scored with
    ``scoring.measures`` under every qrels of ``scoring.qrels`` ((name, kind, judge) triples): kind
    ``human`` (the dataset table's grades), ``judge`` (the judge's labels; an unlabelled pair has
    no row), ``filled`` (the human grades, holes filled with the judge's labels), ``expected``
    (the judge's expected grades as gains) or ``scores`` (a score judge's scores as gains). ``labels``:
    the label files of ``scoring.judges``, in order. Each run's scores under each qrels are kept
    by content digest in the folder ``cache`` (:mod:`judgelab.studies.ranking.scorecache`): only
    the (run, qrels) pairs whose run file, qrels, measures or scoring code changed are scored.
    Writes ``scores`` (the dataset's ``scores.tsv``, columns
    :data:`judgelab.studies.ranking.tables.SCORES_COLUMNS`, by run, then qrels)."""
    from judgelab.studies.ranking.scorecache import ScoreCache, score_all

    table = read_dataset(pairs)
    store = ScoreCache(Path(cache))
    result = score_all(
        scoring.files(runs),
        scoring_qrels(table, scoring, labels),
        scoring.measures,
        store,
        table["qid"].unique(),
        key="ranking.measures",
    )
    write_tsv(result, scores)
    log.info(
        "%d runs x %d qrels: %d scored, %d read from the cache (%s)",
        len(scoring.run_names),
        len(scoring.qrels),
        len(store.misses),
        store.hits,
        cache,
    )
    for m in result[result["topic"] == "all"].itertuples():
        log.info("%s under %s: %s %.4f, judged@k %.3f", m.run, m.qrels, m.measure, m.value, m.judged_at_k)
    return result


def scoring_qrels(
    table: pd.DataFrame, scoring: Scoring, labels: Sequence[str]
) -> list[tuple[str, pd.DataFrame]]:
    """(name, qrels table) of every qrels of ``scoring.qrels``, built from the dataset ``table``
    and the label files ``labels`` of ``scoring.judges`` (in order)."""
    from judgelab.studies.ranking.pool import fill_holes, human_qrels
    from judgelab.studies.ranking.scores import expected_qrels, qrels_from_labels, score_qrels

    judge_labels = _label_files(scoring.judges, labels)
    human = human_qrels(table)
    out = []
    for name, kind, judge in scoring.qrels:
        if kind == "human":
            q = human
        elif kind == "judge":
            q = qrels_from_labels(read_labels(judge_labels[judge]))
        elif kind == "filled":
            q, n_filled = fill_holes(human, read_labels(judge_labels[judge]))
            log.info("%s: %d human grades, %d holes filled by %s", name, len(human), n_filled, judge)
        elif kind == "expected":
            q = expected_qrels(read_labels(judge_labels[judge]))
            log.info("%s: %d pairs with %s's expected grade as the gain", name, len(q), judge)
        elif kind == "scores":
            q = score_qrels(read_labels(judge_labels[judge]))
            log.info("%s: %d pairs with %s's score as the gain (x 1000)", name, len(q), judge)
        else:
            raise ValueError(f"unknown qrels kind {kind!r} (human, judge, filled, expected, scores)")
        out.append((name, q))
    return out


# -- the dataset's tables -----------------------------------------------------------------------


def _cost(
    judged: pd.DataFrame, how: JudgeCost | None, known: Mapping[str, dict] | None = None
) -> dict[str, Any]:
    """The cost columns of one judge's label table (:func:`judgelab.llm.pricing.judgment_cost`),
    with the template and persona of its requests; a committee's: its members' (``known``, the
    costs computed so far: members come first) summed."""
    from judgelab.llm.pricing import Prices, judgment_cost

    how = how or JudgeCost(judge="")
    if how.members:
        parts = [dict((known or {})[m]) for m in how.members]
        out: dict[str, Any] = {
            "cost_source": "committee of " + ", ".join(how.members),
            **{
                k: sum(p[k] for p in parts)
                for k in ("calls", "input_tokens", "output_tokens", "usd", "model_s")
            },
        }
        out["usd_per_1k"] = out["usd"] / out["calls"] * 1000 if out["calls"] else 0.0
        return out | {"judge_template": "", "judge_persona": ""}
    prices = Prices(*how.prices) if how.prices else None
    out = judgment_cost(judged, prices, backend=how.backend or None, batch=how.batch, imported=how.imported)
    return out | {"judge_template": how.template, "judge_persona": how.persona}


def correlations_job(
    files: DatasetFiles,
    labels: Sequence[str],
    outputs: Mapping[str, str],
    pooling: Pooling,
    comparisons: Comparisons,
    settings: CorrelationSettings,
    member_labels: Sequence[str] = (),
) -> pd.DataFrame:
    """The dataset's tables from its scores table ``files.scores`` (:func:`score_job`):
    ``outputs["pool"]`` (the pool with the human grade and every judge's label) and
    ``outputs["correlations"]`` (per judge x measure of ``comparisons``: its system ranking
    against its reference's, with the correlation options ``settings``, the system level's
    Bland-Altman bias and limits, and its label agreement on the pool) and
    ``outputs["bland_altman"]`` (the value agreement at the system and the response level,
    :mod:`judgelab.studies.ranking.values`) with, in the folder ``outputs["bland_altman_figures"]``,
    each judge's mean-difference figure ``<judge>.{png,pdf}`` (drawn here, where the scores are
    read, rather than by a job per judge that would start Python for one figure). ``labels``: the label files of ``comparisons.judges``, in order;
    ``member_labels``: those of ``comparisons.member_costs`` (persona committees' members under
    other personas: counted in their committee's cost)."""
    from judgelab.studies.ranking.pool import (
        AGREEMENT_KEYS,
        label_agreement,
        labels_on_pool,
        pool_table,
        score_agreement,
    )
    from judgelab.studies.ranking.scores import expected_name
    from judgelab.studies.ranking.tables import CORRELATION_COLUMNS, compare, mean_judged, read_scores
    from judgelab.studies.ranking.values import bland_altman_table, system_cells, value_agreement

    dataset = comparisons.dataset
    table = read_dataset(files.pairs)
    run_files = pooling.files(files.runs)
    pool_ = pool_table(read_runs_checked(run_files, table["qid"].unique()), table, pooling.depth)
    agreement: dict[str, Any] = {}
    costs: dict[str, dict] = {}
    how = {c.judge: c for c in comparisons.costs}
    if len(member_labels) != len(comparisons.member_costs):
        raise ValueError("one label file per committee member under another persona expected")
    for member, path in zip(comparisons.member_costs, member_labels):
        costs[member.judge] = _cost(read_labels(path), member)
    shown = pool_[["qid", "docid", "n_runs", "human", "text_known"]].copy()
    ranges = comparisons.score_ranges
    for judge, path in _label_files(comparisons.judges, labels).items():
        judged = read_labels(path)
        if judge in ranges:  # scores, not labels: no kappa; alpha only after the declared map
            on_pool = labels_on_pool(pool_, judged, "score")
            agreement[judge] = score_agreement(pool_, on_pool, ranges[judge], comparisons.score_alpha or None)
        else:
            on_pool = labels_on_pool(pool_, judged)
            agreement[judge] = label_agreement(pool_, on_pool)
        shown[judge] = on_pool
        costs[judge] = _cost(judged, how.get(judge), costs)
        expected = expected_name(judge)
        if any(j == expected for j, _ in comparisons.references):
            # the expected grade rounded to a grade, for the label agreement of the expected gains
            rounded = pd.to_numeric(judged["expected_grade"], errors="coerce").round().astype("Int64")
            as_grade = labels_on_pool(pool_, judged.assign(label=rounded))
            shown[expected] = as_grade
            agreement[expected] = label_agreement(pool_, as_grade)
            costs[expected] = costs[judge]
    write_tsv(shown, outputs["pool"])
    all_scores = read_scores(files.scores)
    rows, value_rows = [], []
    for judge, reference in comparisons.references:
        for measure in comparisons.measures:
            row: dict[str, Any] = {
                "dataset": dataset,
                "judge": judge,
                "reference": reference,
                "measure": measure,
            }
            row.update(compare(all_scores, reference, judge, measure, settings))
            values = value_agreement(all_scores, reference, judge, measure)
            value_rows += [{"dataset": dataset, **v} for v in values]
            row.update(system_cells(values))
            row.update({k: agreement[judge][k] for k in AGREEMENT_KEYS})
            row["reference_judged_at_k"] = mean_judged(all_scores, reference, measure)
            row["judge_judged_at_k"] = mean_judged(all_scores, judge, measure)
            row.update(costs[judge])
            rows.append(row)
            if not row["kendall_tau_low"] <= row["kendall_tau"] <= row["kendall_tau_high"]:
                log.warning(
                    "%s vs %s, %s: tau %.3f lies outside its %s interval [%.3f, %.3f]: %.0f%% of the "
                    "resampled taus are below it, more bias than the bootstrap corrects "
                    "(docs/studies/ranking.md)",
                    judge,
                    reference,
                    measure,
                    row["kendall_tau"],
                    row["kendall_tau_ci"],
                    row["kendall_tau_low"],
                    row["kendall_tau_high"],
                    100.0 * row["kendall_tau_boot_below"],
                )
            log.info(
                "%s vs %s, %s: %d systems, %d topics, tau %.3f [%.3f, %.3f] (%s; %.0f%% of the "
                "resampled taus below it), tau_ap %.3f, rho %.3f, rbo %.3f, tau_gap %.3f (@k %.3f); "
                "values: bias %.4f, limits of agreement [%.4f, %.4f]; "
                "labels on the pool: %d of %d graded pairs, kappa %.3f, alpha %.3f%s",
                judge,
                reference,
                measure,
                row["n_systems"],
                row["n_topics"],
                row["kendall_tau"],
                row["kendall_tau_low"],
                row["kendall_tau_high"],
                row["kendall_tau_ci"],
                100.0 * row["kendall_tau_boot_below"],
                row["tau_ap"],
                row["spearman"],
                row["rbo"],
                row["tau_gap"],
                row["tau_gap_at_k"],
                row["ba_bias"],
                row["ba_loa_low"],
                row["ba_loa_high"],
                row["n_labelled"],
                row["n_pairs"],
                row["kappa"],
                row["alpha"],
                f" ({row['alpha_map']})" if row["alpha_map"] else "",
            )
    result = pd.DataFrame(rows, columns=CORRELATION_COLUMNS)
    write_tsv(result, outputs["correlations"])
    value_table = bland_altman_table(value_rows)
    write_tsv(value_table, outputs["bland_altman"])
    if comparisons.figures:
        value_figures(all_scores, value_table, comparisons, outputs["bland_altman_figures"])
    else:  # ranking.figures: false - the folder stays empty
        Path(outputs["bland_altman_figures"]).mkdir(parents=True, exist_ok=True)
    log.info(
        "%s: %d runs, pool %d pairs (%d with a human grade, %d with a known text), %d score rows",
        dataset,
        len(run_files),
        len(pool_),
        int(pool_["human"].notna().sum()),
        int(pool_["text_known"].sum()),
        len(all_scores),
    )
    return result


def repeat_taus_job(
    files: DatasetFiles, repeats: Sequence[str], outputs: Mapping[str, str], settings: RepeatTaus
) -> pd.DataFrame:
    """How much of each repeated judge's distance from its reference is noise
    (:mod:`judgelab.studies.ranking.repeats`): every run (``files.runs``, the files of
    ``settings.run_names``) scored under each repeat's labels and their majority (``repeats``: the
    repeats tables of ``settings.judges``, in order), and per judge x reference x measure the tau
    of each repeat's system order against the reference's (``files.scores``, the dataset's scores
    table, which also gives the judge's own tau), their spread and the majority's tau
    (``outputs``: tsv, md)."""
    from judgelab.analysis import render
    from judgelab.analysis.consistency import wide_labels
    from judgelab.project.repeats import read_repeats
    from judgelab.studies.ranking.repeats import repeat_columns, repeat_qrels, repeat_rows
    from judgelab.studies.ranking.scores import score_labels
    from judgelab.studies.ranking.tables import read_scores

    if len(repeats) != len(settings.judges):
        raise ValueError(f"{len(repeats)} repeats tables for the judges {list(settings.judges)}")
    table = read_dataset(files.pairs)
    runs = read_runs_checked(settings.files(files.runs), table["qid"].unique())
    scored = {}
    for judge, path in zip(settings.judges, repeats):
        wide = wide_labels(read_repeats(path))
        if wide.shape[1] != settings.repeats:
            raise ValueError(f"{path} holds {wide.shape[1]} samples, not the {settings.repeats} repeats")
        scored[judge] = pd.concat(
            [
                score_labels(runs, labels, settings.measures, key="ranking.measures").assign(qrels=name)
                for name, labels in repeat_qrels(wide).items()
            ],
            ignore_index=True,
        )
    rows = repeat_rows(
        read_scores(files.scores), scored, settings.references, settings.measures, settings.repeats
    )
    result = pd.DataFrame(
        [{"dataset": settings.dataset, **r} for r in rows], columns=repeat_columns(settings.repeats)
    )
    write_tsv(result, outputs["tsv"])
    Path(outputs["md"]).write_text(render.markdown_frame(result), encoding="utf-8")
    for r in result.itertuples(index=False):
        log.info(
            "%s vs %s, %s: tau %.3f; its %d repeats %.3f-%.3f (SD %.3f); their majority %.3f",
            r.judge,
            r.reference,
            r.measure,
            r.kendall_tau,
            r.repeats,
            r.tau_min,
            r.tau_max,
            r.tau_sd,
            r.majority_tau,
        )
    return result


def value_figures(scores: pd.DataFrame, table: pd.DataFrame, comparisons: Comparisons, folder: str) -> None:
    """The mean-difference figure of every judge of ``comparisons`` against its reference (every
    measure, both levels; :func:`judgelab.studies.ranking.figures.bland_altman_figure`) from the
    dataset's ``scores`` and its Bland-Altman ``table``, as ``folder/<judge>.{png,pdf}``."""
    from judgelab.studies.ranking import figures
    from judgelab.studies.ranking.values import paired_values

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for judge, reference in comparisons.references:
        rows = table[(table["judge"] == judge) & (table["reference"] == reference)]
        pairs = {m: paired_values(scores, reference, judge, m) for m in comparisons.measures}
        names = (comparisons.dataset, judge, reference)
        figures.bland_altman_figure(pairs, rows, names, out / f"{judge}.png", out / f"{judge}.pdf")


def circularity_job(
    files: DatasetFiles,
    labels: Sequence[str],
    outputs: Mapping[str, str],
    scoring: Scoring,
    circularity: Circularity,
    cache: str,
    extra: Sequence[str] = (),
) -> pd.DataFrame:
    """The run each judge builds (:mod:`judgelab.studies.ranking.circularity`): the base run
    (``circularity.base``, or the run the human qrels of ``scores`` score highest on the first
    measure) with its top ``circularity.depth`` per topic re-ordered by the judge's labels, written
    to ``outputs["runs"]/<judge>.txt``; every such run scored under every qrels of ``scoring``
    (through the scores cache ``cache``, as :func:`score_job`) into ``outputs["scores"]``; and
    ``outputs["tsv"]`` (``circularity.tsv``), ``outputs["md"]``, ``outputs["html"]``: per judge x
    measure, the new run ranked among the dataset's runs (``files.scores``, which stays as it
    is); a judge of ``circularity.scored`` (it gives scores) re-orders by its score.
    ``files.runs``: the files of ``scoring.run_names``; ``labels``: those of ``scoring.judges``;
    ``extra``: the circularity labels of the live judges ``circularity.labelled`` (depth past the
    pool: :func:`circularity_judge_job`), which re-order the base run instead of their pool labels."""
    from judgelab.studies.ranking import circularity as circ
    from judgelab.studies.ranking.scorecache import ScoreCache, score_all
    from judgelab.studies.ranking.tables import read_scores

    table = read_dataset(files.pairs)
    run_files = scoring.files(files.runs)
    judge_labels = _label_files(scoring.judges, labels)
    order_labels = {**judge_labels, **_label_files(circularity.labelled, extra)}
    systems = read_scores(files.scores)
    base = circularity.base or circ.best_run(systems, circularity.measures[0])
    if base not in run_files:
        raise InputError(
            f"no run {base!r} on dataset {circularity.dataset} (runs: {sorted(run_files)})",
            key="ranking.circularity.base",
        )
    base_run = read_run(run_files[base], base)
    topics = check_topics(base_run, run_files[base], table["qid"].unique())
    folder = Path(outputs["runs"])
    folder.mkdir(parents=True, exist_ok=True)
    built, shares, names = {}, {}, {}
    for judge, _ in circularity.references:
        names[judge] = circ.built_name(base, judge)
        by = "score" if judge in circularity.scored else "label"
        order = circ.judge_order(base_run, read_labels(order_labels[judge]), circularity.depth, by)
        shares[judge] = circ.labelled_share(order, circularity.depth, topics)
        built[names[judge]] = str(folder / f"{judge}.txt")
        circ.write_judge_run(circ.as_run(order, names[judge]), built[names[judge]])
        moved = int((order["rank"] != order["base_rank"]).sum())
        log.info(
            "%s: %s re-ordered by %s at depth %d: %d documents moved, %.3f of the top %d labelled",
            names[judge],
            base,
            judge,
            circularity.depth,
            moved,
            shares[judge],
            circularity.depth,
        )
    store = ScoreCache(Path(cache))
    new_scores = score_all(
        built,
        scoring_qrels(table, scoring, labels),
        scoring.measures,
        store,
        table["qid"].unique(),
        key="ranking.measures",
    )
    write_tsv(new_scores, outputs["scores"])
    rows = []
    for judge, reference in circularity.references:
        for row in circ.circularity_rows(
            systems, new_scores, names[judge], base, judge, reference, circularity.measures
        ):
            row.update(
                dataset=circularity.dataset,
                judge=judge,
                reference=reference,
                depth=circularity.depth,
                labelled_at_depth=shares[judge],
            )
            rows.append(row)
            log.info(
                "%s, %s: %s ranks %d of %d under %s, %d under %s (gap %+d; base %s: %d and %d); "
                "tau %.3f with it, %.3f without; judged@k under human %.3f",
                judge,
                row["measure"],
                names[judge],
                row["reference_rank"],
                row["n_systems"],
                reference,
                row["judge_rank"],
                judge,
                row["rank_gap"],
                base,
                row["base_reference_rank"],
                row["base_judge_rank"],
                row["kendall_tau"],
                row["kendall_tau_without"],
                row["judged_at_k"],
            )
    result = pd.DataFrame(rows, columns=circ.CIRCULARITY_COLUMNS)
    write_tsv(result, outputs["tsv"])
    for fmt in ("md", "html"):
        Path(outputs[fmt]).write_text(circ.render_circularity(result, fmt), encoding="utf-8")
    return result


def circularity_judge_job(
    files: DatasetFiles,
    pool: str,
    labels: str,
    scoring: Scoring,
    circularity: Circularity,
    judge: Judge,
    context: JobContext,
    persona_file: str | None = None,
) -> pd.DataFrame:
    """A live judge's labels of the base run's top ``circularity.depth`` per topic where it goes
    past the pool (``depth`` > ``pool_depth``): the base run (``circularity.base``, or the run the
    human qrels of ``files.scores`` score highest on the first measure), its pairs already in the judge's
    pool labels (``pool``) taken from there, the others whose passage text is known judged with
    ``judge`` (the pool job's judge: the same requests, so pairs asked before are cache hits).
    Writes ``labels`` (the pool's columns): one row per labelled pair of the base run's top."""
    from judgelab.llm.judging import judge_table
    from judgelab.studies.ranking import circularity as circ
    from judgelab.studies.ranking.tables import read_scores

    table = read_dataset(files.pairs)
    run_files = scoring.files(files.runs)
    base = circularity.base or circ.best_run(read_scores(files.scores), circularity.measures[0])
    if base not in run_files:
        raise InputError(
            f"no run {base!r} on dataset {circularity.dataset} (runs: {sorted(run_files)})",
            key="ranking.circularity.base",
        )
    top = circ.base_top(read_run(run_files[base], base), circularity.depth)
    known = read_labels(pool)
    have = known.merge(top, on=["qid", "docid"], how="inner")
    todo = circ.unlabelled_pairs(top, known, table)
    log.info(
        "%s at depth %d: %d pairs in its top, %d labelled in the pool, %d more with a known text to judge",
        base,
        circularity.depth,
        len(top),
        len(have),
        len(todo),
    )
    result = judge_table(todo, judge.resolved(persona_file), context) if len(todo) else known.iloc[0:0]
    out = pd.concat([have[known.columns], result], ignore_index=True)
    write_tsv(out, labels)
    return out


def circularity_figure_job(
    scores: str, built: str, circularity: str, outputs: Mapping[str, str], figure: CircularityFigure
) -> None:
    """Every system's score under the reference (x) against the judge (y) on one measure, the
    judge-built run and its base marked (``outputs``: png, pdf)."""
    from judgelab.studies.ranking import figures
    from judgelab.studies.ranking.tables import read_correlations, read_scores, system_means

    judge, reference, measure = figure.judge, figure.reference, figure.measure
    table = read_correlations(circularity)
    sel = table[(table["judge"] == judge) & (table["measure"] == measure)]
    if len(sel) != 1:
        raise InputError(f"{circularity} has {len(sel)} rows for {judge} on {measure}, not one")
    row = sel.iloc[0]
    new = read_scores(built)
    both = pd.concat([read_scores(scores), new[new["run"] == row["run"]]], ignore_index=True)
    systems = system_means(both, reference, judge, measure)
    figures.circularity_scatter(
        systems, reference, judge, row, (figure.dataset, measure), outputs["png"], outputs["pdf"]
    )


def leaderboard_job(correlations: Sequence[str], outputs: Mapping[str, str]) -> pd.DataFrame:
    """LLMJudge Table 3 over every dataset's correlations: ``outputs`` maps tsv, md, tex, html."""
    from judgelab.analysis import render
    from judgelab.studies.ranking.tables import (
        leaderboard,
        read_correlations,
        render_leaderboard,
    )

    frames = [read_correlations(p) for p in correlations]
    board = leaderboard(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame())
    render.write_table(board, lambda fmt: render_leaderboard(board, fmt), outputs)
    log.info("leaderboard: %d dataset x measure x judge rows", len(board))
    return board


def robustness_job(
    correlations: Sequence[str],
    outputs: Mapping[str, str],
    circularity: Sequence[str] = (),
    attacks: Sequence[str] = (),
) -> pd.DataFrame:
    """The robustness table per judge (:mod:`.robustness`) from every dataset's correlations, its
    circularity table and the perturbation study's attack tables: ``outputs`` maps tsv, md, html."""
    from pathlib import Path

    from judgelab.data.tables import write_tsv
    from judgelab.studies.ranking.robustness import render_robustness, robustness_table
    from judgelab.studies.ranking.tables import read_correlations

    def read(p):
        return pd.read_csv(p, sep="\t", dtype={"judge": str, "dataset": str, "attack": str, "run": str})

    frames = [read_correlations(p) for p in correlations]
    table = robustness_table(
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(),
        [read(p) for p in attacks],
        [read(p) for p in circularity],
    )
    write_tsv(table, outputs["tsv"])
    for fmt in ("md", "html"):
        Path(outputs[fmt]).write_text(render_robustness(table, fmt), encoding="utf-8")
    for r in table.itertuples(index=False):
        log.info(
            "%s %s %s: tau %s, attack inflation %s (%s), circularity rank gap %s",
            r.judge,
            r.dataset,
            r.measure,
            r.tau,
            r.attack_inflation,
            r.attack,
            r.circularity_rank_gap,
        )
    return table


def cost_figure_job(leaderboard: str, outputs: Mapping[str, str]) -> None:
    """Kendall's tau against dollars per 1,000 judgments, one point per judge x template x persona
    (:func:`judgelab.studies.ranking.figures.cost_scatter`; ``outputs``: png, pdf)."""
    from judgelab.studies.ranking import figures

    board = pd.read_csv(leaderboard, sep="\t", dtype={"judge": str, "dataset": str, "measure": str})
    board["judge_template"] = board["judge_template"].fillna("")
    figures.cost_scatter(board, outputs["png"], outputs["pdf"])
    log.info("cost figure: %d judge rows", len(board))


def calibration_job(
    pairs: Sequence[str],
    labels: Sequence[str],
    cells: Sequence[Mapping[str, str]],
    settings: CalibrationSettings,
    outputs: Mapping[str, str],
) -> pd.DataFrame:
    """Calibration of every dataset x judge's pool labels (``cells``: dataset, judge, template,
    persona, in the order of ``labels``; ``pairs``: the dataset tables, the human grades), on the
    labelled pairs with a human grade: the label-token distribution as P(relevant) (p2 + p3)
    against the human binary relevance, with the expected grade's MAE
    (:mod:`judgelab.analysis.calibration`; an imported judge has no distribution: all its pairs
    missing). ``outputs``: calibration, reliability, png and pdf."""
    from judgelab.analysis.calibration import write_calibration
    from judgelab.data.labels import GRADE_LABELS

    if len(labels) != len(cells):
        raise ValueError("one label table per calibration cell expected")
    grades = pd.concat([read_dataset(p) for p in pairs], ignore_index=True)[
        ["dataset", "qid", "docid", "grade"]
    ]
    dist = [f"p{g}" for g in GRADE_LABELS]

    def judges():
        for cell, path in zip(cells, labels):
            judged = read_labels(path)
            judged = judged.assign(**{c: pd.NA for c in dist if c not in judged})
            on = grades[grades["dataset"] == cell["dataset"]].drop(columns="dataset")
            table = on.merge(
                judged[["qid", "docid", "label", *dist]],
                on=["qid", "docid"],
                how="inner",
                validate="one_to_one",
            )
            yield dict(cell), table, GRADE_LABELS, None

    return write_calibration(
        judges(), settings.bins, outputs, ["dataset"], "judge", "Ranking pool labels - reliability"
    )


def figures_job(scores: str, correlations: str, outputs: Mapping[str, str], figure: Figure) -> None:
    """The score scatter and the rank-rank plot of one dataset x judge x measure (``figure``: the
    judge against its reference on the measure): ``outputs`` maps scores_png, scores_pdf,
    ranks_png, ranks_pdf."""
    from judgelab.studies.ranking import figures
    from judgelab.studies.ranking.tables import read_correlations, read_scores, system_means

    judge, reference, measure = figure.judge, figure.reference, figure.measure
    corr = read_correlations(correlations)
    sel = corr[(corr["judge"] == judge) & (corr["reference"] == reference) & (corr["measure"] == measure)]
    if len(sel) != 1:
        raise InputError(
            f"{correlations} has {len(sel)} rows for {judge} vs {reference} on {measure}, not one"
        )
    row = sel.iloc[0]
    systems = system_means(read_scores(scores), reference, judge, measure)
    title = (figure.dataset, measure)
    figures.score_scatter(systems, reference, judge, row, title, outputs["scores_png"], outputs["scores_pdf"])
    figures.rank_rank(systems, reference, judge, row, title, outputs["ranks_png"], outputs["ranks_pdf"])


def ppi_job(scores: Sequence[str], settings: PPISettings, outputs: Mapping[str, str]) -> pd.DataFrame:
    """Prediction-powered estimates (:mod:`judgelab.studies.ranking.ppi`) of every dataset x
    comparison x measure x n of ``settings`` from the datasets' scores tables (``scores``, in the
    order of ``ranking.runs``; each names its dataset by its folder): ``outputs`` tsv, md, html (the
    table) and png, pdf (the width-vs-n figure)."""
    from judgelab.analysis.render import html_table
    from judgelab.studies.ranking.ppi import ppi_figure, ppi_markdown, ppi_table
    from judgelab.studies.ranking.tables import read_scores

    tables = {Path(p).parent.name: read_scores(p) for p in scores}
    table = ppi_table(tables, settings)
    write_tsv(table, outputs["tsv"])
    md = ppi_markdown(table)
    Path(outputs["md"]).write_text(md, encoding="utf-8")
    Path(outputs["html"]).write_text(
        html_table(table, "Prediction-powered estimates: coverage, width and bias per method and n"),
        encoding="utf-8",
    )
    ppi_figure(table, outputs["png"], outputs["pdf"])
    return table


def ppi_estimate_job(
    files: DatasetFiles,
    annotated: Sequence[str],
    estimate: AnnotatedEstimate,
    outputs: Mapping[str, str],
    chosen: str | None = None,
) -> pd.DataFrame:
    """The systems' scores of one dataset estimated from the labels people collected
    (:mod:`judgelab.studies.ranking.annotated`): ``annotated``, the annotators' qrels files (merged:
    a pair's label is the first file's that labels it); ``chosen``, the chosen-pairs file of
    ``judgelab annotate choose`` (None: every topic labelled counts, taken as a uniform sample;
    topics chosen with unequal probabilities: the weighted estimate, :func:`~judgelab.studies.ranking.annotated.topic_sample`);
    ``files``: the dataset table, its runs (in ``estimate.run_names`` order) and its scores table
    (the judges' per-topic values). Every run is scored under the annotated labels on the annotated
    topics; per judge x measure x run the judge-only score, the prediction-powered estimate and the
    human-only one with their 1 - alpha intervals. ``outputs``: tsv, md."""
    from judgelab.annotate.labels import annotator_name, read_annotated, read_chosen
    from judgelab.studies.ranking import annotated as est
    from judgelab.studies.ranking.scores import score_runs
    from judgelab.studies.ranking.tables import read_scores, topic_table

    dataset = estimate.dataset
    table = read_dataset(files.pairs)
    topics = [str(t) for t in table["qid"].unique()]
    labels = read_annotated(annotated, key=f"ranking.annotated.{dataset}.qrels")
    chosen_table = read_chosen(chosen) if chosen else None
    used = est.annotated_topics(labels, topics, dataset, chosen_table)
    sample = est.topic_sample(chosen_table, used, dataset)
    qrels = labels[labels["qid"].isin(used)][["qid", "docid", "relevance"]]
    # the annotated topics' lines only (the scoring job read and checked every line)
    runs = {name: read_run(f, name, topics=set(used)) for name, f in estimate.files(files.runs).items()}
    scored = score_runs(runs, qrels, estimate.measures, key="ranking.measures")
    scores = read_scores(files.scores)
    names = [annotator_name(p) for p in annotated]
    rows: list[dict[str, Any]] = []
    for judge in estimate.judges:
        for measure in estimate.measures:
            judged = topic_table(scores, judge, measure)
            est.check_same_runs(runs, judged, judge)
            judged = judged[list(runs)]
            human = est.human_matrix(scored, measure, used, list(runs))
            new = est.estimate_rows(dataset, judge, measure, human, judged, estimate.alpha, names, sample)
            log.info(
                "%s / %s / %s: %d of %d topics annotated; mean PPI width %.4f, human-only %.4f",
                dataset,
                judge,
                measure,
                new[0]["n_annotated"],
                new[0]["n_topics"],
                float(np.mean([r["ppi_high"] - r["ppi_low"] for r in new])),
                float(np.mean([r["human_high"] - r["human_low"] for r in new])),
            )
            rows += new
    result = pd.DataFrame(rows, columns=est.ESTIMATE_COLUMNS)
    write_tsv(result, outputs["tsv"])
    Path(outputs["md"]).write_text(est.estimate_markdown(result), encoding="utf-8")
    log.info(
        "%s: %d labels of %s (%d pairs on the %d topics used: %s); estimator %s, strategy %s",
        dataset,
        len(labels),
        ", ".join(names),
        len(qrels),
        len(used),
        " ".join(used),
        sample.estimator,
        sample.strategy,
    )
    if sample.inclusion is not None:
        log.info(
            "%s: inclusion probabilities of the topics used (topic_inclusion x %d finished / %d chosen): %s",
            dataset,
            len(used),
            len(set(chosen_table["qid"])) if chosen_table is not None else 0,
            " ".join(f"{t}={p:.4g}" for t, p in sample.inclusion.items()),
        )
    return result
