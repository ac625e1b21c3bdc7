# Stage 10 - figures of seed 000 per dataset x model x template (PNG and PDF): radar charts of the
# agreement (Fig. 4) and calibration (Fig. 5) metrics over the personas with significance marks,
# the inter-persona kappa heatmap (Fig. 2) and the confidence of label-0 predictions by human
# grade (Fig. 3). Undefined metrics (NaN) are drawn as gaps marked n/a.


rule figures:
    input:
        pairs=f"{RESULTS}/datasets/{{dataset}}.tsv",
        judgments=group_files("judgments"),
        confidence=group_files("confidence"),
        metrics=group_path("metrics/groups"),
        significance=figure_significance,
    output:
        radar_agreement=figure_report("radar_agreement", "Fig. 4 - agreement radar", "radar_agreement"),
        radar_agreement_pdf=figure_path("radar_agreement", "pdf"),
        radar_calibration=figure_report("radar_calibration", "Fig. 5 - calibration radar",
                                        "radar_calibration"),
        radar_calibration_pdf=figure_path("radar_calibration", "pdf"),
        heatmap=figure_report("interpersona_kappa", "Fig. 2 - inter-persona kappa", "heatmap"),
        heatmap_pdf=figure_path("interpersona_kappa", "pdf"),
        confidence=figure_report("confidence_by_grade", "Fig. 3 - confidence by grade",
                                 "confidence_by_grade"),
        confidence_pdf=figure_path("confidence_by_grade", "pdf"),
        interpersona=group_path("metrics/interpersona"),
        confidence_table=group_path("metrics/confidence_by_grade"),
    params:
        personas=group_personas,
        settings=json.dumps({"reference": REFERENCE,
                             "confidence_personas": FIG.get("confidence_personas", ["HN", "LC"]),
                             "confidence_label": FIG.get("confidence_label", 0)}, sort_keys=True),
    log:
        f"{RESULTS}/logs/figures/{{dataset}}/{{model}}/{{template}}.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/figures.py"
