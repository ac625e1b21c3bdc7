"""Prompt sensitivity jobs: one function per workflow job; its inputs, its outputs and one settings
value per concern in, files out (the scripts under ``workflow/scripts/sensitivity/`` run them with
:func:`judgelab.project.runner.run`)."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgelab.analysis.render import write_table
from judgelab.analysis.scores import prepared_runs
from judgelab.data.readers import read_run
from judgelab.data.sources import download_or_copy
from judgelab.data.tables import read_dataset, read_tsv, write_tsv
from judgelab.llm.judge import Judge
from judgelab.llm.judging import check_coverage, judge_table
from judgelab.llm.session import JobContext
from judgelab.params import Files
from judgelab.studies.sensitivity import pairwise
from judgelab.studies.sensitivity.figures import distribution_figure
from judgelab.studies.sensitivity.published import (
    Pointwise,
    human_grades,
    read_pairs,
    read_pairwise,
    read_pointwise,
    read_prompts,
)
from judgelab.studies.sensitivity.rankings import committees, ranking_rows, ranking_spread
from judgelab.studies.sensitivity.science import (
    AGREEMENT_COLUMNS,
    COUNT_COLUMNS,
    groups,
    live_read,
    pairwise_row,
    pointwise_row,
    spread,
)
from judgelab.studies.sensitivity.settings import Bootstrap, Downloads, PairSampling, Rankings, Selection
from judgelab.studies.sensitivity.tables import renderer

log = logging.getLogger("judgelab")


def download_job(downloads: Downloads, published: Sequence[str], mirror: str | None = None) -> None:
    """Each published file to its place in ``published`` (same order), from its URL or, with a
    ``mirror`` (``sensitivity.published.mirror``: a folder holding the repository's files at their
    paths), from the copy there; its size and SHA-256 checked either way
    (:func:`judgelab.data.sources.download`: nothing is left under a name whose check failed)."""
    for (file, size, sha256, url), dest in zip(downloads.files, published, strict=True):
        download_or_copy(
            url,
            dest,
            size=size,
            sha256=sha256,
            copy=Path(mirror) / file if mirror else None,
            key="sensitivity.published.mirror",
            what="the published file",
        )
    log.info("%d files %s", len(downloads.files), f"copied from {mirror}" if mirror else "downloaded")


def judge_job(pairs: str, judgments: str, judge: Judge, context: JobContext) -> pd.DataFrame:
    """Every pair of the dataset judged by ``judge`` (one prompt's template of one type, no
    persona) through the backend and the request cache; the job stops when too few answers parse
    (the judge's coverage floor)."""
    result = judge_table(read_dataset(pairs), judge, context)
    write_tsv(result, judgments)
    return result


def pairs_job(pairs: str, compared: str, sampling: PairSampling, listed: Sequence[str] = ()) -> pd.DataFrame:
    """The pairs the live judges compare on a dataset (``pairs``, its table): those of the
    authors' pair list where the rule names one (``listed``), else formed from the grade groups
    (``sampling``: at most ``per_query`` per query, seeded); written to ``compared``."""
    table = read_dataset(pairs)
    if listed:
        result = pairwise.listed_pairs(listed[0], table)
        how = f"from {listed[0]}"
    else:
        result = pairwise.formed_pairs(table, sampling.per_query, sampling.seed)
        how = f"formed from the grades (at most {sampling.per_query} per query, seed {sampling.seed})"
    write_tsv(result, compared)
    log.info("%d pairs of %d queries %s", len(result), result["qid"].nunique(), how)
    return result


def pairwise_judge_job(
    pairs: str, compared: str, judgments: str, judge: Judge, context: JobContext
) -> pd.DataFrame:
    """Every pair of ``compared`` asked in both orders with ``judge`` (one prompt's pairwise
    template, its system text as the system message) through the backend and the request cache;
    the job stops when too few answers are read (the judge's coverage floor, over the judgments
    of a pair in one order)."""
    table = read_dataset(pairs)
    with judge.session(context) as client:
        result = pairwise.run_pairwise(
            table, pairwise.read_pairs_table(compared), judge, client, desc=context.desc
        )
    check_coverage(result, judge, context.desc)
    write_tsv(result, judgments)
    return result


@dataclass(frozen=True)
class Inputs(Files):
    """The agreement job's inputs (in the order of
    :class:`~judgelab.studies.sensitivity.settings.Selection`): the published judgment files, the
    pair lists, ``prompts.json`` (a list of one; none without a published file), the dataset tables
    and the live judges' tables."""

    judgments: Sequence[str] = ()
    prompts: Sequence[str] = ()
    pairs: Sequence[str] = ()
    tables: Sequence[str] = ()
    live: Sequence[str] = ()


def agreement_rows(inputs: Inputs, selection: Selection) -> pd.DataFrame:
    """One row per published judgment file and per live judge x prompt x type x dataset
    (:data:`~judgelab.studies.sensitivity.science.AGREEMENT_COLUMNS`).

    A published binary or graded row's coverage is over the pairs its judge was given with the
    human- and LLM-written prompts of the same type and dataset (the union of their files' pairs).
    UMBRELA's prompt is compared on those pairs only, where there are any: GPT-4o's UMBRELA file
    labels every DL21 pair, its other prompts a sample of them. A live row's coverage is its
    parsed answers over the dataset's pairs; a live pairwise row's its pairs with both orders
    read over the pairs compared, its shares over those (and the ties by position)."""
    tables = {d: human_grades(read_dataset(p)) for d, p in zip(selection.tables, inputs.tables, strict=True)}
    out = published_rows(inputs, selection, {p: tables[d] for p, d in selection.published if d in tables})
    group = dict(selection.groups)
    for (dataset, model, prompt, kind), path in zip(selection.live, inputs.live, strict=True):
        if kind == "pairwise":
            both = pairwise.read_judged(path)
            row = pairwise.pairwise_row(both, len(both.drop_duplicates(["qid", "hi_docid", "lo_docid"])))
            if row["dropped"]:
                log.info(
                    "%s: %d of %d pairs with an order that did not parse", path, row["dropped"], row["lines"]
                )
        else:
            judged = read_tsv(path, {"qid": str, "docid": str, "label": "Int64"})
            read = live_read(judged, tables[dataset])
            if read.dropped:
                log.info("%s: %d of %d answers did not parse", path, read.dropped, read.lines)
            row = pointwise_row(kind, read, len(read.pairs))
        out.append(
            {
                "source": "live",
                "model": model,
                "type": kind,
                "dataset": dataset,
                "prompt": prompt,
                "group": group[prompt],
                **row,
            }
        )
    df = pd.DataFrame(out, columns=AGREEMENT_COLUMNS)
    for c in COUNT_COLUMNS:
        df[c] = df[c].astype("Int64")
    return df


def published_rows(
    inputs: Inputs, selection: Selection, grades: Mapping[str, Mapping[tuple[str, str], int]]
) -> list[dict]:
    """The rows of the published judgment files (see :func:`agreement_rows`); ``grades``: the human
    grades by published dataset."""
    if not selection.judgments:
        return []
    if len(inputs.prompts) != 1:
        raise ValueError(f"published judgment files need prompts.json once, not {list(inputs.prompts)}")
    group = read_prompts(inputs.prompts[0])
    pairs = {d: read_pairs(p) for d, p in zip(selection.pairs, inputs.pairs, strict=True)}
    rows: dict[int, dict] = {}
    for i, ((_, kind, dataset, _), path) in enumerate(
        zip(selection.judgments, inputs.judgments, strict=True)
    ):
        if kind == "pairwise":
            rows[i] = pairwise_row(read_pairwise(path, pairs[dataset]), len(pairs[dataset]))
    for i, (r, judged) in pointwise_reads(selection.judgments, inputs.judgments, grades, group).items():
        rows[i] = pointwise_row(selection.judgments[i][1], r, judged)
    return [
        {
            "source": "published",
            "model": m,
            "type": k,
            "dataset": d,
            "prompt": p,
            "group": group.get(p, "unknown"),
            **rows[i],
        }
        for i, (m, k, d, p) in enumerate(selection.judgments)
    ]


def pointwise_reads(
    judgments: Sequence[tuple[str, str, str, str]],
    paths: Sequence[str],
    grades: Mapping[str, Mapping[tuple[str, str], int]],
    group: Mapping[str, str],
) -> dict[int, tuple[Pointwise, int]]:
    """Each published binary or graded file read (by its index in ``judgments``: (model, type,
    published dataset, prompt) per file of ``paths``), with the number of pairs its judge was given
    (see :func:`agreement_rows`); UMBRELA's file restricted to those pairs where there are any.
    ``grades``: the human grades by published dataset; ``group``: each prompt's author group."""
    read: dict[int, Pointwise] = {}
    given: dict[tuple[str, str, str], set] = defaultdict(set)
    for i, ((model, kind, dataset, prompt), path) in enumerate(zip(judgments, paths, strict=True)):
        if kind == "pairwise":
            continue
        read[i] = read_pointwise(path, kind, grades[dataset])
        if group.get(prompt) != "umbrela":
            given[(model, kind, dataset)] |= read[i].pairs
        if read[i].dropped or read[i].repeats:
            log.info(
                "%s: %d labels out of the %s scale dropped, %d repeated lines",
                path,
                read[i].dropped,
                kind,
                read[i].repeats,
            )
    out = {}
    for i, r in read.items():
        model, kind, dataset, prompt = judgments[i]
        judged = given.get((model, kind, dataset)) or r.pairs
        if group.get(prompt) == "umbrela" and judged is not r.pairs:
            r = r.on(judged)
        out[i] = (r, len(judged))
    return out


def agreement_job(inputs: Inputs, selection: Selection, outputs: Mapping[str, str]) -> pd.DataFrame:
    """The agreement of every published file with the human labels, as one table (tsv, md, tex,
    html)."""
    df = agreement_rows(inputs, selection)
    write_table(
        df, renderer(df, "Prompt sensitivity: each published judgment file against the human labels"), outputs
    )
    log.info("%d files; %d labels dropped out of scale", len(df), int(df["dropped"].fillna(0).sum()))
    return df


def tables_job(agreement: str, bootstrap: Bootstrap, outputs: Mapping[str, str]) -> None:
    """Per judge x type x dataset, the spread over prompts and human- against LLM-written prompts
    (each as tsv, md, tex, html), and the figure of each judge's agreement over prompts."""
    df = read_tsv(
        agreement, {"source": str, "prompt": str, "model": str, "type": str, "dataset": str, "group": str}
    )
    s = spread(df)
    write_table(s, renderer(s, "Prompt sensitivity: the spread over prompts"), _four(outputs, "spread"))
    g = groups(df, bootstrap.resamples, bootstrap.seed, bootstrap.level)
    write_table(
        g, renderer(g, "Prompt sensitivity: human- against LLM-written prompts"), _four(outputs, "groups")
    )
    distribution_figure(df, outputs["figure_png"], outputs["figure_pdf"])
    log.info("%d judge x type x dataset cells", len(s))


def _four(outputs: Mapping[str, str], name: str) -> dict[str, str]:
    return {ext: outputs[f"{name}_{ext}"] for ext in ("tsv", "md", "tex", "html")}


@dataclass(frozen=True)
class RankingInputs(Files):
    """The rankings job's inputs (in the order of
    :class:`~judgelab.studies.sensitivity.settings.Rankings`): the published binary and graded
    files, ``prompts.json`` (a list of one; none without a published file), the dataset tables, the
    live judges' tables and the run files."""

    judgments: Sequence[str] = ()
    prompts: Sequence[str] = ()
    tables: Sequence[str] = ()
    live: Sequence[str] = ()
    runs: Sequence[str] = ()


def ranking_cells(inputs: RankingInputs, rankings: Rankings) -> tuple[dict, dict]:
    """The labels (qid, docid, grade, label) of every published file and live table of a dataset
    with runs, by cell (source, model, type, dataset, prompt, group), read as the agreement table
    reads them (UMBRELA's published file on the pairs the judge's other prompts were given), and
    the human grades of each dataset."""
    tables = {d: read_dataset(p) for d, p in zip(rankings.tables, inputs.tables, strict=True)}
    grades = {d: human_grades(t) for d, t in tables.items()}
    cells: dict = {}
    if rankings.judgments:
        group = read_prompts(inputs.prompts[0])
        by_published = {p: grades[d] for p, d in rankings.published if d in grades}
        dataset_of = dict(rankings.published)
        for i, (r, _) in pointwise_reads(rankings.judgments, inputs.judgments, by_published, group).items():
            model, kind, published, prompt = rankings.judgments[i]
            cell = ("published", model, kind, dataset_of[published], prompt, group.get(prompt, "unknown"))
            cells[cell] = r.labels
    live_group = dict(rankings.groups)
    for (dataset, model, prompt, kind), path in zip(rankings.live, inputs.live, strict=True):
        judged = read_tsv(path, {"qid": str, "docid": str, "label": "Int64"})
        cells[("live", model, kind, dataset, prompt, live_group[prompt])] = live_read(
            judged, grades[dataset]
        ).labels
    return cells, grades


def rankings_job(inputs: RankingInputs, rankings: Rankings, outputs: Mapping[str, str]) -> pd.DataFrame:
    """Each prompt's labels (and each committee over prompts) as qrels for the dataset's runs: tau
    of the systems' order against the human order on the same pairs and on the full qrels, per
    measure (``rankings.*``), and its range over prompts per judge (``rankings_spread.*``), each as
    tsv, md, tex, html."""
    cells, grades = ranking_cells(inputs, rankings)
    cells.update(committees(cells, grades))
    files: dict[str, dict[str, str]] = defaultdict(dict)
    for (dataset, name), path in zip(rankings.runs, inputs.runs, strict=True):
        files[dataset][name] = path
    runs = {d: prepared_runs({n: read_run(p, n) for n, p in named.items()}) for d, named in files.items()}
    full = {
        d: pd.DataFrame({"qid": [q for q, _ in g], "docid": [x for _, x in g], "grade": list(g.values())})
        for d, g in grades.items()
    }
    rows = ranking_rows({c: v for c, v in cells.items() if c[3] in runs}, full, runs, rankings.measures)
    write_table(
        rows, renderer(rows, "Prompt sensitivity: each prompt's labels as qrels"), _four(outputs, "rankings")
    )
    s = ranking_spread(rows)
    write_table(s, renderer(s, "Prompt sensitivity: tau over prompts"), _four(outputs, "rankings_spread"))
    log.info(
        "%d label sets x %d measures; %d runs",
        len(rows) // max(len(rankings.measures), 1),
        len(rankings.measures),
        len(rankings.runs),
    )
    return rows
