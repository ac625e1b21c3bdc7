"""Snakemake adapter: download one run file (source: download)."""

from judgelab.project.runner import script_logging
from judgelab.studies.ranking.jobs import download_run_job

with script_logging(snakemake.log[0]):
    download_run_job(snakemake.params.url, snakemake.output.run)
