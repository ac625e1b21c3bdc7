# Study: PERAS (seed 000) - personality-conditioned relevance assessment with confidence.
# Config section `peras` (switch: peras.enabled); target `snakemake peras`; library
# judgelab.jobs.peras; prompts resources/prompts/peras/; report captions workflow/report/*.rst.
# Stages: judge -> confidence -> metrics (+ imported judges) -> significance, figures, classifiers.


include: "peras/common.smk"
include: "peras/judge.smk"
include: "peras/confidence.smk"
include: "peras/imported.smk"
include: "peras/metrics.smk"
include: "peras/significance.smk"
include: "peras/figures.smk"
include: "peras/classifier.smk"


rule peras:
    input:
        PROJECT.targets("peras"),
