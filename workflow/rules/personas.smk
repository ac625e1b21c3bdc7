# Shared stage - persona instructions: the two-step generation of seed 000 section 4.1, and the
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
        personality_type=lambda wc: PROJECT.personas[wc.persona].personality_type,
        keywords_template=lambda wc: PROJECT.load_template(PROJECT.generation["keywords_template"]),
        instruction_template=lambda wc: PROJECT.load_template(PROJECT.generation["instruction_template"]),
        model=model_param,
        max_tokens=PROJECT.generation["max_tokens"],
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
