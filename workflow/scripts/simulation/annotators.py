"""Snakemake adapter - simulation (PersonaJudge): what an evaluator set can support (its annotators'
agreement, the deviating validation pairs)."""

from judgelab.project.runner import run
from judgelab.studies.simulation.jobs import annotators_job

run(snakemake, annotators_job)
