# Perturbations stage 5 - figures (PNG and PDF): the paper's Figure 1 (one judge's transition
# heatmaps, one per rewrite variant) and Figure 3 (label distributions after each insertion), per
# dataset and, with several datasets, pooled over them (as the paper shows them: DL19 + DL20).


rule perturbation_transition_figure:
    input:
        transitions=path("perturbation_transitions"),
    output:
        png=report(
            path("perturbation_transition_figure", ext="png"),
            category="Perturbations (When LLM Judges Inflate Scores, section 3)",
            subcategory="{dataset}",
            caption="../../report/perturbations/transitions.rst",
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
        # the judge (key, display name), the variants, the dataset of the title
        figure=lambda wc: PERTURBATIONS.transition_figure(wc.model, wc.dataset).param(),
    script:
        "../../scripts/perturbations/transition_figure.py"


rule perturbation_insertion_figure:
    input:
        distributions=path("perturbation_distributions"),
    output:
        png=report(
            path("perturbation_insertion_figure", ext="png"),
            category="Perturbations (When LLM Judges Inflate Scores, section 3)",
            subcategory="{dataset}",
            caption="../../report/perturbations/insertions.rst",
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
        # the variants, the judges' display names, the dataset of the title
        figure=lambda wc: PERTURBATIONS.insertion_figure(wc.dataset).param(),
    script:
        "../../scripts/perturbations/insertion_figure.py"


rule perturbation_pooled_transition_figure:
    input:
        transitions=path("perturbation_pooled_transitions"),
    output:
        png=report(
            path("perturbation_pooled_transition_figure", ext="png"),
            category="Perturbations (When LLM Judges Inflate Scores, section 3)",
            subcategory="pooled",
            caption="../../report/perturbations/pooled_transitions.rst",
            labels={"figure": "Fig. 1 - transitions", "dataset": "pooled", "judge": "{model}"},
        ),
        pdf=path("perturbation_pooled_transition_figure", ext="pdf"),
    log:
        PROJECT.log("perturbations-pooled/figures/transitions/{model}"),
    wildcard_constraints:
        model=PERTURBATION_JUDGES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the judge, the variants, the datasets pooled (the title)
        figure=lambda wc: PERTURBATIONS.transition_figure(wc.model).param(),
    script:
        "../../scripts/perturbations/transition_figure.py"


rule perturbation_pooled_insertion_figure:
    input:
        distributions=path("perturbation_pooled_distributions"),
    output:
        png=report(
            path("perturbation_pooled_insertion_figure", ext="png"),
            category="Perturbations (When LLM Judges Inflate Scores, section 3)",
            subcategory="pooled",
            caption="../../report/perturbations/pooled_insertions.rst",
            labels={"figure": "Fig. 3 - insertions", "dataset": "pooled"},
        ),
        pdf=path("perturbation_pooled_insertion_figure", ext="pdf"),
    log:
        PROJECT.log("perturbations-pooled/figures/insertions"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the variants, the judges' display names, the datasets pooled (the title)
        figure=lambda wc: PERTURBATIONS.insertion_figure().param(),
    script:
        "../../scripts/perturbations/insertion_figure.py"
