"""judgelab: cached, reproducible LLM relevance-judge experiments.

Where things live (each package's ``__init__`` says more):

* :mod:`judgelab.cache` - the persistent request cache under every backend;
* :mod:`judgelab.data` - dataset sources, readers, tables, selections, imported judges;
* :mod:`judgelab.llm` - backends, the cached client, prompts, personas, answer parsing, the
  pointwise judgment, a job's model session;
* :mod:`judgelab.analysis` - agreement, statistical tests, rendering, plotting;
* :mod:`judgelab.project` - the project base: config, what a study's plan is, the script runner,
  the shared stages (it imports no study);
* :mod:`judgelab.studies` - one package per study, each importing the packages above (none of
  which imports a study, nor another study's modules);
* :mod:`judgelab.wiring` - the layer above the studies: the
  :class:`~judgelab.wiring.facade.Project` facade (it builds every study's plan) and the
  estimate across studies; :mod:`judgelab.cli` - the ``judgelab`` command (wiring too);
* :mod:`judgelab.errors` - the one error type; :mod:`judgelab.params` - the typed settings' base.
"""

__version__ = "0.1.0"
