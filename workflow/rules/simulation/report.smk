# Simulation stage 4 - report: the figures of every evaluator set (PNG and PDF) and the
# seed-shaped tables over all evaluator sets (TSV and Markdown with the caption above), attached
# to `snakemake --report` with the captions in workflow/report/simulation_*.rst.


rule simulation_figures:
    input:
        **sim_files("simulation_metrics", METRIC_FILES),
    output:
        **{
            f: report(
                path("simulation_figure", name=f, ext="png"),
                category="Simulation (seed 001)",
                subcategory="{dataset}",
                caption=f"../../report/simulation_fig_{f}.rst",
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
        "../../scripts/simulation_figures.py"


rule simulation_tables:
    input:
        metrics=sim_all_files("simulation_metrics", METRIC_FILES),
        stats=sim_all_files("simulation_stats", STATS_FILES),
    output:
        **{
            t: report(
                path("simulation_table", name=t, ext="tsv"),
                category="Simulation (seed 001)",
                subcategory="Tables",
                caption=f"../../report/simulation_{t}.rst",
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
        metric=SIMULATION.metric,
    script:
        "../../scripts/simulation_tables.py"
