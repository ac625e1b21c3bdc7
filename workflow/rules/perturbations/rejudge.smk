# Perturbations stage 3 - re-judging: one job per dataset x variant x judge, the judge's own
# sampled pairs with a kept rewrite / valid insertion, judged with the template, persona and
# settings of its original PERAS judgment.


rule perturbation_rejudge:
    input:
        sample=path("perturbation_sample"),
        variants=lambda wc: PERTURBATIONS.variant_table(wc.dataset, wc.variant),
        persona=lambda wc: PROJECT.persona_input(PERTURBATIONS.persona),
    output:
        rejudged=path("perturbation_rejudged"),
    log:
        PROJECT.log("perturbations/{dataset}/rejudge/{variant}/{model}"),
    wildcard_constraints:
        variant=VARIANTS_RE,
        model=PERTURBATION_JUDGES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(720),
    params:
        persona=lambda wc: PROJECT.persona_param(PERTURBATIONS.persona),
        template=lambda wc: PERTURBATIONS.judge_template_text,
        max_tokens=lambda wc: PERTURBATIONS.judge_max_tokens,
        placement=PROJECT.placement,
        model=model_param,
    script:
        "../../scripts/perturbation_rejudge.py"
