"""Snakemake adapter: the statistics of an evaluator set (simulation, seed 001)."""

import os

from judgelab.project.runner import script_logging
from judgelab.studies.simulation.jobs import stats_job

with script_logging(snakemake.log[0]):
    stats_job(
        os.path.dirname(snakemake.input.accuracy),
        os.path.dirname(snakemake.output.factors),
        metric=snakemake.params.metric,
        alpha=snakemake.params.alpha,
        permutations=snakemake.params.permutations,
        seed=snakemake.params.seed,
        cluster_by=snakemake.params.cluster_by,
    )
