# Stage 4 - confidence: seed 000's Table 6 instruction for every pair whose label parsed; its own
# stage, so editing the confidence prompt reruns only the confidence jobs (and metrics).


rule confidence:
    input:
        pairs=f"{RESULTS}/datasets/{{dataset}}.tsv",
        judgments=job_path("judgments"),
        persona=persona_input,
    output:
        confidence=job_path("confidence"),
    params:
        persona=persona_param,
        template=lambda wc: CONFIDENCE_TEXT,
        max_tokens=config["confidence"]["max_tokens"],
        placement=config["personas"]["placement"],
        model=model_param,
        cache=config["cache"],
    threads: model_threads
    log:
        f"{RESULTS}/logs/confidence/{{dataset}}/{{model}}/{{template}}/{{persona}}.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/confidence.py"
