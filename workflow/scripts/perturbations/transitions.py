"""Snakemake adapter: transitions, shifts and kept fractions of one dataset's rewrites."""

from judgelab.project.runner import script_logging
from judgelab.studies.perturbations.jobs import transitions_job

o = snakemake.output
with script_logging(snakemake.log[0]):
    transitions_job(
        list(snakemake.input.rejudged),
        list(snakemake.input.rewrites),
        o.transitions,
        o.shifts,
        o.kept,
        rewrite_filter=snakemake.params.rewrite_filter,
    )
