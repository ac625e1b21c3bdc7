# Overrating stage 2 - pairwise judging: per dataset, seeded samples of Best-Acceptable,
# Acceptable-Unacceptable and Best-Unacceptable pairs per query; per dataset x live judge, every
# pair judged in both orders with a forced choice (the choice token's distribution read where it
# is generated); then outcomes (correct, tie, wrong win, missing) and rates per setting and overall.


rule overrating_pairs:
    input:
        pairs=path("dataset"),
    output:
        sampled=path("overrating_pairs"),
    log:
        PROJECT.log("overrating/pairs/{dataset}"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        sampling=lambda wc: OVERRATING.sampling.param(),
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
        # the judge whole: model entry, the forced-choice template and labels, bound, coverage floor
        judge=lambda wc: OVERRATING.pairwise_judge(wc.model).param(),
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
