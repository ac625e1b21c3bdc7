"""Snakemake adapter: one judgment job (dataset x model x template x persona)."""

from judgelab.cache.store import CacheConfig
from judgelab.project.runner import script_logging
from judgelab.studies.peras.jobs import judge_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    judge_job(
        snakemake.input.pairs,
        snakemake.output.judgments,
        persona=snakemake.params.persona,
        persona_file=snakemake.input.persona or None,
        template=snakemake.params.template,
        model=snakemake.params.model,
        max_tokens=snakemake.params.max_tokens,
        labels=snakemake.params.labels,
        placement=snakemake.params.placement,
        cache=CacheConfig.of(snakemake.config),
        threads=snakemake.threads,
        desc=f"judge {w.dataset}/{w.model}/{w.template}/{w.persona}",
        model_name=w.model,
        answer=snakemake.params.answer,
        coverage=snakemake.params.coverage,
    )
