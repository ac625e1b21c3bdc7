# Perturbations stage 3 - re-judging: one job per dataset x variant x judge, the judge's own
# sampled pairs with a kept rewrite / valid insertion (rewrite_filter all_variants: kept by every
# rewrite variant), judged exactly like its original judgment (original: peras - the PERAS
# template, persona and answer reading; overrating - the graded pointwise run's template and bound).


rule perturbation_rejudge:
    input:
        sample=path("perturbation_sample"),
        variants=lambda wc: PERTURBATIONS.variant_table(wc.dataset, wc.variant),
        rewrites=lambda wc: PERTURBATIONS.filter_inputs(wc.dataset, wc.variant),
        persona_file=lambda wc: (
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
        # the judge of the original judgment whole (the PERAS judge, or the overrating graded
        # pointwise judge): model entry, template, labels, persona, bound, reading, coverage floor
        judge=lambda wc: PERTURBATIONS.judge(wc.model).param(),
        # the variant and the rewrite filter
        selection=lambda wc: PERTURBATIONS.selection(wc.variant).param(),
    script:
        "../../scripts/perturbations/rejudge.py"
