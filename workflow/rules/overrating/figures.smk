# Overrating stage 4 - figures (PNG in the report, and PDF): the human -> judge transition matrix
# of every pointwise run, the pairwise rates by setting of every dataset x judge, and the token
# confidence by TP / FP / TN / FN of every dataset x judge (its scales side by side).


rule overrating_transition_figure:
    input:
        transition=path("overrating_transition"),
    output:
        png=ovr_figure(
            "overrating_transition_figure",
            "transition",
            "Overrating - transition matrices",
            "scale",
        ),
        pdf=path("overrating_transition_figure", ext="pdf"),
    log:
        PROJECT.log("overrating/figures/transition/{dataset}/{model}/{scale}"),
    wildcard_constraints:
        scale=OVR_ALL_SCALES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        title=lambda wc: OVERRATING.figure_title("transition", wc.dataset, wc.model, wc.scale),
    script:
        "../../scripts/overrating/transition_figure.py"


rule overrating_pairwise_figure:
    input:
        metrics=path("overrating_pairwise_metrics"),
    output:
        png=ovr_figure("overrating_pairwise_figure", "pairwise", "Overrating - pairwise rates"),
        pdf=path("overrating_pairwise_figure", ext="pdf"),
    log:
        PROJECT.log("overrating/figures/pairwise/{dataset}/{model}"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        title=lambda wc: OVERRATING.figure_title("pairwise", wc.dataset, wc.model),
    script:
        "../../scripts/overrating/pairwise_figure.py"


rule overrating_confidence_figure:
    input:
        metrics=lambda wc: [
            path("overrating_pointwise_metrics", dataset=wc.dataset, model=wc.model, scale=s)
            for s in OVERRATING.scales_of(wc.dataset, wc.model)
        ],
    output:
        png=ovr_figure("overrating_confidence_figure", "confidence", "Overrating - confidence by outcome"),
        pdf=path("overrating_confidence_figure", ext="pdf"),
    log:
        PROJECT.log("overrating/figures/confidence/{dataset}/{model}"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        title=lambda wc: OVERRATING.figure_title("confidence", wc.dataset, wc.model),
        confidence=OVERRATING.confidence,
    script:
        "../../scripts/overrating/confidence_figure.py"
