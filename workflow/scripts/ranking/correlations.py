"""Snakemake adapter: a dataset's scores, pool and correlations tables."""

from judgelab.project.runner import script_logging
from judgelab.studies.ranking.jobs import correlations_job

p = snakemake.params
with script_logging(snakemake.log[0]):
    correlations_job(
        snakemake.input.pairs,
        list(snakemake.input.runs),
        list(snakemake.input.labels),
        list(snakemake.input.scores),
        dict(snakemake.output.items()),
        dataset=snakemake.wildcards.dataset,
        run_names=p.run_names,
        judges=p.judges,
        comparisons=p.comparisons,
        measures=p.measures,
        pool_depth=p.pool_depth,
        settings=p.settings,
    )
