# Ranking stage 4 - tables and figures: per dataset, pool.tsv (the pool with the human grade and
# every judge's label), correlations.tsv (per judge x measure: the ranking agreement and the
# label agreement on the pool) and bland_altman.tsv (the value agreement, per judge x measure x
# level) with a mean-difference figure per judge in bland_altman/; the leaderboard (LLMJudge Table 3) over
# every dataset and beside it the robustness table per judge (agreement, attack inflation from the
# perturbation study's attack tables, circularity rank gap); per dataset x judge x measure the score
# scatter and the rank-rank plot; the calibration of every judge's pool labels (ECE, Brier,
# reliability diagrams), one job.


rule ranking_correlations:
    input:
        pairs=path("dataset"),
        runs=ranking_runs,
        labels=lambda wc: [RANKING.labels_file(wc.dataset, j) for j in RANKING.judges_of(wc.dataset)],
        # persona committees' members under other personas (their cost is the committee's)
        member_labels=lambda wc: [
            RANKING.member_file(wc.dataset, m) for m, _, _ in RANKING.persona_members(wc.dataset)
        ],
        scores=path("ranking_scores"),
    output:
        correlations=ranking_report(path("ranking_correlations"), "correlations"),
        pool=path("ranking_pool"),
        bland_altman=ranking_report(path("ranking_bland_altman"), "bland_altman"),
        # every judge's mean-difference figure, <judge>.png and .pdf
        bland_altman_figures=report(
            directory(path("ranking_bland_altman_figures")),
            patterns=["{judge}.png"],
            caption="../../report/ranking/bland_altman_figure.rst",
            category="Ranking agreement - figures",
            subcategory="{dataset} / Bland-Altman",
            labels={"dataset": "{dataset}", "judge": "{judge}", "figure": "Bland-Altman"},
        ),
    log:
        PROJECT.log("ranking/{dataset}/correlations"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        pooling=lambda wc: RANKING.pooling(wc.dataset).param(),
        comparisons=lambda wc: RANKING.compared(wc.dataset).param(),
        settings=RANKING.correlation_settings().param(),
    script:
        "../../scripts/ranking/correlations.py"


# Self-consistency (peras.repeats above 1): per dataset, every run scored under each repeated live
# judge's k label tables and their majority; per judge x reference x measure each repeat's tau
# against the reference order, their spread and the majority's tau (judgelab.studies.ranking.repeats).
rule ranking_repeat_taus:
    input:
        pairs=path("dataset"),
        runs=ranking_runs,
        scores=path("ranking_scores"),
        repeats=lambda wc: RANKING.repeats_files(wc.dataset),
    output:
        tsv=ranking_report(path("ranking_repeat_taus", ext="tsv"), "repeat_taus"),
        md=path("ranking_repeat_taus", ext="md"),
    log:
        PROJECT.log("ranking/{dataset}/repeats"),
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    params:
        # the repeated judges (the order of `repeats`), their references, the measures, the runs, k
        settings=lambda wc: RANKING.repeat_taus(wc.dataset).param(),
    script:
        "../../scripts/ranking/repeat_taus.py"


rule ranking_leaderboard:
    input:
        correlations=[path("ranking_correlations", dataset=d) for d in RANKING.datasets],
    output:
        tsv=path("ranking_leaderboard", ext="tsv"),
        md=path("ranking_leaderboard", ext="md"),
        tex=path("ranking_leaderboard", ext="tex"),
        html=ranking_report(path("ranking_leaderboard", ext="html"), "leaderboard"),
    log:
        PROJECT.log("ranking/leaderboard"),
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/ranking/leaderboard.py"


rule ranking_robustness:
    input:
        unpack(lambda wc: RANKING.robustness_inputs()),
    output:
        tsv=path("ranking_robustness", ext="tsv"),
        md=path("ranking_robustness", ext="md"),
        html=ranking_report(path("ranking_robustness", ext="html"), "robustness"),
    log:
        PROJECT.log("ranking/robustness"),
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/ranking/robustness.py"


rule ranking_cost_figure:
    input:
        leaderboard=path("ranking_leaderboard", ext="tsv"),
    output:
        png=report(
            path("ranking_cost_figure", ext="png"),
            caption="../../report/ranking/cost.rst",
            category="Ranking agreement",
        ),
        pdf=path("ranking_cost_figure", ext="pdf"),
    log:
        PROJECT.log("ranking/cost_figure"),
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    script:
        "../../scripts/ranking/cost_figure.py"


rule ranking_figures:
    input:
        scores=path("ranking_scores"),
        correlations=path("ranking_correlations"),
    output:
        scores_png=ranking_figure("scores", "scores"),
        scores_pdf=path("ranking_figure", kind="scores", ext="pdf"),
        ranks_png=ranking_figure("ranks", "ranks"),
        ranks_pdf=path("ranking_figure", kind="ranks", ext="pdf"),
    log:
        PROJECT.log("ranking/{dataset}/figures/{judge}/{measure}"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        figure=lambda wc: RANKING.figure(wc.dataset, wc.judge, wc.measure).param(),
    script:
        "../../scripts/ranking/figures.py"


# Calibration of every dataset x judge's pool labels (no model call): the label distribution as
# P(relevant), ECE (equal-width and equal-mass bins), Brier, the expected grade's MAE and the
# reliability diagrams, one table and one figure for the study.
rule ranking_calibration:
    input:
        unpack(lambda wc: RANKING.calibration_inputs()),
    output:
        calibration=ranking_report(path("ranking_calibration"), "calibration"),
        reliability=path("ranking_reliability"),
        png=ranking_report(
            path("ranking_reliability_figure", ext="png"), "reliability", "Ranking agreement - figures"
        ),
        pdf=path("ranking_reliability_figure", ext="pdf"),
    log:
        PROJECT.log("ranking/calibration"),
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    params:
        # the dataset x judge of every label input, in order, and the ECE bins (`calibration.bins`)
        cells=RANKING.calibration_cells(),
        settings=PROJECT.calibration().param(),
    script:
        "../../scripts/ranking/calibration.py"


# Prediction-powered estimates (no model call): per dataset x judge x measure x n of
# `ranking.ppi.n`, the systems' means and pair differences from n human-judged topics (seeded
# draws) three ways - human-only, judge-only, PPI++ - with coverage, width, bias and the pairs
# separated alike; one table and one figure for the study.
rule ranking_ppi:
    input:
        scores=[path("ranking_scores", dataset=d) for d in RANKING.datasets],
    output:
        tsv=path("ranking_ppi", ext="tsv"),
        md=path("ranking_ppi", ext="md"),
        html=ranking_report(path("ranking_ppi", ext="html"), "ppi"),
        png=ranking_report(path("ranking_ppi_figure", ext="png"), "ppi_figure", "Ranking agreement - figures"),
        pdf=path("ranking_ppi_figure", ext="pdf"),
    log:
        PROJECT.log("ranking/ppi"),
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(60, 4000),
    params:
        settings=RANKING.ppi().param(),
    script:
        "../../scripts/ranking/ppi.py"


# The systems' scores estimated from the labels people collected (`ranking.annotated`, no model
# call): every run scored under the annotators' qrels on the topics they labelled; per judge x
# measure x run the judge-only score, PPI++ (weighted by the inclusion probabilities when the topics
# were chosen with unequal ones) and human-only with their intervals.
rule ranking_ppi_estimate:
    input:
        unpack(lambda wc: RANKING.annotated_inputs(wc.dataset)),
    output:
        tsv=ranking_report(path("ranking_ppi_estimate", ext="tsv"), "ppi_estimate"),
        md=path("ranking_ppi_estimate", ext="md"),
    log:
        PROJECT.log("ranking/{dataset}/ppi_estimate"),
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    params:
        estimate=lambda wc: RANKING.annotated_estimate(wc.dataset).param(),
    script:
        "../../scripts/ranking/ppi_estimate.py"
