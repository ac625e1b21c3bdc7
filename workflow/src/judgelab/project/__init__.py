"""A run's configuration and the answers every part of the workflow asks of it.

* :mod:`.config` - load, merge and validate config files against the schema;
* :mod:`.facade` - :class:`~.facade.Project`, the answer to every resolution question (rules,
  the estimate and the CLI ask it); :mod:`.plan` - what a study's plan is;
* :mod:`.inputs` - every input file a job will read, read by its job's reader before any job runs
  (remembered while the files are unchanged);
* :mod:`.estimate` - ``judgelab estimate``: calls, tokens and cost before anything is spent;
* :mod:`.stages` - the shared stages' jobs (datasets, personas); :mod:`.runner` - what every
  workflow script shares (the job's log, JSON params);
* :mod:`.schema_docs` - config/README.md's key tables, generated from the schema;
* :mod:`.manifest` - ``results/manifest.json``: what produced a result folder.
"""
