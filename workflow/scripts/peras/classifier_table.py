"""Snakemake adapter: the Table 5 shaped classifier table over every judge (TSV, MD, TeX, HTML)."""

from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import classifier_table_job

with script_logging(snakemake.log[0]):
    classifier_table_job(
        list(snakemake.input.summaries),
        list(snakemake.params.ids),
        snakemake.output.tsv,
        snakemake.output.md,
        snakemake.output.tex,
        snakemake.output.html,
    )
