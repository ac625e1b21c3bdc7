"""judgelab: cached, reproducible LLM relevance-judge experiments.

Where things live (each package's ``__init__`` says more):

* :mod:`judgelab.cache` - the persistent request cache under every backend;
* :mod:`judgelab.data` - dataset sources, readers, tables, selections, imported judges;
* :mod:`judgelab.llm` - backends, the cached client, prompts, personas, answer parsing, the
  pointwise judgment, a job's model session;
* :mod:`judgelab.analysis` - agreement, statistical tests, rendering, plotting;
* :mod:`judgelab.project.facade` - config, the :class:`~judgelab.project.facade.Project` facade, the
  estimate, the shared stages;
* :mod:`judgelab.studies` - one package per study, each importing the packages above (none of
  which imports a study);
* :mod:`judgelab.cli` - the ``judgelab`` command; :mod:`judgelab.errors` - the one error type.
"""

__version__ = "0.1.0"
