# Study: perturbations (seed 004, section 3) - do judges assess meaning or surface cues?
# Config section `perturbations` (switch: perturbations.enabled); target `snakemake perturbations`;
# plan judgelab.studies.perturbations; jobs judgelab.studies.perturbations.jobs; prompts
# resources/prompts/perturbations/; report captions workflow/report/perturbations_*.rst.
# Stages per dataset: sample (each judge's PERAS judgment) -> rewrites + meaning check (one job per
# variant, pooled samples) and insertions (SEM / LEX / QRY) -> re-judging (variant x judge) ->
# transitions, distributions -> figures.


# cheap aggregations run on the submitting host on a cluster (profiles/slurm)
localrules:
    perturbations,
    perturbation_sample,
    perturbation_insertion,
    perturbation_transitions,
    perturbation_distributions,
    perturbation_pooled,


include: "perturbations/common.smk"
include: "perturbations/sample.smk"
include: "perturbations/rewrite.smk"
include: "perturbations/insertion.smk"
include: "perturbations/rejudge.smk"
include: "perturbations/tables.smk"
include: "perturbations/figures.smk"


rule perturbations:
    input:
        PROJECT.targets("perturbations"),
