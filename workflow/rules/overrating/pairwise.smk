# Overrating stage 2 - pairwise judging: per dataset, seeded samples of Best-Acceptable,
# Acceptable-Unacceptable and Best-Unacceptable pairs per query; per dataset x live judge, every
# pair judged in both orders with a forced choice (the choice token's distribution read where it
# is generated); then outcomes (correct, tie, wrong win, missing) and rates per setting and overall.


rule overrating_pairs:
    input:
        pairs=path("dataset"),
    output:
        pairs=path("overrating_pairs"),
    log:
        PROJECT.log("overrating/pairs/{dataset}"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        sampling=json.dumps(OVERRATING.sampling, sort_keys=True),
    script:
        "../../scripts/overrating/pairs.py"


rule overrating_pairwise:
    input:
        pairs=path("dataset"),
        sampled=path("overrating_pairs"),
    output:
        judgments=path("overrating_pairwise"),
    log:
        PROJECT.log("overrating/pairwise/{dataset}/{model}"),
    wildcard_constraints:
        model=OVR_LIVE_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(720),
    params:
        template=lambda wc: OVERRATING.pairwise_prompt.template,
        labels=lambda wc: json.dumps(list(OVERRATING.pairwise_prompt.labels)),
        max_tokens=OVERRATING.pairwise["max_tokens"],
        coverage=lambda wc: OVERRATING.coverage("pairwise").param(),
        model=model_param,
    script:
        "../../scripts/overrating/pairwise.py"


rule overrating_pairwise_metrics:
    input:
        judgments=path("overrating_pairwise"),
    output:
        metrics=path("overrating_pairwise_metrics"),
        outcomes=path("overrating_outcomes"),
    log:
        PROJECT.log("overrating/metrics/pairwise/{dataset}/{model}"),
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/overrating/pairwise_metrics.py"
