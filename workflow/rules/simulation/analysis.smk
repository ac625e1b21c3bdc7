# Simulation stage 3 - analysis per evaluator set: what the data can support (the agreement of
# its annotators, the deviating validation pairs), the reference predictors (random, oracle
# consensus, global and per-evaluator majority), the metrics of every cell (accuracy over every
# judgment, coverage, deviation metrics, confusion matrices, P/R/F1, the cross-evaluator control,
# Random Selection's seeded draws, evaluator traits, correlations, the design), and the
# statistics over evaluators (the paper's) and over judgments (the evaluator a stratum).


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
        settings=SIMULATION.baseline_settings().param(),
    script:
        "../../scripts/simulation/baselines.py"


rule simulation_metrics:
    input:
        records=path("simulation_records"),
        splits=path("simulation_splits"),
        cell_predictions=sim_predictions,
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
        # the design: the cells (in the order of cell_predictions) and the skipped types
        cells=sim_design,
        settings=SIMULATION.metric_settings().param(),
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
        settings=SIMULATION.stats_settings().param(),
    script:
        "../../scripts/simulation/stats.py"
