# Simulation stage 1 - data: download an evaluator set (source: download; a checkpoint: where the
# file decides the demonstration types - a jsonl file, a type needing telemetry or reasoning - the
# rules listing the cells ask for them after it, see common.smk), then load and check
# its records and split every evaluator's items into a demonstration pool and a disjoint
# validation set, keeping each leakage group (items sharing a context, swapped-response twins,
# identical items) on one side (checked in code; split_report.tsv counts what was grouped).


checkpoint simulation_download:
    output:
        raw=path("simulation_raw"),
    log:
        PROJECT.log("simulation/{dataset}/download-{ext}"),
    wildcard_constraints:
        dataset=SIM_SETS_RE,
        ext="json|jsonl",
    conda:
        "../../../envs/judgelab.yaml"
    params:
        url=lambda wc: SIMULATION.download_url(wc.dataset),
        fmt=lambda wc: SIMULATION.sets[wc.dataset]["format"],
    script:
        "../../scripts/simulation/download.py"


rule simulation_prepare:
    input:
        unpack(lambda wc: PROJECT.inputs_of({"source": SIMULATION.source_file(wc.dataset)})),
    output:
        records=path("simulation_records"),
        splits=path("simulation_splits"),
        evaluators=path("simulation_evaluators"),
        report=path("simulation_split_report"),
    log:
        PROJECT.log("simulation/{dataset}/prepare"),
    wildcard_constraints:
        dataset=SIM_SETS_RE,
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    params:
        selection=lambda wc: SIMULATION.selection(wc.dataset).param(),
        # the bundled sample by name and content (see datasets.smk)
        bundled=lambda wc: PROJECT.bundled_of({"source": SIMULATION.source_file(wc.dataset)}),
    script:
        "../../scripts/simulation/prepare.py"
