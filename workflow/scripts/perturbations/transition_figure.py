"""Snakemake adapter: seed 004 Figure 1 for one judge (one dataset, or every dataset pooled)."""

from judgelab.project.runner import script_logging
from judgelab.studies.perturbations.jobs import transition_figure_job

p = snakemake.params
with script_logging(snakemake.log[0]):
    transition_figure_job(
        snakemake.input.transitions,
        snakemake.output.png,
        snakemake.output.pdf,
        dataset=p.title,
        judge=snakemake.wildcards.model,
        variants=list(p.variants),
        display=p.display,
    )
