"""Snakemake adapter - ranking: an imported judge's qrels file -> its labels on the dataset (no LLM call)."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import import_labels_job

run(snakemake, import_labels_job)
