"""Snakemake adapter - perturbations: Figure 1 of one judge (one dataset, or all datasets pooled)."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import transition_figure_job

run(snakemake, transition_figure_job)
