"""Snakemake adapter: one live judge labels a dataset's pool (dataset x model)."""

from judgelab.cache.store import CacheConfig
from judgelab.project.runner import script_logging
from judgelab.studies.ranking.jobs import judge_pool_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    judge_pool_job(
        snakemake.input.pairs,
        list(snakemake.input.runs),
        snakemake.output.labels,
        run_names=snakemake.params.run_names,
        pool_depth=snakemake.params.pool_depth,
        persona=snakemake.params.persona,
        persona_file=snakemake.input.persona or None,
        template=snakemake.params.template,
        labels=snakemake.params.labels,
        model=snakemake.params.model,
        max_tokens=snakemake.params.max_tokens,
        placement=snakemake.params.placement,
        cache=CacheConfig.of(snakemake.config),
        threads=snakemake.threads,
        desc=f"ranking judge {w.dataset}/{w.model}",
        model_name=w.model,
        answer=snakemake.params.answer,
        coverage=snakemake.params.coverage,
    )
