"""Snakemake adapter - overrating: the transition-matrix heatmap of one pointwise run."""

from judgelab.project.runner import run
from judgelab.studies.overrating.jobs import transition_figure_job

run(snakemake, transition_figure_job)
