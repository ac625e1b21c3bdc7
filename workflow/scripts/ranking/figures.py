"""Snakemake adapter: the score scatter and the rank-rank plot of a dataset x judge x measure."""

from judgelab.project.runner import script_logging
from judgelab.studies.ranking.jobs import figures_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    figures_job(
        snakemake.input.scores,
        snakemake.input.correlations,
        dict(snakemake.output.items()),
        dataset=w.dataset,
        judge=w.judge,
        reference=snakemake.params.reference,
        measure=snakemake.params.measure,
    )
