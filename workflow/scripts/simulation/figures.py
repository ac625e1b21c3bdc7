"""Snakemake adapter: the figures of an evaluator set (simulation, seed 001)."""

import os

from judgelab.project.runner import script_logging
from judgelab.studies.simulation.jobs import figures_job

with script_logging(snakemake.log[0]):
    figures_job(
        os.path.dirname(snakemake.input.accuracy),
        os.path.dirname(snakemake.output.confusion),
        dataset=snakemake.wildcards.dataset,
        metric=snakemake.params.metric,
    )
