"""Evaluator simulation (PersonaJudge): predicting one evaluator's preference judgments
(prefer A / neutral / prefer B) from that evaluator's own past judgments, with optional interface
telemetry and retrospective reasoning, through a two-round cascade.

Modules:

* :mod:`.data` - the record schema, the JSONL and PandaLM loaders, download and the sample cut.
* :mod:`.splits` - per-evaluator demonstration pool and validation set in whole leakage groups
  (shared contexts, swapped twins, identical items), the split report, the leakage check.
* :mod:`.annotators` - what the data can support: the annotators' agreement, the deviating
  validation pairs.
* :mod:`.prompt` - the paper's simulation prompt (section 10) and the demonstration format (section 9).
* :mod:`.cascade` - balanced demonstration sampling, request building, answer reading, the cascade.
* :mod:`.baselines` - random (its expectation and seeded draws), oracle consensus, global and
  per-evaluator majority; the cross-evaluator control.
* :mod:`.metrics` - accuracy over every judgment and coverage, deviation metrics, confusion
  matrices, per-class P/R/F1, evaluator-level and cross-task correlations.
* :mod:`.stats` - Friedman, Wilcoxon with Holm, Benjamini-Hochberg, paired and one-sample t,
  repeated-measures ANOVA with the evaluator as the unit, beside item-level tests (stratified
  permutation, McNemar, uniform guesses) with the evaluator as a stratum; every row with its n
  and smallest attainable p.
* :mod:`.report` - tables shaped like the paper's; :mod:`.figures` - the figures.
* :mod:`.plan` - the config section ``simulation`` resolved (evaluator sets, cells, settings,
  paths, jobs, targets); :mod:`.settings` - the values it builds and the rules carry whole into
  the jobs (the selection, a cell's judge :class:`~.settings.CascadeJudge`, the design, each
  stage's options); :mod:`.jobs` - one function per workflow job; :mod:`.estimate` - the
  requests ``judgelab estimate`` counts.

Config section ``simulation``, target ``simulation``, rules ``workflow/rules/simulation/simulation.smk`` and
``workflow/rules/simulation/``, prompt ``resources/prompts/simulation/``.
"""
