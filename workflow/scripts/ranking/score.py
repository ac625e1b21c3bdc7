"""Snakemake adapter - ranking: one run scored under every qrels of its dataset (dataset x run)."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import score_job

run(snakemake, score_job)
