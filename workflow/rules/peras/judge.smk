# PERAS stage 3 - judgment: one job per dataset x model x template x persona (live judges only;
# imported judges' tables come from peras_import_judge). The label is parsed from the answer text, or
# (peras.answer: logits; auto for the embedded model) read from the first answer position's
# label distribution; a job whose answers parse less than min_coverage fails, saying what to try.


rule peras_judge:
    input:
        pairs=path("dataset"),
        persona_file=persona_input,
    output:
        judgments=path("judgments"),
    log:
        PROJECT.log("peras/judge/{dataset}/{model}/{template}/{persona}"),
    wildcard_constraints:
        model=LIVE_JUDGES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(720),
    params:
        # the judge whole: model entry, template, labels, persona, bound, reading, coverage floor
        judge=lambda wc: PERAS.judge(wc.model, wc.template, wc.persona).param(),
    script:
        "../../scripts/peras/judge.py"
