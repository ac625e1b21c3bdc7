# Perturbations stage 4 - tables per dataset: transition matrices (tidy), label shifts (with the
# coverage) and the kept fraction (and the passages kept by every variant) per rewrite variant;
# label distributions and insertion counts per insertion. With several datasets, the transitions
# and distributions pooled over them (perturbations-pooled/).


rule perturbation_transitions:
    input:
        rejudged=perturbation_rejudged(lambda: PERTURBATIONS.rewrite_variants),
        rewrites=perturbation_tables("perturbation_rewrites", lambda: PERTURBATIONS.rewrite_variants),
    output:
        transitions=path("perturbation_transitions"),
        shifts=path("perturbation_shifts"),
        kept=report(
            path("perturbation_kept"),
            category="Perturbations (When LLM Judges Inflate Scores, section 3)",
            subcategory="{dataset}",
            caption="../../report/perturbations/kept.rst",
        ),
    log:
        PROJECT.log("perturbations/{dataset}/transitions"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        rewrite_filter=PERTURBATIONS.rewrite_filter,
    script:
        "../../scripts/perturbations/transitions.py"


rule perturbation_distributions:
    input:
        rejudged=perturbation_rejudged(lambda: PERTURBATIONS.insertions),
        insertions=perturbation_tables("perturbation_insertions", lambda: PERTURBATIONS.insertions),
    output:
        distributions=path("perturbation_distributions"),
        counts=path("perturbation_insertion_counts"),
    log:
        PROJECT.log("perturbations/{dataset}/distributions"),
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/perturbations/distributions.py"


rule perturbation_pooled:
    input:
        transitions=lambda wc: (
            [path("perturbation_transitions", dataset=d) for d in PERTURBATIONS.datasets]
            if PERTURBATIONS.rewrite_variants
            else []
        ),
        distributions=lambda wc: (
            [path("perturbation_distributions", dataset=d) for d in PERTURBATIONS.datasets]
            if PERTURBATIONS.insertions
            else []
        ),
    output:
        pooled_transitions=path("perturbation_pooled_transitions"),
        pooled_distributions=path("perturbation_pooled_distributions"),
    log:
        PROJECT.log("perturbations-pooled/tables"),
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/perturbations/pooled.py"
