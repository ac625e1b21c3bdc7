"""Snakemake adapter - overrating: the pairwise rates by setting of one dataset x judge."""

from judgelab.project.runner import run
from judgelab.studies.overrating.jobs import pairwise_figure_job

run(snakemake, pairwise_figure_job)
