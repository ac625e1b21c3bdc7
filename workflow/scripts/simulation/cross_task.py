"""Snakemake adapter: the cross-task figure of the evaluators who judged two tasks (simulation,
seed 001 Figure 3)."""

from judgelab.project.runner import script_logging
from judgelab.studies.simulation.jobs import cross_task_figure_job

with script_logging(snakemake.log[0]):
    cross_task_figure_job(
        snakemake.params.metrics_dirs,
        snakemake.params.tasks,
        snakemake.output.png,
        snakemake.output.pdf,
        metric=snakemake.params.metric,
    )
