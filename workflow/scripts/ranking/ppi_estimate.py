"""Snakemake adapter - ranking: the systems' scores estimated from the labels people collected
(judge-only, PPI++ and human-only, with their intervals)."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import ppi_estimate_job

run(snakemake, ppi_estimate_job)
