# PERAS stage 3 - judgment: one job per dataset x model x template x persona (live judges only;
# imported judges' tables come from import_judge). The label is parsed from the answer text, or
# (peras.answer: logits; auto for the embedded model) read from the first answer position's
# label distribution; a job whose answers parse less than min_coverage fails, saying what to try.


rule judge:
    input:
        pairs=path("dataset"),
        persona=persona_input,
    output:
        judgments=path("judgments"),
    log:
        PROJECT.log("judge/{dataset}/{model}/{template}/{persona}"),
    wildcard_constraints:
        model=LIVE_JUDGES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(720),
    params:
        persona=persona_param,
        template=lambda wc: PERAS.template_texts[wc.template],
        labels=lambda wc: json.dumps(PERAS.template_labels[wc.template]),
        max_tokens=lambda wc: PERAS.max_tokens(wc.template),
        answer=lambda wc: PERAS.answer(wc.model),
        coverage=lambda wc: PERAS.coverage(wc.template).param(),
        placement=PROJECT.placement,
        model=model_param,
    script:
        "../../scripts/peras/judge.py"
