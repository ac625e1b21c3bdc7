# Live judges: every pair of a dataset judged by a configured model with one prompt's template of
# one type (sensitivity.prompts), through the backend and the request cache.


rule sensitivity_judge:
    input:
        pairs=path("dataset"),
    output:
        judgments=path("sensitivity_judgments"),
    log:
        PROJECT.log("sensitivity/judge/{dataset}/{model}/{prompt}/{type}"),
    wildcard_constraints:
        dataset=names_re(SENSITIVITY.datasets),
        model=names_re(SENSITIVITY.judges),
        prompt=names_re(SENSITIVITY.prompts),
        type="binary|graded",
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(60),
    params:
        # the judge whole, its prompt's text in it: editing one prompt reruns exactly its jobs (a
        # function: a plain string param would have its {placeholders} taken for wildcards)
        judge=lambda wc: SENSITIVITY.judge(wc.model, wc.prompt, wc.type).param(),
    script:
        "../../scripts/sensitivity/judge.py"
