"""Snakemake adapter: one run scored under every qrels of its dataset (dataset x run)."""

from judgelab.project.runner import script_logging
from judgelab.studies.ranking.jobs import score_job

w, i, p = snakemake.wildcards, snakemake.input, snakemake.params
with script_logging(snakemake.log[0]):
    score_job(
        i.run,
        i.pairs,
        list(i.labels),
        snakemake.output.scores,
        run_name=w.run,
        qrels=p.qrels,
        judges=p.judges,
        measures=p.measures,
    )
