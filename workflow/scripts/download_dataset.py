"""Snakemake adapter: download a dataset's raw files."""

from judgelab.datasets import download_job
from judgelab.jobs import script_logging

with script_logging(snakemake.log[0]):
    download_job(snakemake.params.urls, dict(snakemake.output.items()))
