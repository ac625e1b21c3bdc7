"""Snakemake adapter - perturbations: the attack figure of one dataset."""

from judgelab.project.runner import run
from judgelab.studies.perturbations.jobs import attack_figure_job

run(snakemake, attack_figure_job)
