"""Snakemake adapter: seed 004 Table 1 from every pointwise run's metrics."""

from judgelab.project.runner import script_logging
from judgelab.studies.overrating.jobs import table1_job

with script_logging(snakemake.log[0]):
    table1_job(
        list(snakemake.input.metrics),
        dict(snakemake.output.items()),
        confidence=snakemake.params.confidence,
        names=snakemake.params.names,
    )
