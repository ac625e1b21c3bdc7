# PERAS stage 10 - figures per dataset x model x template (PNG and PDF): radar charts of the
# agreement (Fig. 4) and calibration (Fig. 5) metrics over the personas with significance marks,
# the inter-persona kappa heatmap (Fig. 2) and the confidence of label-k predictions by human
# grade (Fig. 3). Undefined metrics (NaN) are drawn as gaps marked n/a.


rule peras_figures:
    input:
        pairs=path("dataset"),
        judgments=group_files("judgments"),
        confidence=group_files("confidence"),
        metrics=path("group_metrics"),
        significance=figure_significance,
    output:
        radar_agreement=figure_report("radar_agreement", "Fig. 4 - agreement radar", "radar_agreement"),
        radar_agreement_pdf=figure("radar_agreement", "pdf"),
        radar_calibration=figure_report(
            "radar_calibration", "Fig. 5 - calibration radar", "radar_calibration"
        ),
        radar_calibration_pdf=figure("radar_calibration", "pdf"),
        heatmap=figure_report("interpersona_kappa", "Fig. 2 - inter-persona kappa", "heatmap"),
        heatmap_pdf=figure("interpersona_kappa", "pdf"),
        confidence=figure_report("confidence_by_grade", "Fig. 3 - confidence by grade", "confidence_by_grade"),
        confidence_pdf=figure("confidence_by_grade", "pdf"),
        interpersona=path("interpersona"),
        confidence_table=path("confidence_by_grade"),
    log:
        PROJECT.log("peras/figures/{dataset}/{model}/{template}"),
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    params:
        group=group_param,
        settings=PERAS.figure_settings().param(),
    script:
        "../../scripts/peras/figures.py"
