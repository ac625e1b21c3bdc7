"""Snakemake adapter - ranking: one system's run over a dataset table (source: systems)."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import system_run_job

run(snakemake, system_run_job)
