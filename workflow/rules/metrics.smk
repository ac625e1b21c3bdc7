# Stage 7 - metrics: agreement (kappa, QWK, macro F1), calibration (RO, RU, HMR) and parse
# coverage of every persona's job, one table per dataset x model x template, then one tidy table.


rule group_metrics:
    input:
        pairs=f"{RESULTS}/datasets/{{dataset}}.tsv",
        judgments=group_files("judgments"),
        confidence=group_files("confidence"),
    output:
        metrics=group_path("metrics/groups"),
    params:
        personas=group_personas,
    log:
        f"{RESULTS}/logs/metrics/{{dataset}}/{{model}}/{{template}}.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/group_metrics.py"


rule aggregate_metrics:
    input:
        expand_groups(group_path("metrics/groups"), GROUPS),
    output:
        table=f"{RESULTS}/metrics/metrics.tsv",
    log:
        f"{RESULTS}/logs/metrics/aggregate.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/aggregate_metrics.py"
