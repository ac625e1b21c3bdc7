# Shared stage - persona instructions: the two-step generation of PERAS section 4.1, and the
# table of the persona texts a run uses.


localrules:
    persona_table,


rule generate_persona:
    output:
        persona=path("generated_persona"),
    log:
        PROJECT.log("personas/{model}/{persona}"),
    conda:
        "../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(30),
    params:
        generation=lambda wc: PROJECT.persona_generation(wc.model, wc.persona).param(),
    script:
        "../scripts/generate_persona.py"


rule persona_table:
    input:
        generated=PROJECT.generated_files(),
    output:
        table=path("persona_table"),
    log:
        PROJECT.log("personas/table"),
    conda:
        "../../envs/judgelab.yaml"
    params:
        personas=json.dumps(PROJECT.persona_rows(), ensure_ascii=False),
    script:
        "../scripts/persona_table.py"
