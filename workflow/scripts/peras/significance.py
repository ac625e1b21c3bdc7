"""Snakemake adapter: persona vs reference paired bootstrap of one dataset x model x template."""

from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import significance_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    significance_job(
        snakemake.input.pairs,
        list(snakemake.input.judgments),
        list(snakemake.input.confidence),
        list(snakemake.params.personas),
        snakemake.params.settings,
        snakemake.output.table,
        ids={"dataset": w.dataset, "model": w.model, "template": w.template},
    )
