# Study: perturbations ("When LLM Judges Inflate Scores", section 3) - do judges assess meaning
# or surface cues?
# Config section `perturbations` (switch: perturbations.enabled); target `snakemake perturbations`;
# plan judgelab.studies.perturbations.plan (each job's settings one value per concern:
# judgelab.studies.perturbations.settings); jobs judgelab.studies.perturbations.jobs; prompts
# resources/prompts/perturbations/; report captions workflow/report/perturbations/.
# Stages per dataset: sample (each judge's original judgment) -> rewrites + meaning check (one job
# per variant, pooled samples) and insertions (SEM / LEX / QRY) -> re-judging (variant x judge) ->
# transitions, distributions -> figures.


# cheap aggregations run on the submitting host on a cluster (profiles/slurm)
localrules:
    perturbations,
    perturbation_sample,
    perturbation_insertion,
    perturbation_transitions,
    perturbation_distributions,
    perturbation_pooled,
    perturbation_attack_sample,
    perturbation_attacks,


include: "common.smk"
include: "sample.smk"
include: "rewrite.smk"
include: "insertion.smk"
include: "attacks.smk"
include: "rejudge.smk"
include: "tables.smk"
include: "figures.smk"


rule perturbations:
    input:
        PROJECT.targets("perturbations"),
