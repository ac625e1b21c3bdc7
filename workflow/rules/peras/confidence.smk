# PERAS stage 4 - confidence: the paper's Table 6 instruction for every pair whose label parsed; its
# own stage, so editing the confidence prompt reruns only the confidence jobs (and what uses them).


rule peras_confidence:
    input:
        pairs=path("dataset"),
        judgments=path("judgments"),
        persona=persona_input,
    output:
        confidence=path("confidence"),
    log:
        PROJECT.log("peras/confidence/{dataset}/{model}/{template}/{persona}"),
    wildcard_constraints:
        model=LIVE_JUDGES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(240),
    params:
        judge=lambda wc: PERAS.confidence_judge(wc.model, wc.persona).param(),
    script:
        "../../scripts/peras/confidence.py"
