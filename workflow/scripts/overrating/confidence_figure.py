"""Snakemake adapter - overrating: the token confidence by TP / FP / TN / FN of one dataset x judge."""

from judgelab.project.runner import run
from judgelab.studies.overrating.jobs import confidence_figure_job

run(snakemake, confidence_figure_job)
