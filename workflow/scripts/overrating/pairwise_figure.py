"""Snakemake adapter: the pairwise rates by setting of one dataset x judge."""

from judgelab.project.runner import script_logging
from judgelab.studies.overrating.jobs import pairwise_figure_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    pairwise_figure_job(
        snakemake.input.metrics,
        snakemake.output.png,
        snakemake.output.pdf,
        title=f"Pairwise judging by setting - {w.dataset} / {snakemake.params.display}",
    )
