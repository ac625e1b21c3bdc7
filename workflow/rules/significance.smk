# Stage 7b - significance: every persona vs the reference persona (default), paired bootstrap over
# queries of delta kappa, QWK, macro F1 and HMR with percentile intervals and Holm-adjusted
# p-values (judgelab.significance), then one tidy table and the metrics table joined with it.


rule significance:
    input:
        pairs=f"{RESULTS}/datasets/{{dataset}}.tsv",
        judgments=group_files("judgments"),
        confidence=group_files("confidence"),
    output:
        table=group_path("significance"),
    params:
        personas=group_personas,
        settings=json.dumps({"reference": REFERENCE, "n_boot": SIG.get("n_boot", 1000),
                             "seed": SIG.get("seed", 42), "alpha": SIG.get("alpha", 0.05)},
                            sort_keys=True),
    log:
        f"{RESULTS}/logs/significance/{{dataset}}/{{model}}/{{template}}.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/significance.py"


rule aggregate_significance:
    input:
        tables=expand_groups(group_path("significance"), significance_groups()),
        metrics=f"{RESULTS}/metrics/metrics.tsv",
    output:
        table=report(f"{RESULTS}/metrics/significance.tsv", category="Tables",
                     caption="../report/significance.rst"),
        joined=f"{RESULTS}/metrics/metrics_significance.tsv",
        html=report(f"{RESULTS}/metrics/metrics_significance.html", category="Tables",
                    caption="../report/metrics.rst"),
    log:
        f"{RESULTS}/logs/significance/aggregate.log",
    conda:
        "../../envs/judgelab.yaml"
    script:
        "../scripts/aggregate_significance.py"
