# Study: Overrating ("When LLM Judges Inflate Scores", section 2) - do LLM judges inflate grades
# while near-certain of them, and do they fail by ties or by wrong wins when comparing two passages?
# Config section `overrating` (switch: overrating.enabled); target `snakemake overrating`; library
# judgelab.studies.overrating (plan, settings), jobs judgelab.studies.overrating.jobs (each script
# one run() call; a judge travels whole as the `judge` param); prompts resources/prompts/overrating/;
# report captions workflow/report/overrating/.
# Stages: pointwise judge (or import) -> pointwise metrics -> Table 1, transition and confidence
# figures; pair sampling -> pairwise judge -> pairwise metrics -> Table 2, pairwise figure.


# cheap aggregations run on the submitting host on a cluster (profiles/slurm)
localrules:
    overrating,
    overrating_import,
    overrating_pointwise_metrics,
    overrating_pairs,
    overrating_pairwise_metrics,
    overrating_table1,
    overrating_table2,


include: "common.smk"
include: "pointwise.smk"
include: "pairwise.smk"
include: "tables.smk"
include: "figures.smk"


rule overrating:
    input:
        PROJECT.targets("overrating"),
