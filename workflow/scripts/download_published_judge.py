"""Snakemake adapter - fetch a published judge's file (verified)."""

from judgelab.project.runner import run
from judgelab.project.stages import download_published_job

run(snakemake, download_published_job)
