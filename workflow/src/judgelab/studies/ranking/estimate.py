"""The ranking study's requests for ``judgelab estimate``: the live judges' pool labelling (and
persona labelling) jobs, their repeats (``peras.repeats`` k: the pool k - 1 more times, judges
that parse) and the circularity labelling jobs, built with the jobs' own builder
(:func:`judgelab.llm.judging.judgment_requests`) from the pool the jobs would label - exact when
the dataset table and every run are at hand (systems ranked in memory), else an upper bound of
stand-in pairs, never looked up in the cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from judgelab.data.readers import read_run
from judgelab.data.sources import JUDGED_QUERIES
from judgelab.llm.backends.base import Request
from judgelab.llm.judging import judgment_requests
from judgelab.studies.ranking.inputs import Inputs


def _n_topics(src, dataset: str) -> int:
    """The topics an estimate counts: the dataset table's, or before a download its judged
    queries (:data:`~judgelab.data.sources.JUDGED_QUERIES`)."""
    return (
        src.pairs["qid"].nunique() if src.exact else JUDGED_QUERIES.get(dataset, src.pairs["qid"].nunique())
    )


def _stand_in(src, dataset: str, n: int) -> pd.DataFrame:
    """``n`` stand-in pairs of the dataset's first query and passage (an upper bound's requests,
    never looked up in the cache)."""
    first = src.pairs.iloc[0]
    return pd.DataFrame(
        {
            "dataset": dataset,
            "qid": "q",
            "query": [first["query"]] * n,
            "docid": "d",
            "passage": first["passage"],
        }
    )


def requests(plan: Inputs, job, ctx, pools: dict) -> Iterator[tuple[str, Request, bool]]:
    """The judge job's requests: one per pool pair whose passage text is known, built by
    :func:`judgelab.llm.judging.judgment_requests` as the job builds them (so a pair PERAS asked
    is found in the cache). The pool is exact when the dataset table and every run are at
    hand (systems are ranked in memory); before the runs are downloaded, or before a public
    dataset is, at most ``pool_depth`` x runs pairs per topic stand in (an upper bound,
    never looked up)."""
    d = job.wc["dataset"]
    if job.rule == "ranking_repeats":  # samples 1..k-1 of the pool (sample 0 is the judge job's)
        pairs, exact, _ = _pool(plan, ctx, d, pools)
        judge = plan.judge(job.model).but(persona=ctx.persona_text(plan.persona))
        for sample in range(1, plan.repeats):
            for req in judgment_requests(pairs, judge, sample):
                yield (
                    job.rule,
                    req,
                    exact and job.model in ctx.backends and ctx.cached(job.model, req) is not None,
                )
        return
    if job.rule == "ranking_circularity_judge":
        pairs, exact = _circularity_pairs(plan, ctx, d, pools)
        stage = "circularity"
    else:
        pairs, exact, _ = _pool(plan, ctx, d, pools)
        stage = "ranking_judge"
    persona = job.wc.get("persona") or plan.persona
    judge = plan.judge(job.model, persona).but(persona=ctx.persona_text(persona))
    reqs = judgment_requests(pairs, judge)
    for req in reqs:
        cached = exact and job.model in ctx.backends and ctx.cached(job.model, req) is not None
        yield stage, req, cached


def _circularity_pairs(plan: Inputs, ctx, dataset: str, pools: dict) -> tuple[pd.DataFrame, bool]:
    """The circularity labelling job's pairs (depth past the pool): the base run's top
    ``depth`` pairs with a known text that are not in the pool - exact when the pool is (the
    base run chosen as the job chooses it: the named run, or the best under the human qrels
    on the first measure, scored here with ir-measures); else at most ``depth - pool_depth``
    per topic (an upper bound)."""
    from judgelab.studies.ranking.circularity import base_top, best_run, unlabelled_pairs
    from judgelab.studies.ranking.pool import human_qrels
    from judgelab.studies.ranking.scores import score_runs

    pool_pairs, exact, runs = _pool(plan, ctx, dataset, pools)
    src = ctx.pairs(dataset)
    if exact and runs is not None:
        base = plan.circularity_base(dataset)
        if not base:
            scores = score_runs(runs, human_qrels(src.pairs), [plan.measures[0]])
            base = best_run(scores.assign(qrels="human"), plan.measures[0])
        todo = unlabelled_pairs(base_top(runs[base], plan.circularity_depth), pool_pairs, src.pairs)
        ctx.notes.append(
            f"ranking {dataset}: the circularity base {base}'s top {plan.circularity_depth}: "
            f"{len(todo):,} pairs with a known text below the pool (the live judges' extra requests)"
        )
        return todo, True
    n_topics = _n_topics(src, dataset)
    n = n_topics * (plan.circularity_depth - plan.pool_depth)
    stand_in = _stand_in(src, dataset, n)
    return stand_in, False


def _pool(plan: Inputs, ctx, dataset: str, pools: dict) -> tuple[pd.DataFrame, bool, dict | None]:
    """The pool's judge pairs, whether they are exact, and the runs they came from (None
    when a stand-in counts them), built once per estimate (kept in ``pools``)."""
    key = (id(ctx), dataset)
    if key not in pools:
        pools[key] = _build_pool(plan, ctx, dataset)
    return pools[key]


def _build_pool(plan: Inputs, ctx, dataset: str) -> tuple[pd.DataFrame, bool, dict | None]:
    from judgelab.studies.ranking.pool import judge_pairs, pool_table
    from judgelab.studies.ranking.systems import rank

    src = ctx.pairs(dataset)
    runs = None
    n_runs = len(plan.run_names(dataset)) if plan.source(dataset) != "files" else None
    if src.exact:
        if plan.source(dataset) == "systems":
            cand, depth = plan.section["candidates"], int(plan.section["depth"])
            runs = {n: rank(src.pairs, s, candidates=cand, depth=depth) for n, s in plan.systems.items()}
        else:
            files = (
                plan.run_files(dataset, ctx.directory)
                if plan.source(dataset) == "files"
                else {n: str(Path(ctx.directory) / f) for n, f in plan.run_files(dataset).items()}
            )
            n_runs = len(files)
            if all(Path(f).is_file() for f in files.values()):
                runs = {n: read_run(f, n) for n, f in files.items()}
    if runs is not None:
        pool_ = pool_table(runs, src.pairs, plan.pool_depth)
        pairs = judge_pairs(pool_, dataset)
        ctx.notes.append(
            f"ranking {dataset}: pool of {len(runs)} runs at depth {plan.pool_depth}: {len(pool_):,} "
            f"pairs, {len(pairs):,} with a known passage text (the judge's requests)"
        )
        return pairs, True, runs
    if n_runs is None:  # run files of a dataset that is not downloaded yet
        n_runs = len(plan.run_files(dataset, ctx.directory))
    n_topics = _n_topics(src, dataset)
    per_topic = plan.pool_depth * n_runs
    if src.exact:
        per_topic = min(per_topic, src.pairs["docid"].nunique())
    n = n_topics * per_topic
    stand_in = _stand_in(src, dataset, n)
    why = "the runs are not downloaded yet" if src.exact else "the dataset is not downloaded yet"
    ctx.notes.append(
        f"ranking {dataset}: {why}: at most {plan.pool_depth} x {n_runs} runs = {per_topic:,} pool pairs per "
        f"topic x {n_topics} topics = {n:,} requests counted (an upper bound; `snakemake ranking_runs` "
        "fetches the runs and the dataset, after which the pool is counted exactly)"
    )
    return stand_in, False, None
