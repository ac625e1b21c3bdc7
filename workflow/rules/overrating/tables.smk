# Overrating stage 3 - tables shaped like Tables 1 (pointwise, every dataset x judge) and 2
# (pairwise, all settings pooled, and per setting) of "When LLM Judges Inflate Scores", as tsv, md,
# tex and html (in the report): the paper's columns first (Avg Confidence of
# `overrating.confidence`), the extra columns after, the judges by their display names; and the
# calibration diagnostics of every pointwise run (ECE, Brier, reliability diagrams), one job.


rule overrating_table1:
    input:
        metrics=[
            path("overrating_pointwise_metrics", dataset=d, model=m, scale=s)
            for d, m, s in OVERRATING.pointwise_cells
        ],
    output:
        **ovr_table("table1", "table1"),
        metrics=path("overrating_all_metrics", kind="pointwise"),
    log:
        PROJECT.log("overrating/tables/table1"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the Avg Confidence definition and the judges' display names
        settings=lambda wc: OVERRATING.table_settings().param(),
    script:
        "../../scripts/overrating/table1.py"


rule overrating_table2:
    input:
        metrics=[
            path("overrating_pairwise_metrics", dataset=d, model=m) for d, m in OVERRATING.pairwise_cells
        ],
    output:
        **ovr_table("table2", "table2"),
        **{f"by_setting_{k}": v for k, v in ovr_table("table2_by_setting", "table2").items()},
        metrics=path("overrating_all_metrics", kind="pairwise"),
    log:
        PROJECT.log("overrating/tables/table2"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the Avg Confidence definition and the judges' display names
        settings=lambda wc: OVERRATING.table_settings().param(),
    script:
        "../../scripts/overrating/table2.py"


# Calibration of every pointwise run (no model call): the label distribution as P(relevant) and
# the token confidence (`overrating.confidence`) as P(label correct), ECE (equal-width and
# equal-mass bins), Brier and the reliability diagrams, one table and one figure for the study.
rule overrating_calibration:
    input:
        pairs=[
            path("dataset", dataset=d)
            for d in dict.fromkeys(c["dataset"] for c in OVERRATING.calibration_cells())
        ],
        judgments=OVERRATING.calibration_files(),
    output:
        calibration=ovr_report(
            path("overrating_calibration"),
            "calibration",
            "Overrating (When LLM Judges Inflate Scores, section 2)",
        ),
        reliability=path("overrating_reliability"),
        png=ovr_report(
            path("overrating_reliability_figure", ext="png"), "reliability", "Overrating - reliability"
        ),
        pdf=path("overrating_reliability_figure", ext="pdf"),
    log:
        PROJECT.log("overrating/tables/calibration"),
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    params:
        # the runs of the inputs, in order, the token-confidence definition and the ECE bins
        cells=OVERRATING.calibration_cells(),
        confidence=OVERRATING.confidence,
        settings=PROJECT.calibration().param(),
    script:
        "../../scripts/overrating/calibration.py"
