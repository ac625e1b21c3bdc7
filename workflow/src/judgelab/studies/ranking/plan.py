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

from judgelab.llm.backends.base import Request
from judgelab.project.plan import LLMJob
from judgelab.studies.ranking import checks, estimate
from judgelab.studies.ranking.paths import PATHS, Targets


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

    def text_datasets(self) -> list[str]:
        """The datasets whose pool a live judge labels (every one, with a live judge: the pool,
        persona committees' members and the circularity labels show the passage), and those
        whose runs the workflow's systems make (``source: systems`` ranks the table's passages);
        a dataset of imported judges and given or downloaded runs reads none."""
        if self.judges:
            return list(self.datasets)
        return self.datasets_of("systems")

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
        # a repeated judge that parses asks samples 1..k-1 of the pool; one read from the logits
        # draws them (no call)
        jobs += [
            LLMJob("ranking_repeats", m, (("dataset", d), ("model", m)), self.name)
            for d in self.datasets
            for m in self.repeated
            if self.answer(m) == "parse"
        ]
        return jobs + [
            LLMJob("ranking_circularity_judge", m, (("dataset", d), ("model", m)), self.name)
            for d in self.datasets
            for m in self.circularity_labelled
        ]

    # -- the estimate -------------------------------------------------------------------------

    def requests(self, job, ctx) -> Iterator[tuple[str, Request, bool]]:
        """For ``judgelab estimate``: the requests of one job (:mod:`.estimate`; the pool is built
        once per estimate)."""
        return estimate.requests(self, job, ctx, self._estimates)
