# Study: PERAS (Judging with Personality and Confidence) - personality-conditioned relevance
# assessment with confidence.
# Config section `peras` (switch: peras.enabled); target `snakemake peras`; library
# judgelab.studies.peras.jobs; prompts resources/prompts/peras/; report captions workflow/report/peras/.
# Stages: judge -> confidence -> metrics (+ imported judges, committees, repeats) -> significance, figures, classifiers.


# cheap aggregations run on the submitting host on a cluster (profiles/slurm)
localrules:
    peras,
    peras_import_judge,
    peras_judge_committee,
    peras_persona_committee,
    peras_group_metrics,
    peras_aggregate_metrics,
    peras_aggregate_significance,
    peras_classifier_table,
    peras_table4,
    peras_wide_tables,
    peras_consistency,
    peras_repeat_draws,


include: "common.smk"
include: "judge.smk"
include: "confidence.smk"
include: "imported.smk"
include: "committee.smk"
include: "repeats.smk"
include: "metrics.smk"
include: "significance.smk"
include: "tables.smk"
include: "figures.smk"
include: "classifier.smk"


rule peras:
    input:
        PROJECT.targets("peras"),
