# Perturbations stage 4 - tables per dataset: transition matrices (tidy), label shifts and the
# kept fraction per rewrite variant; label distributions and insertion counts per insertion.


rule perturbation_transitions:
    input:
        rejudged=perturbation_rejudged(lambda: PERTURBATIONS.rewrite_variants),
        rewrites=perturbation_tables("perturbation_rewrites", lambda: PERTURBATIONS.rewrite_variants),
    output:
        transitions=path("perturbation_transitions"),
        shifts=path("perturbation_shifts"),
        kept=report(
            path("perturbation_kept"),
            category="Perturbations (seed 004)",
            subcategory="{dataset}",
            caption="../../report/perturbations_kept.rst",
        ),
    log:
        PROJECT.log("perturbations/{dataset}/transitions"),
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/perturbation_transitions.py"


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
        "../../scripts/perturbation_distributions.py"
