"""Snakemake adapter: one pointwise judgment job (dataset x model x scale) of the overrating study."""

from judgelab.cache.store import CacheConfig
from judgelab.project.runner import script_logging
from judgelab.studies.overrating.jobs import pointwise_judge_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    pointwise_judge_job(
        snakemake.input.pairs,
        snakemake.output.judgments,
        scale=w.scale,
        template=snakemake.params.template,
        labels=snakemake.params.labels,
        model=snakemake.params.model,
        max_tokens=snakemake.params.max_tokens,
        cache=CacheConfig.of(snakemake.config),
        threads=snakemake.threads,
        desc=f"overrating pointwise {w.dataset}/{w.model}/{w.scale}",
        model_name=w.model,
        coverage=snakemake.params.coverage,
    )
