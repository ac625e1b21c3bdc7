# Ranking stage 3 - scores: one job per dataset x qrels x run (ir-measures, trec_eval's
# conventions; per topic and the mean, with judged@k). The qrels: `human` (the dataset table's
# grades), a judge's labels, or `human+<judge>` (unjudged: fill). Adding a run adds only its own
# score jobs under the human qrels and imported judges (a live judge's pool labels change with it).


rule ranking_score:
    input:
        unpack(lambda wc: RANKING.score_inputs(wc.dataset, wc.qrels, wc.run)),
    output:
        scores=path("ranking_run_scores"),
    log:
        PROJECT.log("ranking/{dataset}/scores/{qrels}/{run}"),
    wildcard_constraints:
        qrels=RANKING_QRELS_RE,
        run="[^/]+",
    conda:
        "../../../envs/judgelab.yaml"
    params:
        kind=lambda wc: RANKING.qrels_kind(wc.qrels)[0],
        measures=json.dumps(RANKING.measures),
    script:
        "../../scripts/ranking_score.py"
