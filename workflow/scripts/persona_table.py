"""Snakemake adapter: the table of persona texts a run uses."""
from judgelab.jobs import persona_table_job, script_logging

with script_logging(snakemake.log[0]):
    persona_table_job(snakemake.params.personas, snakemake.params.source,
                      list(snakemake.input.generated), snakemake.output.table)
