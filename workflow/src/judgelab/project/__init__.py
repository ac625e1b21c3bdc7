"""The project base: a run's configuration and what every study builds on (it imports no study
and nothing of the wiring, :mod:`judgelab.wiring`, which builds the studies' plans and answers).

* :mod:`.config` - load, merge and validate config files against the schema;
* :mod:`.plan` - what a study's plan is;
* :mod:`.inputs` - every input file a job will read, read by its job's reader before any job runs
  (remembered while the files are unchanged);
* :mod:`.records` - Snakemake's record of the job that wrote a file: whether it was made for this
  config (the estimate's check before it reads a prepared file);
* :mod:`.stages` - the shared stages' jobs (datasets, personas); :mod:`.runner` - what every
  workflow script shares (the job's log, JSON params); :mod:`.repeats` - a judge job asked k
  times (``peras.repeats``), shared by PERAS and the ranking study;
* :mod:`.schema_docs` - config/README.md's key tables, generated from the schema;
* :mod:`.manifest` - ``results/manifest.json``: what produced a result folder.
"""
