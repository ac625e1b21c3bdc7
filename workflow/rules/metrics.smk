# Stage 7 - metrics: agreement (kappa, QWK, macro F1), calibration (RO, RU, HMR) and parse
# coverage per job, then one tidy table.


rule job_metrics:
    input:
        pairs=f"{RESULTS}/datasets/{{dataset}}.tsv",
        judgments=job_path("judgments"),
        confidence=job_path("confidence"),
    output:
        metrics=job_path("metrics/jobs"),
    log:
        f"{RESULTS}/logs/metrics/{{dataset}}/{{model}}/{{template}}/{{persona}}.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/job_metrics.py"


rule aggregate_metrics:
    input:
        job_targets("metrics/jobs"),
    output:
        table=f"{RESULTS}/metrics/metrics.tsv",
    log:
        f"{RESULTS}/logs/metrics/aggregate.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/aggregate_metrics.py"
