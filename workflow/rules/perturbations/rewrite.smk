# Perturbations stage 2 - rewrites (seed 004 section 3.1): one job per dataset x rewrite variant
# (PSV, ACV, SUM, EXP) over the judges' pooled samples, each passage rewritten once by the rewriter
# and checked by the meaning checker. Its prompt params are that variant's prompt and the meaning
# check only: editing sum.yaml reruns the SUM job, its re-judging and the tables/figures above.


rule perturbation_rewrite:
    input:
        samples=perturbation_samples,
    output:
        rewrites=path("perturbation_rewrites"),
    log:
        PROJECT.log("perturbations/{dataset}/rewrite/{variant}"),
    wildcard_constraints:
        variant=REWRITE_VARIANTS_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads(rewrite_models)
    resources:
        **model_job(720, rewrite_models),
    params:
        template=lambda wc: PERTURBATIONS.prompt(PERTURBATIONS.variant(wc.variant)),
        check_template=lambda wc: PERTURBATIONS.prompt("meaning_check"),
        rewriter=lambda wc: PROJECT.model_param(PERTURBATIONS.rewriter),
        checker=lambda wc: PROJECT.model_param(PERTURBATIONS.checker),
        max_tokens=PERTURBATIONS.rewrite_max_tokens,
        check_max_tokens=PERTURBATIONS.check_max_tokens,
    script:
        "../../scripts/perturbations/rewrite.py"
