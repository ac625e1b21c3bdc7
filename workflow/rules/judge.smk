# Stage 3 - judgment: one job per dataset x model x template x persona.


rule judge:
    input:
        pairs=f"{RESULTS}/datasets/{{dataset}}.tsv",
        persona=persona_input,
    output:
        judgments=job_path("judgments"),
    params:
        persona=persona_param,
        template=lambda wc: TEMPLATE_TEXT[wc.template],
        max_tokens=lambda wc: config["templates"][wc.template]["max_tokens"],
        placement=config["personas"]["placement"],
        model=model_param,
        cache=config["cache"],
    threads: model_threads
    log:
        f"{RESULTS}/logs/judge/{{dataset}}/{{model}}/{{template}}/{{persona}}.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/judge.py"
