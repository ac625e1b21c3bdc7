# Imported judges: labels (and optional confidences) from TREC-qrels-format files, written as the
# judgment and confidence tables of a pseudo model named after the judge, so the metrics,
# significance, figure and classifier stages use them exactly like a live judge. The wildcard
# constraints keep them apart from the peras_judge and peras_confidence rules. The dataset's raw
# qrels and topics tell a labelled pair outside the selection (skipped, counted in the import's
# table) from one the dataset does not have (an error naming the file and line).


rule peras_import_judge:
    input:
        unpack(lambda wc: PROJECT.source_inputs(wc.dataset)),
        pairs=path("dataset"),
        judge_file=lambda wc: PROJECT.imported_file(wc.model, wc.dataset, wc.template, wc.persona),
    output:
        judgments=path("judgments"),
        confidence=path("confidence"),
        summary=path("import_summary"),
    log:
        PROJECT.log("peras/import/{dataset}/{model}/{template}/{persona}"),
    wildcard_constraints:
        model=IMPORTED_JUDGES_RE,
        persona=IMPORTED_PERSONAS_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the declared scales ("" = not declared): 0/1 labels and 0-1 confidences are never guessed
        reading=lambda wc: PROJECT.import_reading(wc.model, wc.dataset).param(),
        bundled=lambda wc: PROJECT.source_bundled(wc.dataset),
    script:
        "../../scripts/peras/import_judge.py"
