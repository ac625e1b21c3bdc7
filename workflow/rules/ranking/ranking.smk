# Study: system-ranking agreement (beyond the reproduced papers) - does a judge rank retrieval
# systems as the human assessors do? Config section `ranking` (switch: ranking.enabled); target
# `snakemake ranking`; library judgelab.studies.ranking; report captions workflow/report/ranking/.
# No prompt of its own: live judges use a PERAS template and persona (requests identical to
# PERAS's).
# Stages: runs (systems, downloads or files) -> the pool labelled by each judge (live or imported)
# -> one score job per dataset (every run x qrels, scores kept by content digest) -> correlations
# and pool tables per dataset -> figures, leaderboard; the run each judge builds from a base run,
# ranked in its own table (circularity.tsv) and figure.


# cheap aggregations run on the submitting host on a cluster (profiles/slurm)
localrules:
    ranking,
    ranking_runs,
    ranking_import,
    ranking_committee,
    ranking_repeat_draws,
    ranking_correlations,
    ranking_circularity,
    ranking_leaderboard,
    ranking_robustness,


include: "common.smk"
include: "runs.smk"
include: "judge.smk"
include: "scores.smk"
include: "tables.smk"
include: "circularity.smk"


rule ranking:
    input:
        PROJECT.targets("ranking"),


# the runs the workflow makes or downloads, and the dataset tables: afterwards `judgelab estimate`
# counts the judges' pool exactly
rule ranking_runs:
    input:
        RANKING.run_targets() if PROJECT.enabled("ranking") else [],
