"""Snakemake adapter: what an evaluator set can support - its annotators' agreement and the
deviating validation pairs (simulation, seed 001)."""

from judgelab.project.runner import script_logging
from judgelab.studies.simulation.jobs import annotators_job

with script_logging(snakemake.log[0]):
    annotators_job(snakemake.input.records, snakemake.input.splits, snakemake.output.annotators)
