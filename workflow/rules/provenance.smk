# Shared stage - who answered: one table per study of every model-calling job's served models,
# fingerprints, finish reasons, truncations, reading rules and decoding parameters, read from the
# answer table each job wrote (judgelab.project.provenance).


localrules:
    provenance,


def provenance_tables(wildcards):
    """The answer table (first output) of every model-calling job of the study, in plan order."""
    return [
        expand(getattr(rules, job.rule).output[0], **{k: [v] for k, v in job.wildcards})[0]
        for job in PROJECT.provenance_jobs(wildcards.study)
    ]


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
        settings=lambda wc: PROJECT.provenance_settings(wc.study).param(),
    script:
        "../scripts/provenance.py"
