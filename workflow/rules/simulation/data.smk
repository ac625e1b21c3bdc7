# Simulation stage 1 - data: download an evaluator set (source: download), then load and check
# its records and split every evaluator's items into a demonstration pool and a disjoint
# validation set (checked for leakage in code).


rule simulation_download:
    output:
        raw=path("simulation_raw"),
    params:
        url=lambda wc: SIMULATION.download_url(wc.dataset),
        format=lambda wc: SIMULATION.sets[wc.dataset]["format"],
    wildcard_constraints:
        dataset=SIM_SETS_RE,
        ext="json|jsonl",
    log:
        PROJECT.log("simulation/{dataset}/download-{ext}"),
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/simulation_download.py"


rule simulation_prepare:
    input:
        source=lambda wc: SIMULATION.source_file(wc.dataset),
    output:
        records=path("simulation_records"),
        splits=path("simulation_splits"),
        evaluators=path("simulation_evaluators"),
    params:
        selection=lambda wc: json.dumps(SIMULATION.selection(wc.dataset), sort_keys=True),
    wildcard_constraints:
        dataset=SIM_SETS_RE,
    log:
        PROJECT.log("simulation/{dataset}/prepare"),
    conda:
        "../../../envs/judgelab.yaml"
    script:
        "../../scripts/simulation_prepare.py"
