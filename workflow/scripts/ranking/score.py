"""Snakemake adapter - ranking: every run of a dataset scored under every qrels of the dataset."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import score_job

run(snakemake, score_job)
