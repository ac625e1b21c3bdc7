"""Snakemake adapter: normalise a dataset into one table and apply the configured subset."""

from judgelab.datasets import prepare_dataset_job
from judgelab.jobs import script_logging

with script_logging(snakemake.log[0]):
    prepare_dataset_job(
        snakemake.wildcards.dataset,
        snakemake.input.qrels,
        snakemake.input.topics,
        snakemake.input.texts,
        snakemake.params.selection,
        snakemake.output.table,
    )
