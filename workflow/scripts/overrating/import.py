"""Snakemake adapter: an imported judge's qrels file -> the overrating pointwise table (no LLM call)."""

from judgelab.project.runner import script_logging
from judgelab.studies.overrating.jobs import imported_pointwise_job

with script_logging(snakemake.log[0]):
    imported_pointwise_job(
        snakemake.input.pairs,
        snakemake.input.judge,
        snakemake.output.judgments,
        scale=snakemake.params.scale or None,
        confidence_scale=snakemake.params.confidence_scale or None,
        source={"qrels": snakemake.input.qrels, "topics": snakemake.input.topics},
        encoding=snakemake.params.encoding,
        out_summary=snakemake.output.summary,
        ids={k: snakemake.wildcards[k] for k in ("dataset", "model", "scale")},
    )
