# Study: Prompt sensitivity - Arabzadeh and Clarke, "A Human-AI Comparative Analysis of Prompt
# Sensitivity in LLM-Based Relevance Judgment" (SIGIR 2025): how much a judge's agreement with the
# human labels moves with the prompt. Config section `sensitivity` (switch: sensitivity.enabled);
# target `snakemake sensitivity`; package judgelab.studies.sensitivity; the published files'
# manifest resources/sensitivity/published.tsv; captions workflow/report/sensitivity/*.rst.
# Stages: judge (live judges, one LLM job per dataset x judge x prompt x type; pairwise: the pairs of
# a dataset, then each pair in both orders) and download (the
# published prompts, pair lists and judgments, digests checked) -> agreement (one row per judged
# table or published file) -> tables (spread over prompts, human vs LLM prompts, figure); and
# rankings (each prompt's labels as qrels for a dataset's runs, sensitivity.rankings).


# cheap aggregations and downloads run on the submitting host on a cluster (profiles/slurm)
localrules:
    sensitivity,
    sensitivity_tables,


include: "common.smk"
include: "judge.smk"
include: "published.smk"
include: "tables.smk"
include: "rankings.smk"


rule sensitivity:
    input:
        PROJECT.targets("sensitivity"),
