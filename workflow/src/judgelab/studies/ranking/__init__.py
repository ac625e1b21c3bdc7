"""The ranking study (system-ranking agreement): does an LLM judge rank retrieval systems as human
assessors do? Every run is scored under the human qrels and under the judge's labels, and the two
system rankings are correlated.

Modules (no Snakemake code; the science modules are functions of DataFrames and dicts):

* :mod:`judgelab.studies.ranking.runs` - reading TREC run files (``qid Q0 docid rank score tag``),
  run names, the 63 TREC DL 2021 passage runs and their download, trec_eval's document order
  (:func:`~judgelab.studies.ranking.runs.top_k`) and the judging pool
  (:func:`~judgelab.studies.ranking.runs.pool`).
* :mod:`judgelab.studies.ranking.scores` - scoring runs with ir-measures under a qrels table
  (per topic and the mean over topics, trec_eval conventions), the share of judged documents, and
  scoring under a judge's label table in which some pool pairs are unlabelled.
* :mod:`judgelab.studies.ranking.correlation` - agreement of two system rankings: Kendall's tau-b,
  Spearman's rho, tau_ap, RBO, top-k tau, a topic-bootstrap interval of tau, and the agreement of
  pairwise significance decisions; :func:`~judgelab.studies.ranking.correlation.correlations`
  gathers them into one row of ``correlations.tsv``.

* :mod:`judgelab.studies.ranking.systems` - the workflow's own retrieval systems (``source:
  systems``: BM25 through bm25s, TF-IDF cosine through scikit-learn, Dirichlet query likelihood,
  term overlap, passage length, random) written as TREC run files.
* :mod:`judgelab.studies.ranking.pool` - the pool with its human grades and known texts, the
  qrels of every side, filling the human qrels' holes, the label agreement on the pool.
* :mod:`judgelab.studies.ranking.repeats` - self-consistency (``peras.repeats``): each repeat's
  labels as qrels, its tau against the reference order, their spread and the majority's tau.
* :mod:`judgelab.studies.ranking.tables` - scores.tsv, correlations.tsv and the leaderboard
  (LLMJudge Table 3); :mod:`judgelab.studies.ranking.figures` - score scatter, rank-rank plot.
* the plan, one concern a module: :mod:`~judgelab.studies.ranking.plan` (``Plan``: the study's
  contract - its jobs, checks and estimate - over the parts below); :mod:`~.checks` (the checks only
  a hand check can make: references between sections, files); :mod:`~.section` (the section's
  values); :mod:`~.runfiles` (each dataset's runs and their files); :mod:`~.judges` (the judges,
  committees, references and qrels); :mod:`~.inputs` (each job's inputs and tracked params);
  :mod:`~.paths` (the result paths and targets); :mod:`~.estimate` (the judge jobs' requests for
  ``judgelab estimate``).
* :mod:`judgelab.studies.ranking.settings` - the settings values the plan builds and the rules
  carry whole as params (a system, a pool, the scoring, the comparisons, the correlation options,
  a figure); :mod:`judgelab.studies.ranking.jobs` - one function per workflow job.

Label agreement per item (Krippendorff's alpha) is :func:`judgelab.analysis.agreement.krippendorff_alpha`.
"""
