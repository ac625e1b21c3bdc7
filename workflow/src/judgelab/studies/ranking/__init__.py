"""The ranking study (system-ranking agreement): does an LLM judge rank retrieval systems as human
assessors do? Every run is scored under the human qrels and under the judge's labels, and the two
system rankings are correlated.

Modules (pure functions, DataFrames in and DataFrames or dicts out; no Snakemake code):

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

Label agreement per item (Krippendorff's alpha) is :func:`judgelab.agreement.krippendorff_alpha`.
"""
