"""Snakemake adapter: download a dataset's raw files."""

from judgelab.project.runner import script_logging
from judgelab.project.stages import download_job

with script_logging(snakemake.log[0]):
    download_job(snakemake.params.urls, dict(snakemake.output.items()))
