# PERAS stage 7 - metrics: agreement (kappa, QWK, macro F1), calibration (RO, RU, HMR) and parse
# coverage of every persona's job, one table per dataset x model x template, then one tidy table.


rule group_metrics:
    input:
        pairs=path("dataset"),
        judgments=group_files("judgments"),
        confidence=group_files("confidence"),
    output:
        metrics=path("group_metrics"),
    log:
        PROJECT.log("metrics/{dataset}/{model}/{template}"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        group=group_param,
    script:
        "../../scripts/peras/group_metrics.py"


rule aggregate_metrics:
    input:
        tables=expand_groups("group_metrics", PERAS.groups),
    output:
        table=path("metrics"),
    log:
        PROJECT.log("metrics/aggregate"),
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/peras/aggregate_metrics.py"
