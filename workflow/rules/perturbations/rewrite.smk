# Perturbations stage 2 - rewrites ("When LLM Judges Inflate Scores", section 3.1): one job per
# dataset x rewrite variant (PSV, ACV, SUM, EXP) over the judges' pooled samples, each passage
# rewritten once by the rewriter and checked by the meaning checker. Its prompt params are that
# variant's rewriter (its prompt) and the meaning checker only: editing sum.yaml reruns the SUM
# job, its re-judging and the tables/figures above.


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
        # each whole: model key and entry, prompt text, answer bound
        rewriter=lambda wc: PERTURBATIONS.rewrite_writer(wc.variant).param(),
        checker=lambda wc: PERTURBATIONS.check_writer().param(),
    script:
        "../../scripts/perturbations/rewrite.py"
