"""Snakemake adapter - simulation (PersonaJudge): the figures of an evaluator set."""

from judgelab.project.runner import run
from judgelab.studies.simulation.jobs import figures_job

run(snakemake, figures_job)
