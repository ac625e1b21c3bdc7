"""Snakemake adapter: the table of persona texts a run uses."""

from judgelab.project.runner import script_logging
from judgelab.project.stages import persona_table_job

with script_logging(snakemake.log[0]):
    persona_table_job(snakemake.params.personas, list(snakemake.input.generated), snakemake.output.table)
