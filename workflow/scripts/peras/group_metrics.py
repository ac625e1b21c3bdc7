"""Snakemake adapter: metrics of every persona's job of one dataset x model x template."""

from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import group_metrics_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    group_metrics_job(
        snakemake.input.pairs,
        list(snakemake.input.judgments),
        list(snakemake.input.confidence),
        list(snakemake.params.personas),
        snakemake.output.metrics,
        ids={"dataset": w.dataset, "model": w.model, "template": w.template},
    )
