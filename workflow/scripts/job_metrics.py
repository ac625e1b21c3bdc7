"""Snakemake adapter: metrics of one judgment job."""
from judgelab.jobs import job_metrics_job, script_logging

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    job_metrics_job(snakemake.input.pairs, snakemake.input.judgments, snakemake.input.confidence,
                    snakemake.output.metrics,
                    ids={"dataset": w.dataset, "model": w.model, "template": w.template,
                         "persona": w.persona})
