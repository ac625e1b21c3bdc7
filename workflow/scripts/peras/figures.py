"""Snakemake adapter - PERAS: Figures 2-5 of one group."""

from judgelab.project.runner import run
from judgelab.studies.peras.jobs import figures_job

run(snakemake, figures_job)
