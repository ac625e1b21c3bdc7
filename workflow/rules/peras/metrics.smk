# PERAS stage 7 - metrics: agreement (kappa, QWK, macro F1), calibration (RO, RU, HMR) and parse
# coverage of every persona's job, one table per dataset x model x template (with peras.repeats
# above 1, also of each repeated judge's majority of k, <judge>+majority@<k>), then one tidy table;
# and the calibration diagnostics of every job (ECE, Brier, reliability diagrams), one job.


rule peras_group_metrics:
    input:
        pairs=path("dataset"),
        # a majority judge's (peras.repeats above 1): its majority tables, no confidence
        judgments=metric_files("judgments"),
        confidence=metric_files("confidence"),
    output:
        metrics=path("group_metrics"),
    log:
        PROJECT.log("peras/metrics/{dataset}/{model}/{template}"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        group=group_param,
    script:
        "../../scripts/peras/group_metrics.py"


rule peras_aggregate_metrics:
    input:
        tables=expand_groups("group_metrics", PERAS.metric_groups),
    output:
        table=path("metrics"),
    log:
        PROJECT.log("peras/metrics/aggregate"),
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/peras/aggregate_metrics.py"


# Calibration of every judge job (no model call): the label-token distribution as P(relevant)
# and the verbal confidence as P(label = grade), ECE (equal-width and equal-mass bins), Brier and
# the reliability diagrams, one table and one figure for the study.
rule peras_calibration:
    input:
        pairs=[path("dataset", dataset=d) for d in PERAS.datasets],
        judgments=PERAS.calibration_files("judgments"),
        confidence=PERAS.calibration_files("confidence"),
    output:
        calibration=report(
            path("peras_calibration"), caption="../../report/peras/calibration.rst", category="Tables"
        ),
        reliability=path("peras_reliability"),
        png=report(
            path("peras_reliability_figure", ext="png"),
            caption="../../report/peras/reliability.rst",
            category="Reliability diagrams",
        ),
        pdf=path("peras_reliability_figure", ext="pdf"),
    log:
        PROJECT.log("peras/metrics/calibration"),
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    params:
        # the judge jobs of the inputs, in order, and the ECE bins (`calibration.bins`)
        cells=PERAS.calibration_cells(),
        settings=PROJECT.calibration().param(),
    script:
        "../../scripts/peras/calibration.py"
