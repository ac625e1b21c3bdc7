# Perturbations stage 5 - figures (PNG and PDF): seed 004 Figure 1 (one judge's transition
# heatmaps, one per rewrite variant) and Figure 3 (label distributions after each insertion).


rule perturbation_transition_figure:
    input:
        transitions=path("perturbation_transitions"),
    output:
        png=report(
            path("perturbation_transition_figure", ext="png"),
            category="Perturbations (seed 004)",
            subcategory="{dataset}",
            caption="../../report/perturbations_transitions.rst",
            labels={"figure": "Fig. 1 - transitions", "dataset": "{dataset}", "judge": "{model}"},
        ),
        pdf=path("perturbation_transition_figure", ext="pdf"),
    log:
        PROJECT.log("perturbations/{dataset}/figures/transitions/{model}"),
    wildcard_constraints:
        model=PERTURBATION_JUDGES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    params:
        variants=lambda wc: PERTURBATIONS.rewrite_variants,
    script:
        "../../scripts/perturbation_transition_figure.py"


rule perturbation_insertion_figure:
    input:
        distributions=path("perturbation_distributions"),
    output:
        png=report(
            path("perturbation_insertion_figure", ext="png"),
            category="Perturbations (seed 004)",
            subcategory="{dataset}",
            caption="../../report/perturbations_insertions.rst",
            labels={"figure": "Fig. 3 - insertions", "dataset": "{dataset}"},
        ),
        pdf=path("perturbation_insertion_figure", ext="pdf"),
    log:
        PROJECT.log("perturbations/{dataset}/figures/insertions"),
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    params:
        variants=lambda wc: PERTURBATIONS.insertions,
    script:
        "../../scripts/perturbation_insertion_figure.py"
