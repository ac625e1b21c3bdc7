"""Snakemake adapter: one pairwise judgment job (dataset x model), every sampled pair in both orders."""

from judgelab.cache.store import CacheConfig
from judgelab.project.runner import script_logging
from judgelab.studies.overrating.jobs import pairwise_judge_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    pairwise_judge_job(
        snakemake.input.pairs,
        snakemake.input.sampled,
        snakemake.output.judgments,
        template=snakemake.params.template,
        labels=snakemake.params.labels,
        model=snakemake.params.model,
        max_tokens=snakemake.params.max_tokens,
        cache=CacheConfig.of(snakemake.config),
        threads=snakemake.threads,
        desc=f"overrating pairwise {w.dataset}/{w.model}",
        model_name=w.model,
        coverage=snakemake.params.coverage,
    )
