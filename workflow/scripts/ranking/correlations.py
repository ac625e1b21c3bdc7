"""Snakemake adapter - ranking: a dataset's scores, pool and correlations tables."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import correlations_job

run(snakemake, correlations_job)
