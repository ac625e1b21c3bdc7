"""Snakemake adapter: seed 000 Tables 7 and 8 (wide) from the long metrics table."""

from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import wide_tables_job

out = snakemake.output
with script_logging(snakemake.log[0]):
    wide_tables_job(
        snakemake.input.metrics,
        snakemake.params.reference,
        {t: {k: out[f"{t}_{k}"] for k in ("tsv", "md", "tex", "html")} for t in ("table7", "table8")},
    )
