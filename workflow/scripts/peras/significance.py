"""Snakemake adapter - PERAS: persona vs reference significance of one group."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import significance_job

run(snakemake, significance_job)
