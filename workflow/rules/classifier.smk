# Stage 8 - classifiers (seed 000 Experiment 2, RQ3): on the held-out dataset, the 11 persona labels
# + 11 confidences of one model x template are features for RF, XGBoost, LightGBM and ordinal
# logistic regression (and RF without confidences) over seeded stratified 10%/90% splits, beside
# the Oracle (best single persona per metric); then the Table 5 shaped table over all judges.


rule classifier:
    input:
        pairs=f"{RESULTS}/datasets/{{dataset}}.tsv",
        judgments=group_files("judgments"),
        confidence=group_files("confidence"),
    output:
        features=f"{RESULTS}/classifier/{{dataset}}/{{model}}/{{template}}/features.tsv",
        missing=f"{RESULTS}/classifier/{{dataset}}/{{model}}/{{template}}/missing.tsv",
        trials=f"{RESULTS}/classifier/{{dataset}}/{{model}}/{{template}}/trials.tsv",
        summary=f"{RESULTS}/classifier/{{dataset}}/{{model}}/{{template}}/summary.tsv",
    params:
        personas=group_personas,
        settings=classifier_settings(),
    threads: 1
    log:
        f"{RESULTS}/logs/classifier/{{dataset}}/{{model}}/{{template}}.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/classifier.py"


rule classifier_table:
    input:
        summaries=expand_groups(f"{RESULTS}/classifier/{{dataset}}/{{model}}/{{template}}/summary.tsv",
                                classifier_groups()),
    output:
        tsv=report(f"{RESULTS}/classifier/table5.tsv", category="Tables",
                   caption="../report/classifier_tsv.rst"),
        md=f"{RESULTS}/classifier/table5.md",
        tex=f"{RESULTS}/classifier/table5.tex",
        html=report(f"{RESULTS}/classifier/table5.html", category="Tables",
                    caption="../report/classifier.rst"),
    params:
        ids=[{"dataset": d, "model": m, "template": t} for d, m, t in classifier_groups()],
    log:
        f"{RESULTS}/logs/classifier/table.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/classifier_table.py"
