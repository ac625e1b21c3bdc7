"""Snakemake adapter: the reference predictors of an evaluator set (simulation, seed 001)."""

from judgelab.project.runner import script_logging
from judgelab.studies.simulation.jobs import baselines_job

with script_logging(snakemake.log[0]):
    baselines_job(
        snakemake.input.records,
        snakemake.input.splits,
        snakemake.output.baselines,
        seed=snakemake.params.seed,
        majority_source=snakemake.params.majority_source,
    )
