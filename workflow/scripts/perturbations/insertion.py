"""Snakemake adapter: the LEX or QRY insertions of one dataset (no model)."""

from judgelab.project.runner import script_logging
from judgelab.studies.perturbations.jobs import insertion_job

with script_logging(snakemake.log[0]):
    insertion_job(
        list(snakemake.input.samples),
        snakemake.output.insertions,
        snakemake.output.sentences,
        variant=snakemake.wildcards.variant,
        stopwords=snakemake.params.stopwords,
        template=snakemake.params.template or None,
    )
