# PERAS stage 7b - significance: every persona vs the reference persona, paired bootstrap over
# queries of delta kappa, QWK, macro F1 and HMR with percentile intervals and Holm-adjusted
# p-values (judgelab.studies.peras.significance), then one tidy table and the metrics table joined with it.


rule peras_significance:
    input:
        pairs=path("dataset"),
        judgments=group_files("judgments"),
        confidence=group_files("confidence"),
    output:
        table=path("group_significance"),
    log:
        PROJECT.log("peras/significance/{dataset}/{model}/{template}"),
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(60, 4000),
    params:
        group=group_param,
        settings=PERAS.significance_settings().param(),
    script:
        "../../scripts/peras/significance.py"


rule peras_aggregate_significance:
    input:
        tables=expand_groups("group_significance", PERAS.significance_groups()),
        metrics=path("metrics"),
    output:
        table=report(path("significance"), category="Tables", caption="../../report/peras/significance.rst"),
        joined=path("metrics_significance", ext="tsv"),
        html=report(
            path("metrics_significance", ext="html"),
            category="Tables",
            caption="../../report/peras/metrics.rst",
        ),
    log:
        PROJECT.log("peras/significance/aggregate"),
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/peras/aggregate_significance.py"
