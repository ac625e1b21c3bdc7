# Imported judges: labels (and optional confidences) from TREC-qrels-format files, written as the
# judgment and confidence tables of a pseudo model named after the judge, so the metrics,
# significance, figure and classifier stages use them exactly like a live judge.


rule import_judge:
    input:
        pairs=f"{RESULTS}/datasets/{{dataset}}.tsv",
        judge=imported_file,
    output:
        judgments=job_path("judgments"),
        confidence=job_path("confidence"),
    wildcard_constraints:
        model=IMPORTED_MODEL_RE,
    log:
        f"{RESULTS}/logs/import/{{dataset}}/{{model}}/{{template}}/{{persona}}.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/import_judge.py"


# an imported judge's tables come from its file, never from a model run
ruleorder: import_judge > judge
ruleorder: import_judge > confidence
