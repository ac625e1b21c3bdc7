"""Snakemake adapter: seed 000 Table 4 from the prepared datasets."""

from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import table4_job

out = snakemake.output
with script_logging(snakemake.log[0]):
    table4_job(list(snakemake.input.pairs), {k: out[k] for k in ("tsv", "md", "tex", "html")})
