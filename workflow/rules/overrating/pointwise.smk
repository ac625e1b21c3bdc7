# Overrating stage 1 - pointwise judging: one job per dataset x live judge x scale (binary 0/1,
# graded 0-3), UMBRELA-style templates; the label distribution is read at the label token. An
# imported judge's qrels file becomes the same table with no LLM call (its declared scale).
# Then the metrics of every run: overrate %, underrate %, mean bias, kappa (native and binarised),
# confidence by TP/FP/TN/FN, and the human -> judge transition matrix.


rule overrating_pointwise:
    input:
        pairs=path("dataset"),
    output:
        judgments=path("overrating_pointwise"),
    log:
        PROJECT.log("overrating/pointwise/{dataset}/{model}/{scale}"),
    wildcard_constraints:
        model=OVR_LIVE_RE,
        scale=OVR_SCALES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(720),
    params:
        # the judge whole: model entry, the scale's template and labels, bound, coverage floor
        judge=lambda wc: OVERRATING.pointwise_judge(wc.model, wc.scale).param(),
    script:
        "../../scripts/overrating/pointwise.py"


rule overrating_import:
    input:
        unpack(lambda wc: PROJECT.source_inputs(wc.dataset)),
        pairs=path("dataset"),
        judge_file=lambda wc: OVERRATING.imported_file(wc.model, wc.dataset),
    output:
        judgments=path("overrating_pointwise"),
        summary=path("overrating_import_summary"),
    log:
        PROJECT.log("overrating/import/{dataset}/{model}/{scale}"),
    wildcard_constraints:
        model=OVR_IMPORTED_RE,
        scale=OVR_ALL_SCALES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the declared scales (null = not declared: 0/1 labels and 0-1 confidences are never
        # guessed) and the raw files' encoding
        reading=lambda wc: OVERRATING.import_reading(wc.model, wc.dataset, wc.scale).param(),
        bundled=lambda wc: PROJECT.source_bundled(wc.dataset),
    script:
        "../../scripts/overrating/import.py"


rule overrating_pointwise_metrics:
    input:
        pairs=path("dataset"),
        judgments=path("overrating_pointwise"),
    output:
        metrics=path("overrating_pointwise_metrics"),
        transition=path("overrating_transition"),
    log:
        PROJECT.log("overrating/metrics/pointwise/{dataset}/{model}/{scale}"),
    wildcard_constraints:
        scale=OVR_ALL_SCALES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/overrating/pointwise_metrics.py"
