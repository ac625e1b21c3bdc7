"""Snakemake adapter - PERAS: Tables 7 and 8 (wide) from the metrics."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import wide_tables_job

run(snakemake, wide_tables_job)
