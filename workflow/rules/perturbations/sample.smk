# Perturbations stage 1 - sample: per judge, per query at most `per_label` passages per label it
# predicted in its original judgment (original: peras - the peras_judge rule's table of the
# study's template and persona; overrating - the overrating study's graded pointwise table;
# requiring it schedules that job even when its study is disabled).


rule perturbation_sample:
    input:
        pairs=path("dataset"),
        judgments=lambda wc: PERTURBATIONS.judgments(wc.dataset, wc.model),
    output:
        sample=path("perturbation_sample"),
    log:
        PROJECT.log("perturbations/{dataset}/sample/{model}"),
    wildcard_constraints:
        model=PERTURBATION_JUDGES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # per_label and seed (the judge is the `model` wildcard)
        sampling=PERTURBATIONS.sampling_settings().param(),
    script:
        "../../scripts/perturbations/sample.py"
