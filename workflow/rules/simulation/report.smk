# Simulation stage 4 - report: the figures of every evaluator set (PNG and PDF), the cross-task
# figure where two evaluator sets of different tasks share evaluators, and the tables shaped like
# the paper's over all evaluator sets (TSV and Markdown with the caption above), attached to
# `snakemake --report` with the captions in workflow/report/simulation/ - what the data can
# support (annotators, splits) in the first subcategory.


rule simulation_figures:
    input:
        **sim_files("simulation_metrics", METRIC_FILES),
    output:
        **{
            f: report(
                path("simulation_figure", name=f, ext="png"),
                category="Simulation (PersonaJudge)",
                subcategory="{dataset}",
                caption=f"../../report/simulation/fig_{f}.rst",
                labels={"evaluator set": "{dataset}", "figure": f},
            )
            for f in REPORT_FIGURES
        },
        **{f"{f}_pdf": path("simulation_figure", name=f, ext="pdf") for f in REPORT_FIGURES},
    log:
        PROJECT.log("simulation/{dataset}/figures"),
    wildcard_constraints:
        dataset=SIM_SETS_RE,
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    params:
        metric=SIMULATION.metric,
    script:
        "../../scripts/simulation/figures.py"


rule simulation_cross_task:
    input:
        metrics=sim_all_files("simulation_metrics", METRIC_FILES),
    output:
        png=report(
            path("simulation_cross_figure", ext="png"),
            category="Simulation (PersonaJudge)",
            subcategory="Cross-task",
            caption="../../report/simulation/fig_cross_task.rst",
            labels={"figure": "cross_task"},
        ),
        pdf=path("simulation_cross_figure", ext="pdf"),
    log:
        PROJECT.log("simulation/cross_task"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        metrics_dirs=json.dumps(sim_dirs("simulation_metrics")),
        tasks=json.dumps(SIMULATION.tasks(), sort_keys=True),
        metric=SIMULATION.metric,
    script:
        "../../scripts/simulation/cross_task.py"


rule simulation_tables:
    input:
        metrics=sim_all_files("simulation_metrics", METRIC_FILES),
        stats=sim_all_files("simulation_stats", STATS_FILES),
        annotators=[path("simulation_annotators", dataset=d) for d in SIMULATION.datasets],
        split_reports=[path("simulation_split_report", dataset=d) for d in SIMULATION.datasets],
    output:
        **{
            t: report(
                path("simulation_table", name=t, ext="tsv"),
                category="Simulation (PersonaJudge)",
                subcategory=("1. What the data can support" if t in DATA_TABLES else "Tables"),
                caption=f"../../report/simulation/{t}.rst",
                labels={"table": t},
            )
            for t in REPORT_TABLES
        },
        **{f"{t}_md": path("simulation_table", name=t, ext="md") for t in REPORT_TABLES},
    log:
        PROJECT.log("simulation/tables"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        metrics_dirs=json.dumps(sim_dirs("simulation_metrics")),
        stats_dirs=json.dumps(sim_dirs("simulation_stats")),
        data_dirs=json.dumps(sim_dirs("simulation_annotators")),
        tasks=json.dumps(SIMULATION.tasks(), sort_keys=True),
        settings=SIMULATION.table_settings().param(),
    script:
        "../../scripts/simulation/tables.py"
