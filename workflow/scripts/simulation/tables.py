"""Snakemake adapter: the seed-shaped tables over all evaluator sets (simulation, seed 001)."""

import os

from judgelab.project.runner import script_logging
from judgelab.studies.simulation.jobs import tables_job

with script_logging(snakemake.log[0]):
    tables_job(
        snakemake.params.metrics_dirs,
        snakemake.params.stats_dirs,
        os.path.dirname(snakemake.output.factors),
        metric=snakemake.params.metric,
        alpha=snakemake.params.alpha,
        data_dirs=snakemake.params.data_dirs,
        tasks=snakemake.params.tasks,
    )
