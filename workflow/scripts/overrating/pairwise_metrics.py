"""Snakemake adapter: the outcomes and rates of one pairwise run."""

from judgelab.project.runner import script_logging
from judgelab.studies.overrating.jobs import pairwise_metrics_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    pairwise_metrics_job(
        snakemake.input.judgments,
        snakemake.output.metrics,
        snakemake.output.outcomes,
        ids={"dataset": w.dataset, "model": w.model},
    )
