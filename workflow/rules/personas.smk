# Stage 2 - persona instructions: the two-step generation of seed 000 section 4.1, and the table
# of the persona texts a run uses.


rule generate_persona:
    output:
        persona=f"{RESULTS}/personas/generated/{{model}}/{{persona}}.json",
    params:
        personality_type=lambda wc: PERSONAS[wc.persona].personality_type,
        keywords_template=lambda wc: load_template(GEN["keywords_template"]),
        instruction_template=lambda wc: load_template(GEN["instruction_template"]),
        model=model_param,
        max_tokens=GEN["max_tokens"],
        cache=config["cache"],
    threads: model_threads
    log:
        f"{RESULTS}/logs/personas/{{model}}/{{persona}}.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/generate_persona.py"


rule persona_table:
    input:
        generated=generated_persona_files,
    output:
        table=f"{RESULTS}/personas/personas.tsv",
    params:
        personas=lambda wc: json.dumps([vars(p) for p in PERSONAS.values()], ensure_ascii=False),
        source=config["personas"]["source"],
    log:
        f"{RESULTS}/logs/personas/table.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/persona_table.py"
