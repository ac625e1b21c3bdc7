# Simulation stage 3 - analysis per evaluator set: what the data can support (the agreement of
# its annotators, the deviating validation pairs), the reference predictors (random, oracle
# consensus, global and per-evaluator majority), the metrics of every cell (accuracy over every
# judgment, coverage, deviation metrics, confusion matrices, P/R/F1, the cross-evaluator control,
# Random Selection's seeded draws, evaluator traits, correlations, the design), and the
# statistics over evaluators (the seed's) and over judgments (the evaluator a stratum).


rule simulation_annotators:
    input:
        records=path("simulation_records"),
        splits=path("simulation_splits"),
    output:
        annotators=path("simulation_annotators"),
    log:
        PROJECT.log("simulation/{dataset}/annotators"),
    wildcard_constraints:
        dataset=SIM_SETS_RE,
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/simulation/annotators.py"


rule simulation_baselines:
    input:
        records=path("simulation_records"),
        splits=path("simulation_splits"),
    output:
        baselines=path("simulation_baselines"),
    log:
        PROJECT.log("simulation/{dataset}/baselines"),
    wildcard_constraints:
        dataset=SIM_SETS_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        seed=SIMULATION.seed,
        majority_source=SIMULATION.majority_source,
    script:
        "../../scripts/simulation/baselines.py"


rule simulation_metrics:
    input:
        records=path("simulation_records"),
        splits=path("simulation_splits"),
        predictions=sim_predictions,
        baselines=path("simulation_baselines"),
    output:
        **sim_files("simulation_metrics", METRIC_FILES),
    log:
        PROJECT.log("simulation/{dataset}/metrics"),
    wildcard_constraints:
        dataset=SIM_SETS_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        cells=lambda wc: json.dumps(SIMULATION.cells(wc.dataset)),
        skipped=lambda wc: json.dumps(SIMULATION.skipped(wc.dataset), sort_keys=True),
        metric=SIMULATION.metric,
        random_draws=SIMULATION.random_draws,
        seed=SIMULATION.seed,
    script:
        "../../scripts/simulation/metrics.py"


rule simulation_stats:
    input:
        **sim_files("simulation_metrics", METRIC_FILES),
    output:
        **sim_files("simulation_stats", STATS_FILES),
    log:
        PROJECT.log("simulation/{dataset}/stats"),
    wildcard_constraints:
        dataset=SIM_SETS_RE,
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(60, 4000),
    params:
        metric=SIMULATION.metric,
        alpha=SIMULATION.alpha,
        permutations=SIMULATION.permutations,
        seed=SIMULATION.seed,
        cluster_by=SIMULATION.cluster_by,
    script:
        "../../scripts/simulation/stats.py"
