"""Snakemake adapter: seed 004 Table 2 (pooled and per setting) from every pairwise run's metrics."""

from judgelab.project.runner import script_logging
from judgelab.studies.overrating.jobs import table2_job

out = dict(snakemake.output.items())
with script_logging(snakemake.log[0]):
    table2_job(
        list(snakemake.input.metrics),
        {k: v for k, v in out.items() if not k.startswith("by_setting_")},
        {k.removeprefix("by_setting_"): v for k, v in out.items() if k.startswith("by_setting_")},
        confidence=snakemake.params.confidence,
        names=snakemake.params.names,
    )
