"""Snakemake adapter: one system's run over a dataset table (source: systems)."""

from judgelab.project.runner import script_logging
from judgelab.studies.ranking.jobs import system_run_job

with script_logging(snakemake.log[0]):
    system_run_job(
        snakemake.input.pairs,
        snakemake.output.run,
        system=snakemake.params.system,
        name=snakemake.wildcards.run,
        candidates=snakemake.params.candidates,
        depth=snakemake.params.depth,
    )
