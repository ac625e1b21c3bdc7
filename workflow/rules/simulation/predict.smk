# Simulation stage 2 - prediction: one job per cell (evaluator set x model x demonstration type
# x shot count; the Base Judge is type `base` with 0 shots), the two-round cascade on every
# evaluator's validation items. Its judge (model entry, prompt texts, cascade settings, coverage
# floor) is one tracked param: adding a model or a shot count runs only the new cells, a prompt
# edit exactly the cells whose texts it changes.


rule simulation_predict:
    input:
        records=path("simulation_records"),
        splits=path("simulation_splits"),
    output:
        predictions=path("simulation_predictions"),
        demos=path("simulation_demos"),
    log:
        PROJECT.log("simulation/{dataset}/predict/{model}/{demo_type}/{shots}"),
    wildcard_constraints:
        dataset=SIM_SETS_RE,
        model=SIM_JUDGES_RE,
        demo_type=SIM_TYPES_RE,
        shots=r"\d+",
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(720),
    params:
        judge=lambda wc: SIMULATION.judge(wc.dataset, wc.model, wc.demo_type).param(),
    script:
        "../../scripts/simulation/predict.py"
