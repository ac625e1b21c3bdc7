"""Snakemake adapter: the token confidence by TP / FP / TN / FN of one dataset x judge."""

from judgelab.project.runner import script_logging
from judgelab.studies.overrating.jobs import confidence_figure_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    confidence_figure_job(
        list(snakemake.input.metrics),
        snakemake.output.png,
        snakemake.output.pdf,
        title=f"Token confidence by outcome - {w.dataset} / {snakemake.params.display}",
        confidence=snakemake.params.confidence,
    )
