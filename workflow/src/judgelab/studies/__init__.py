"""Studies: one package each, ``judgelab.studies.<study>``, holding everything of the study.

* ``plan.py``: the study's :class:`~judgelab.project.plan.StudyPlan` - how its config section resolves (datasets,
  judges, prompts), its checks, its result paths, its LLM jobs and its targets - so the rules,
  ``judgelab estimate`` and the jobs take the same answers from :class:`judgelab.wiring.facade.Project`;
* ``jobs.py``: one function per workflow job (the ``workflow/scripts/`` adapters call them);
* the science, one module per stage with a name that says what it holds, and ``figures.py``.

A study imports the shared core (:mod:`judgelab.cache`, :mod:`judgelab.data`, :mod:`judgelab.llm`,
:mod:`judgelab.analysis`) and the project base (:mod:`judgelab.project`); neither imports a study,
and no study imports another study's modules (what two share lives in the core). Only the
wiring (:mod:`judgelab.wiring`, :mod:`judgelab.cli`) names the studies.
"""

from __future__ import annotations

#: Studies in the order `all` runs them. Each has a config section with an `enabled` switch, a
#: ``Plan`` in ``judgelab.studies.<study>.plan`` (its paths, jobs, targets), rules in
#: ``workflow/rules/<study>/``, jobs in ``judgelab.studies.<study>.jobs``, prompts under
#: ``resources/prompts/<study>/`` and a target of its name.
STUDIES = ("peras", "overrating", "perturbations", "simulation", "ranking", "sensitivity")
