"""Snakemake adapter: the metric tables of an evaluator set (simulation, seed 001)."""

import os

from judgelab.project.runner import script_logging
from judgelab.studies.simulation.jobs import metrics_job

with script_logging(snakemake.log[0]):
    metrics_job(
        snakemake.input.records,
        list(snakemake.input.predictions),
        snakemake.params.cells,
        snakemake.input.baselines,
        os.path.dirname(snakemake.output.accuracy),
        skipped=snakemake.params.skipped,
        splits=snakemake.input.splits,
        metric=snakemake.params.metric,
        random_draws=snakemake.params.random_draws,
        seed=snakemake.params.seed,
    )
