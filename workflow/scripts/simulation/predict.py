"""Snakemake adapter: one simulation cell (evaluator set x model x demonstration type x shots)."""

from judgelab.cache.store import CacheConfig
from judgelab.project.runner import script_logging
from judgelab.studies.simulation.jobs import predict_job

w = snakemake.wildcards
with script_logging(snakemake.log[0]):
    predict_job(
        snakemake.input.records,
        snakemake.input.splits,
        snakemake.output.predictions,
        snakemake.output.demos,
        model=snakemake.params.model,
        demo_type=w.demo_type,
        shots=int(w.shots),
        settings=snakemake.params.settings,
        prompt=snakemake.params.prompt,
        cache=CacheConfig.of(snakemake.config),
        threads=snakemake.threads,
        desc=f"simulate {w.dataset}/{w.model}/{w.demo_type}/{w.shots}",
        coverage=snakemake.params.coverage,
        model_name=w.model,
    )
