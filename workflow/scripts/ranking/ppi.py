"""Snakemake adapter - ranking: prediction-powered estimates from a few human-judged topics (the
table and the width-vs-n figure)."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import ppi_job

run(snakemake, ppi_job)
