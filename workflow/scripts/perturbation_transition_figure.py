"""Snakemake adapter: seed 004 Figure 1 for one dataset x judge."""

from judgelab.jobs import script_logging
from judgelab.studies.perturbations.jobs import transition_figure_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    transition_figure_job(
        snakemake.input.transitions,
        snakemake.output.png,
        snakemake.output.pdf,
        dataset=w.dataset,
        judge=w.model,
        variants=list(snakemake.params.variants),
    )
