"""Snakemake adapter: one run scored under one qrels (dataset x qrels x run)."""

from judgelab.jobs import script_logging
from judgelab.studies.ranking.jobs import score_job

w, i = snakemake.wildcards, snakemake.input
with script_logging(snakemake.log[0]):
    score_job(
        i.run,
        snakemake.output.scores,
        run_name=w.run,
        qrels_name=w.qrels,
        kind=snakemake.params.kind,
        measures=snakemake.params.measures,
        pairs=i.get("pairs"),
        labels=i.get("labels"),
    )
