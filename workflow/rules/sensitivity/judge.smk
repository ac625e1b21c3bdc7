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


# Live pairwise judging: the pairs of a dataset (the authors' pair list where a published dataset
# maps to it, else formed from its grade groups, seeded), each asked in both orders with one
# prompt's pairwise template.
if SENSITIVITY.pairwise_datasets():

    # a table from a table: on the submitting host on a cluster
    localrules:
        sensitivity_pairs,

    rule sensitivity_pairs:
        input:
            pairs=path("dataset"),
            listed=lambda wc: SENSITIVITY.pair_list_input(wc.dataset),
        output:
            compared=path("sensitivity_pairs"),
        log:
            PROJECT.log("sensitivity/pairs/{dataset}"),
        wildcard_constraints:
            dataset=names_re(SENSITIVITY.pairwise_datasets()),
        conda:
            "../../../envs/judgelab.yaml"
        params:
            sampling=SENSITIVITY.pair_sampling().param(),
        script:
            "../../scripts/sensitivity/pairs.py"

    rule sensitivity_pairwise:
        input:
            pairs=path("dataset"),
            compared=path("sensitivity_pairs"),
        output:
            judgments=path("sensitivity_judgments"),
        log:
            PROJECT.log("sensitivity/judge/{dataset}/{model}/{prompt}/{type}"),
        wildcard_constraints:
            dataset=names_re(SENSITIVITY.pairwise_datasets()),
            model=names_re(SENSITIVITY.judges),
            prompt=names_re(SENSITIVITY.prompts),
            type="pairwise",
        conda:
            "../../../envs/judgelab.yaml"
        threads: model_threads()
        resources:
            **model_job(60),
        params:
            # the judge whole, its prompt's pairwise text in it (editing it reruns exactly its jobs)
            judge=lambda wc: SENSITIVITY.judge(wc.model, wc.prompt, wc.type).param(),
        script:
            "../../scripts/sensitivity/pairwise.py"
