"""Snakemake adapter - download a dataset's raw files (verified)."""

from judgelab.project.runner import run
from judgelab.project.stages import download_job

run(snakemake, download_job)
