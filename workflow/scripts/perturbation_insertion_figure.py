"""Snakemake adapter: seed 004 Figure 3 for one dataset."""

from judgelab.jobs import script_logging
from judgelab.studies.perturbations.jobs import insertion_figure_job

with script_logging(snakemake.log[0]):
    insertion_figure_job(
        snakemake.input.distributions,
        snakemake.output.png,
        snakemake.output.pdf,
        dataset=snakemake.wildcards.dataset,
        variants=list(snakemake.params.variants),
    )
