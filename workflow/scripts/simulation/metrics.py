"""Snakemake adapter - simulation (PersonaJudge): the metric tables of an evaluator set."""

from judgelab.project.runner import run
from judgelab.studies.simulation.jobs import metrics_job

run(snakemake, metrics_job)
