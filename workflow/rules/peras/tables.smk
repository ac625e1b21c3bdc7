# PERAS stage 9 - the paper's tables besides Table 5: Table 4 (topics, pairs and pairs per grade of
# every dataset judged, with the topic ids in the tsv) and Tables 7 and 8 (agreement and
# calibration of every model x persona in the paper's wide layout, beside the long metrics.tsv),
# each as tsv, md, tex and html (the html in the report).


rule peras_table4:
    input:
        pairs=[path("dataset", dataset=d) for d in PERAS.datasets],
    output:
        **peras_table("table4", "table4"),
    log:
        PROJECT.log("peras/metrics/table4"),
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/peras/table4.py"


rule peras_wide_tables:
    input:
        metrics=path("metrics"),
    output:
        **{f"table7_{k}": v for k, v in peras_table("table7", "table7").items()},
        **{f"table8_{k}": v for k, v in peras_table("table8", "table8").items()},
    log:
        PROJECT.log("peras/metrics/tables"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        reference=PERAS.reference,
        support=PERAS.section["support"],
    script:
        "../../scripts/peras/tables.py"
