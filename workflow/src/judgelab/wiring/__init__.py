"""The wiring: the layer above the studies, the only one that names them.

* :mod:`.facade` - :class:`~.facade.Project`, a validated configuration and the answer to every
  resolution question; it builds each study's plan (``judgelab.studies.<study>.plan``, by module
  path from :data:`judgelab.studies.STUDIES`) and asks it (the Snakefile, the rules' helpers, the
  workflow scripts and the CLI ask the project);
* :mod:`.estimate` - ``judgelab estimate``: calls, tokens and cost of a configuration, across the
  studies, before anything is spent.

The layers, each importing only those below it (``tests/test_layout.py`` checks them, and that
there is no import cycle, ``import_module`` by name included): the core (:mod:`judgelab.cache`,
:mod:`judgelab.data`, :mod:`judgelab.llm`, :mod:`judgelab.analysis`, :mod:`judgelab.errors`,
:mod:`judgelab.params`) <- the project base (:mod:`judgelab.project`: config, what a plan is,
the runner, the shared stages, ...) <- the studies (:mod:`judgelab.studies`) <- the wiring (this
package and :mod:`judgelab.cli`).
"""
