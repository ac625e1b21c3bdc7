# PERAS stage 8 - classifiers (PERAS Experiment 2, RQ3): on the held-out dataset, the persona
# labels + confidences of one model x template are features for RF, XGBoost, LightGBM and ordinal
# logistic regression (and RF without confidences) over seeded stratified 10%/90% splits, beside
# the Oracle (best single persona per metric); then the Table 5 shaped table over all judges.


rule peras_classifier:
    input:
        pairs=path("dataset"),
        judgments=classifier_files("judgments"),
        confidence=classifier_files("confidence"),
    output:
        features=path("classifier", kind="features"),
        missing=path("classifier", kind="missing"),
        trials=path("classifier", kind="trials"),
        summary=path("classifier", kind="summary"),
    log:
        PROJECT.log("peras/classifier/{dataset}/{model}/{template}"),
    conda:
        "../../../envs/judgelab.yaml"
    threads: 1
    resources:
        **cpu_job(120, 8000),
    params:
        group=classifier_group_param,
        settings=PERAS.classifier_settings().param(),
    script:
        "../../scripts/peras/classifier.py"


rule peras_classifier_table:
    input:
        summaries=expand_groups("classifier", PERAS.classifier_groups(), kind="summary"),
    output:
        tsv=report(
            path("classifier_table", ext="tsv"),
            category="Tables",
            caption="../../report/peras/classifier_tsv.rst",
        ),
        md=path("classifier_table", ext="md"),
        tex=path("classifier_table", ext="tex"),
        html=report(
            path("classifier_table", ext="html"),
            category="Tables",
            caption="../../report/peras/classifier.rst",
        ),
    log:
        PROJECT.log("peras/classifier/table"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        ids=[{"dataset": d, "model": m, "template": t} for d, m, t in PERAS.classifier_groups()],
    script:
        "../../scripts/peras/classifier_table.py"
