"""Snakemake adapter: normalise a dataset into one table and apply the configured subset."""

from judgelab.project.runner import script_logging
from judgelab.project.stages import prepare_dataset_job

with script_logging(snakemake.log[0]):
    prepare_dataset_job(
        snakemake.wildcards.dataset,
        snakemake.input.qrels,
        snakemake.input.topics,
        snakemake.input.texts,
        snakemake.params.selection,
        snakemake.output.table,
    )
