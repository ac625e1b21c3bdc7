# Ranking stage 3 - scores: one job per dataset, every run under every qrels of the dataset
# (ir-measures, trec_eval's conventions; per topic and the mean, with judged@k): `human` (the
# dataset table's grades), each judge's labels, and `human+<judge>` (unjudged: fill). Each run's
# scores under each qrels are kept by content digest in {results}/ranking/{dataset}/scores/cache/
# (judgelab.studies.ranking.scorecache), so a new run is the only one scored (with a live judge,
# whose pool labels change with it, every run is scored again under that judge's labels) and a
# new judge's qrels scores every run under it alone.


rule ranking_score:
    input:
        unpack(lambda wc: RANKING.score_inputs(wc.dataset)),
    output:
        scores=path("ranking_scores"),
    log:
        PROJECT.log("ranking/{dataset}/scores"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # every qrels (name, kind, judge), the judges of the label files, the measures, the runs
        scoring=lambda wc: RANKING.scoring(wc.dataset).param(),
        # the scores kept by content digest (a folder that outlives the job, not an output)
        cache=lambda wc: RANKING.score_cache(wc.dataset),
    script:
        "../../scripts/ranking/score.py"
