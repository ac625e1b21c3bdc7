# Perturbations stage 3 - re-judging: one job per dataset x variant x judge, the judge's own
# sampled pairs with a kept rewrite / valid insertion (rewrite_filter all_variants: kept by every
# rewrite variant), judged exactly like its original judgment (original: peras - the PERAS
# template, persona and answer reading; overrating - the graded pointwise run's template and bound).


rule perturbation_rejudge:
    input:
        sample=path("perturbation_sample"),
        variants=lambda wc: PERTURBATIONS.variant_table(wc.dataset, wc.variant),
        rewrites=lambda wc: PERTURBATIONS.filter_inputs(wc.dataset, wc.variant),
        persona=lambda wc: (
            PROJECT.persona_input(PERTURBATIONS.persona) if PERTURBATIONS.original == "peras" else []
        ),
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
        original=PERTURBATIONS.original,
        persona=lambda wc: (
            PROJECT.persona_param(PERTURBATIONS.persona) if PERTURBATIONS.original == "peras" else ""
        ),
        template=lambda wc: PERTURBATIONS.judge_template_text,
        labels=lambda wc: json.dumps(PERTURBATIONS.judge_labels),
        max_tokens=lambda wc: PERTURBATIONS.judge_max_tokens,
        answer=lambda wc: PERTURBATIONS.judge_answer(wc.model),
        placement=PROJECT.placement,
        rewrite_filter=PERTURBATIONS.rewrite_filter,
        coverage=lambda wc: PERTURBATIONS.coverage().param(),
        model=model_param,
    script:
        "../../scripts/perturbations/rejudge.py"
