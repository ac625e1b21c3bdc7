"""PERAS (Judging with Personality and Confidence): personality-conditioned relevance assessment
with confidence.

Every dataset x judge x task template (without CoT, Table 2; with CoT, Table 3) x persona
condition (Table 1): a graded label 0-3 per pair, then a self-reported confidence 0-100;
agreement and calibration metrics per persona, each persona against the default, Figures 2-5,
and the RQ3 classifiers on persona features (Table 5).

Modules (config section ``peras``, target ``peras``, rules ``workflow/rules/peras/peras.smk`` and
``workflow/rules/peras/``, prompts ``resources/prompts/peras/``):

* :mod:`.plan` - the section resolved: templates, the groups (dataset x model x template with
  their personas, imported judges included), settings, paths, LLM jobs, targets;
* the judgment prompt, persona || template(query, passage), is assembled by
  :func:`judgelab.llm.judging.judgment_requests` (shared with the perturbations and ranking studies,
  so their requests for the same pair are cache hits);
* :mod:`.confidence` - the confidence follow-up (Table 6, Appendix A): where its prompt is
  assembled and its answer read;
* :mod:`.metrics` - kappa, QWK, macro F1 (:mod:`judgelab.analysis.agreement`) and Sakai's RO, RU, HMR of
  one job;
* :mod:`.significance` - persona vs reference: paired bootstrap over queries, Holm;
* :mod:`.classifiers` - the RQ3 features, splits, classifiers and Table 5;
* :mod:`.figures` - Figures 2-5;
* :mod:`.jobs` - one function per workflow job; :mod:`.estimate` - its requests for
  ``judgelab estimate``.
"""
