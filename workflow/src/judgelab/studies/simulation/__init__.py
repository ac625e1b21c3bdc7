"""Evaluator simulation (seed 001, PersonaJudge): predicting one evaluator's preference judgments
(prefer A / neutral / prefer B) from that evaluator's own past judgments, with optional interface
telemetry and retrospective reasoning, through a two-round cascade.

Modules:

* :mod:`.data` - the record schema, the JSONL and PandaLM loaders, download and the sample cut.
* :mod:`.splits` - per-evaluator demonstration pool and validation set, the leakage check.
* :mod:`.prompt` - the seed's simulation prompt (section 10) and the demonstration format (section 9).
* :mod:`.cascade` - balanced demonstration sampling, request building, answer reading, the cascade.
* :mod:`.baselines` - random, oracle consensus, global and per-evaluator majority; the
  cross-evaluator control.
* :mod:`.metrics` - accuracy, deviation metrics, confusion matrices, per-class P/R/F1,
  evaluator-level correlations.
* :mod:`.stats` - Friedman, Wilcoxon with Holm, Benjamini-Hochberg, paired and one-sample t,
  repeated-measures ANOVA, with the evaluator as the unit.
* :mod:`.report` - tables shaped like the seed's; :mod:`.figures` - its figures.
* :mod:`.plan` - the config section ``simulation`` resolved (evaluator sets, cells, settings,
  paths, jobs, targets); :mod:`.jobs` - one function per workflow job; :mod:`.estimate` - the
  requests ``judgelab estimate`` counts.

Config section ``simulation``, target ``simulation``, rules ``workflow/rules/simulation.smk`` and
``workflow/rules/simulation/``, prompt ``resources/prompts/simulation/``.
"""
