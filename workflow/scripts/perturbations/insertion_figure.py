"""Snakemake adapter: seed 004 Figure 3 (one dataset, or every dataset pooled)."""

from judgelab.project.runner import script_logging
from judgelab.studies.perturbations.jobs import insertion_figure_job

p = snakemake.params
with script_logging(snakemake.log[0]):
    insertion_figure_job(
        snakemake.input.distributions,
        snakemake.output.png,
        snakemake.output.pdf,
        dataset=p.title,
        variants=list(p.variants),
        names=p.names,
    )
