# Shared stage - who answered: one table per study of every model-calling job's served models,
# fingerprints, finish reasons, truncations, reading rules and decoding parameters, read from the
# answer table each job wrote (judgelab.project.provenance).


localrules:
    provenance,


rule provenance:
    input:
        tables=provenance_tables,
    output:
        provenance=path("provenance"),
    log:
        PROJECT.log("provenance/{study}"),
    conda:
        "../../envs/judgelab.yaml"
    params:
        settings=provenance_settings,
    script:
        "../scripts/provenance.py"
