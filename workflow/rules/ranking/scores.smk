# Ranking stage 3 - scores: one job per dataset x run, under every qrels of the dataset
# (ir-measures, trec_eval's conventions; per topic and the mean, with judged@k): `human` (the
# dataset table's grades), each judge's labels, and `human+<judge>` (unjudged: fill). A new run
# adds only its own job (with a live judge, whose pool labels change with it, every run's job
# reruns).


rule ranking_score:
    input:
        unpack(lambda wc: RANKING.score_inputs(wc.dataset, wc.run)),
    output:
        scores=path("ranking_run_scores"),
    log:
        PROJECT.log("ranking/{dataset}/scores/{run}"),
    wildcard_constraints:
        run="[^/]+",
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # every qrels (name, kind, judge), the judges of the label files, the measures
        scoring=lambda wc: RANKING.scoring(wc.dataset).param(),
    script:
        "../../scripts/ranking/score.py"
