"""Snakemake adapter: the figures of one dataset x model x template."""

from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import figures_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    figures_job(
        snakemake.input.pairs,
        list(snakemake.input.judgments),
        list(snakemake.input.confidence),
        snakemake.input.metrics,
        snakemake.input.significance or None,
        list(snakemake.params.personas),
        snakemake.params.settings,
        ids={"dataset": w.dataset, "model": w.model, "template": w.template},
        out=dict(snakemake.output.items()),
    )
