"""Snakemake adapter - ranking: download one run file (source: download)."""

from judgelab.project.runner import run
from judgelab.studies.ranking.jobs import download_run_job

run(snakemake, download_run_job)
