# Ranking stage 5 - the run built by the judge (circularity; config ranking.circularity): per
# dataset, one job re-ordering the base run's top `depth` per topic by each judge's labels (the
# pool's labels: no LLM call; with depth past pool_depth a live judge first labels the base run's
# top below the pool, ranking_circularity_judge), scoring those runs under every qrels (the scores cache of
# ranking_score) and ranking each among the dataset's runs in circularity.tsv (scores.tsv,
# correlations.tsv and the leaderboard leave them out); per dataset x judge x measure the score
# scatter with the judge-built run marked.


rule ranking_circularity_judge:
    input:
        pairs=path("dataset"),
        runs=ranking_runs,
        pool=path("ranking_labels"),
        scores=path("ranking_scores"),
        persona_file=lambda wc: PROJECT.persona_input(RANKING.persona),
    output:
        labels=path("ranking_circularity_labels"),
    log:
        PROJECT.log("ranking/{dataset}/circularity/judge/{model}"),
    wildcard_constraints:
        model=RANKING_LIVE_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(720),
    params:
        scoring=lambda wc: RANKING.scoring(wc.dataset).param(),
        circularity=lambda wc: RANKING.circularity(wc.dataset).param(),
        # the pool job's judge whole: the same requests (pairs it asked are cache hits)
        judge=lambda wc: RANKING.judge(wc.model).param(),
    script:
        "../../scripts/ranking/circularity_judge.py"


rule ranking_circularity:
    input:
        unpack(lambda wc: RANKING.score_inputs(wc.dataset)),
        scores=path("ranking_scores"),
        extra=lambda wc: RANKING.circularity_labels(wc.dataset),
    output:
        runs=directory(path("ranking_circularity_runs")),
        scores=path("ranking_circularity_scores"),
        tsv=ranking_report(path("ranking_circularity", ext="tsv"), "circularity"),
        md=path("ranking_circularity", ext="md"),
        html=path("ranking_circularity", ext="html"),
    log:
        PROJECT.log("ranking/{dataset}/circularity"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # every qrels, the judges of the label files, the measures, the runs (as ranking_score)
        scoring=lambda wc: RANKING.scoring(wc.dataset).param(),
        # the base run (empty: the best under the human qrels), the depth, each judge's reference
        circularity=lambda wc: RANKING.circularity(wc.dataset).param(),
        cache=lambda wc: RANKING.score_cache(wc.dataset),
    script:
        "../../scripts/ranking/circularity.py"


rule ranking_circularity_figure:
    input:
        scores=path("ranking_scores"),
        built=path("ranking_circularity_scores"),
        circularity=path("ranking_circularity", ext="tsv"),
    output:
        png=report(
            path("ranking_circularity_figure", ext="png"),
            caption="../../report/ranking/circularity_figure.rst",
            category="Ranking agreement - figures",
            subcategory="{dataset} / {judge}",
            labels={
                "dataset": "{dataset}",
                "judge": "{judge}",
                "measure": "{measure}",
                "figure": "circularity",
            },
        ),
        pdf=path("ranking_circularity_figure", ext="pdf"),
    log:
        PROJECT.log("ranking/{dataset}/circularity/figures/{judge}/{measure}"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        figure=lambda wc: RANKING.circularity_figure(wc.dataset, wc.judge, wc.measure).param(),
    script:
        "../../scripts/ranking/circularity_figure.py"
