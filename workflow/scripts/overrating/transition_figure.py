"""Snakemake adapter: the transition-matrix heatmap of one pointwise run."""

from judgelab.project.runner import script_logging
from judgelab.studies.overrating.jobs import transition_figure_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    transition_figure_job(
        snakemake.input.transition,
        snakemake.output.png,
        snakemake.output.pdf,
        title=f"Human -> judge labels - {w.dataset} / {snakemake.params.display} / {w.scale}",
    )
