"""System-ranking agreement: does a judge rank retrieval systems as the human assessors do?

Config section ``ranking``; target ``ranking``; rules ``workflow/rules/ranking/ranking.smk`` and
``workflow/rules/ranking/``; jobs :mod:`judgelab.studies.ranking.jobs`; report captions
``workflow/report/ranking/``. No prompt of its own: a live judge uses a PERAS template and
persona (``ranking.template``, ``ranking.persona``), so its requests are PERAS's for the same pair.

Per dataset (the keys of ``ranking.runs``):

* the runs: made by the workflow (``source: systems``, one job per system), downloaded (one job
  per run) or the user's files (no job);
* per live judge, one job labelling the pool (every run's top ``pool_depth`` over the dataset's
  topics) where the passage text is known; per imported judge, one job reading its qrels file;
* one scoring job per dataset, every run under every qrels of the dataset (``human``, each
  judge, and ``human+<judge>`` with ``unjudged: fill``), writing scores.tsv; each run's scores
  under each qrels are kept by content digest (:mod:`judgelab.studies.ranking.scorecache`), so a
  new run is the only one scored under the human qrels and an imported judge's (which do not
  depend on the runs), and a new judge's qrels scores every run under it alone (a live judge's
  labels cover the pool of all runs, so with a live judge a new run changes them and every run is
  scored again under them: the new pool pairs are new calls, the others cache hits);
* one job for the dataset's correlations.tsv (with the label agreement) and pool.tsv;
* with ``ranking.circularity.enabled``, one job building every judge's run (the base run's top
  ``depth`` re-ordered by the judge's labels: :mod:`judgelab.studies.ranking.circularity`) and
  ranking it among the dataset's runs in circularity.tsv, one figure job per judge x measure (with
  the default depth, ``pool_depth``, the labels are the pool's: no request beyond the pool's, so
  the estimate counts none);
  one figure job per judge x measure; one leaderboard over every dataset.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from judgelab.data.readers import read_run
from judgelab.data.sources import JUDGED_QUERIES
from judgelab.llm.backends.base import Request
from judgelab.llm.judging import judgment_requests
from judgelab.project.plan import LLMJob
from judgelab.studies.ranking import checks
from judgelab.studies.ranking.paths import PATHS, Targets


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


class Plan(Targets):
    """The ranking study's plan: the section's values (:class:`~.section.Section`), its runs
    (:class:`~.runfiles.RunFiles`), its judges and qrels (:class:`~.judges.Judges`), its jobs'
    inputs and params (:class:`~.inputs.Inputs`), its paths and targets (:class:`~.paths.Targets`)."""

    paths = PATHS

    def __init__(self, project) -> None:
        super().__init__(project)
        self._estimates: dict = {}

    def models(self) -> list[str]:
        return list(self.judges) if self.datasets else []

    def check(self) -> None:
        """The base's checks, then the section's (:mod:`.checks`)."""
        super().check()
        checks.check(self)

    def llm_jobs(self) -> list[LLMJob]:
        jobs = [
            LLMJob("ranking_judge", m, (("dataset", d), ("model", m)), self.name)
            for d in self.datasets
            for m in self.judges
        ]
        jobs += [
            LLMJob("ranking_persona_judge", m, (("dataset", d), ("model", m), ("persona", p)), self.name)
            for d in self.datasets
            for _, m, p in self.persona_members(d)
        ]
        return jobs + [
            LLMJob("ranking_circularity_judge", m, (("dataset", d), ("model", m)), self.name)
            for d in self.datasets
            for m in self.circularity_labelled
        ]

    # -- the estimate -------------------------------------------------------------------------

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """The judge job's requests: one per pool pair whose passage text is known, built by
        :func:`judgelab.llm.judging.judgment_requests` as the job builds them (so a pair PERAS asked
        is found in the cache). The pool is exact when the dataset table and every run are at
        hand (systems are ranked in memory); before the runs are downloaded, or before a public
        dataset is, at most ``pool_depth`` x runs pairs per topic stand in (an upper bound,
        never looked up)."""
        d = job.wc["dataset"]
        if job.rule == "ranking_circularity_judge":
            pairs, exact = self._estimate_circularity(ctx, d)
            stage = "circularity"
        else:
            pairs, exact = self._estimate_pool(ctx, d)
            stage = "ranking_judge"
        persona = job.wc.get("persona") or self.persona
        judge = self.judge(job.model, persona).but(persona=ctx.persona_text(persona))
        reqs = judgment_requests(pairs, judge)
        for req in reqs:
            cached = exact and job.model in ctx.backends and ctx.cached(job.model, req) is not None
            yield stage, req, cached

    def _estimate_circularity(self, ctx, dataset: str) -> tuple[pd.DataFrame, bool]:
        """The circularity labelling job's pairs (depth past the pool): the base run's top
        ``depth`` pairs with a known text that are not in the pool - exact when the pool is (the
        base run chosen as the job chooses it: the named run, or the best under the human qrels
        on the first measure, scored here with ir-measures); else at most ``depth - pool_depth``
        per topic (an upper bound)."""
        from judgelab.studies.ranking.circularity import base_top, best_run, unlabelled_pairs
        from judgelab.studies.ranking.pool import human_qrels
        from judgelab.studies.ranking.scores import score_runs

        pool_pairs, exact, runs = self._pool_estimate(ctx, dataset)
        src = ctx.pairs(dataset)
        if exact and runs is not None:
            base = self.circularity_base(dataset)
            if not base:
                scores = score_runs(runs, human_qrels(src.pairs), [self.measures[0]])
                base = best_run(scores.assign(qrels="human"), self.measures[0])
            todo = unlabelled_pairs(base_top(runs[base], self.circularity_depth), pool_pairs, src.pairs)
            ctx.notes.append(
                f"ranking {dataset}: the circularity base {base}'s top {self.circularity_depth}: "
                f"{len(todo):,} pairs with a known text below the pool (the live judges' extra requests)"
            )
            return todo, True
        n_topics = _n_topics(src, dataset)
        n = n_topics * (self.circularity_depth - self.pool_depth)
        stand_in = _stand_in(src, dataset, n)
        return stand_in, False

    def _estimate_pool(self, ctx, dataset: str) -> tuple[pd.DataFrame, bool]:
        pairs, exact, _ = self._pool_estimate(ctx, dataset)
        return pairs, exact

    def _pool_estimate(self, ctx, dataset: str) -> tuple[pd.DataFrame, bool, dict | None]:
        """The pool's judge pairs, whether they are exact, and the runs they came from (None
        when a stand-in counts them), built once per estimate."""
        key = (id(ctx), dataset)
        if key not in self._estimates:
            self._estimates[key] = self._build_pool(ctx, dataset)
        return self._estimates[key]

    def _build_pool(self, ctx, dataset: str) -> tuple[pd.DataFrame, bool, dict | None]:
        from judgelab.studies.ranking.pool import judge_pairs, pool_table
        from judgelab.studies.ranking.systems import rank

        src = ctx.pairs(dataset)
        runs = None
        n_runs = len(self.run_names(dataset)) if self.source(dataset) != "files" else None
        if src.exact:
            if self.source(dataset) == "systems":
                cand, depth = self.section["candidates"], int(self.section["depth"])
                runs = {n: rank(src.pairs, s, candidates=cand, depth=depth) for n, s in self.systems.items()}
            else:
                files = (
                    self.run_files(dataset, ctx.directory)
                    if self.source(dataset) == "files"
                    else {n: str(Path(ctx.directory) / f) for n, f in self.run_files(dataset).items()}
                )
                n_runs = len(files)
                if all(Path(f).is_file() for f in files.values()):
                    runs = {n: read_run(f, n) for n, f in files.items()}
        if runs is not None:
            pool_ = pool_table(runs, src.pairs, self.pool_depth)
            pairs = judge_pairs(pool_, dataset)
            ctx.notes.append(
                f"ranking {dataset}: pool of {len(runs)} runs at depth {self.pool_depth}: {len(pool_):,} "
                f"pairs, {len(pairs):,} with a known passage text (the judge's requests)"
            )
            return pairs, True, runs
        if n_runs is None:  # run files of a dataset that is not downloaded yet
            n_runs = len(self.run_files(dataset, ctx.directory))
        n_topics = _n_topics(src, dataset)
        per_topic = self.pool_depth * n_runs
        if src.exact:
            per_topic = min(per_topic, src.pairs["docid"].nunique())
        n = n_topics * per_topic
        stand_in = _stand_in(src, dataset, n)
        why = "the runs are not downloaded yet" if src.exact else "the dataset is not downloaded yet"
        ctx.notes.append(
            f"ranking {dataset}: {why}: at most {self.pool_depth} x {n_runs} runs = {per_topic:,} pool pairs per "
            f"topic x {n_topics} topics = {n:,} requests counted (an upper bound; `snakemake ranking_runs` "
            "fetches the runs and the dataset, after which the pool is counted exactly)"
        )
        return stand_in, False, None
