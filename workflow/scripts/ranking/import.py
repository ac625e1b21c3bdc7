"""Snakemake adapter: an imported judge's qrels file -> its labels on the dataset (no LLM call)."""

from judgelab.project.runner import script_logging
from judgelab.studies.ranking.jobs import import_labels_job

with script_logging(snakemake.log[0]):
    import_labels_job(
        snakemake.input.pairs,
        snakemake.input.judge,
        snakemake.output.labels,
        scale=snakemake.params.scale,
        confidence_scale=snakemake.params.confidence_scale,
    )
