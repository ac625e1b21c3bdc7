"""Snakemake adapter - perturbations: Figure 3 (one dataset, or every dataset pooled)."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import insertion_figure_job

run(snakemake, insertion_figure_job)
