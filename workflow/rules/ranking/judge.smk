# Ranking stage 2 - the pool's labels: per dataset x live judge, one job labelling the pool (every
# run's top `pool_depth` over the dataset's topics) where the passage text is known, with the PERAS
# template and persona (requests identical to the PERAS judge job's: pairs PERAS asked are cache
# hits; the job waits for that PERAS job when PERAS runs it). Per dataset x imported judge, its
# qrels file read against the dataset table (no LLM call).


rule ranking_judge:
    input:
        pairs=path("dataset"),
        runs=ranking_runs,
        persona=lambda wc: PROJECT.persona_input(RANKING.persona),
        peras=lambda wc: RANKING.peras_judgments(wc.dataset, wc.model),
    output:
        labels=path("ranking_labels"),
    log:
        PROJECT.log("ranking/{dataset}/judge/{model}"),
    wildcard_constraints:
        model=RANKING_LIVE_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(720),
    params:
        run_names=ranking_run_names,
        pool_depth=RANKING.pool_depth,
        persona=lambda wc: PROJECT.persona_param(RANKING.persona),
        template=lambda wc: RANKING.judge_template_text,
        labels=lambda wc: json.dumps(RANKING.judge_labels),
        max_tokens=lambda wc: RANKING.judge_max_tokens,
        placement=PROJECT.placement,
        model=model_param,
        answer=lambda wc: RANKING.judge_answer(wc.model),
        coverage=lambda wc: RANKING.coverage().param(),
    script:
        "../../scripts/ranking/judge.py"


rule ranking_import:
    input:
        pairs=path("dataset"),
        judge=lambda wc: RANKING.imported_file(wc.model, wc.dataset),
    output:
        labels=path("ranking_labels"),
    log:
        PROJECT.log("ranking/{dataset}/import/{model}"),
    wildcard_constraints:
        model=RANKING_IMPORTED_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the declared scales ("" = not declared): 0/1 labels and 0-1 confidences are never guessed
        scale=lambda wc: RANKING.imported_scale(wc.model)[0],
        confidence_scale=lambda wc: RANKING.imported_scale(wc.model)[1],
    script:
        "../../scripts/ranking/import.py"
