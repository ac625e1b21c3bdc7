"""Snakemake adapter: the metrics and transition matrix of one pointwise run."""

from judgelab.project.runner import script_logging
from judgelab.studies.overrating.jobs import pointwise_metrics_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    pointwise_metrics_job(
        snakemake.input.pairs,
        snakemake.input.judgments,
        snakemake.output.metrics,
        snakemake.output.transition,
        ids={"dataset": w.dataset, "model": w.model, "scale": w.scale},
    )
