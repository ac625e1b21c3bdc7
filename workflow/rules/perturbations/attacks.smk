# Perturbations stage 2c - attacks on passages (Alaofi et al., arXiv 2501.17969): keyword stuffing
# (STUFF: the query's terms) and instructions addressed to the judge (INJECT: one sentence of the
# injection list each), at the passage start or end, in passages that are certainly not relevant:
# per query at most `per_label` of the pairs the assessors graded with attacks.grades (0) and as
# many passages of other topics. Each judge judges them clean (attack `none`) and attacked, exactly
# as its original judgment (with attacks.defended also with the defended template); the attack
# table compares before and after (paired bootstrap over queries, McNemar's exact p).


rule perturbation_attack_sample:
    input:
        pairs=path("dataset"),
    output:
        sample=path("perturbation_attack_sample"),
    log:
        PROJECT.log("perturbations/{dataset}/attacks/sample"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the attacked grades, per_label, the seed and whether other topics' passages join
        sampling=PERTURBATIONS.attack_sampling().param(),
    script:
        "../../scripts/perturbations/attack_sample.py"


rule perturbation_attack_judge:
    input:
        sample=path("perturbation_attack_sample"),
        persona_file=lambda wc: (
            PROJECT.persona_input(PERTURBATIONS.persona) if PERTURBATIONS.original == "peras" else []
        ),
    output:
        judged=path("perturbation_attack_judged"),
    log:
        PROJECT.log("perturbations/{dataset}/attacks/{defense}/{attack}/{model}"),
    wildcard_constraints:
        defense="plain|defended",
        attack=ATTACKS_RE,
        model=PERTURBATION_JUDGES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(360),
    params:
        # the judge of the original judgment whole (with the defended template where asked)
        judge=lambda wc: PERTURBATIONS.attack_judge(wc.model, wc.defense).param(),
        # the attack: its kind, positions and text (INJECT's sentence; STUFF's repeat count and
        # stopwords); `none`: the clean judgment
        attack=lambda wc: PERTURBATIONS.attack(wc.attack).param(),
        template=lambda wc: wc.defense,
    script:
        "../../scripts/perturbations/attack_judge.py"


rule perturbation_attacks:
    input:
        judged=lambda wc: PERTURBATIONS.attack_judged(wc.dataset),
    output:
        attacks=path("perturbation_attacks"),
        markdown=report(
            path("perturbation_attacks_md"),
            category="Perturbations (When LLM Judges Inflate Scores, section 3)",
            subcategory="{dataset}",
            caption="../../report/perturbations/attacks.rst",
        ),
    log:
        PROJECT.log("perturbations/{dataset}/attacks/table"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the relevance threshold and the paired bootstrap over queries
        measure=PERTURBATIONS.attack_measure().param(),
    script:
        "../../scripts/perturbations/attacks.py"


rule perturbation_attack_figure:
    input:
        attacks=path("perturbation_attacks"),
    output:
        png=report(
            path("perturbation_attack_figure", ext="png"),
            category="Perturbations (When LLM Judges Inflate Scores, section 3)",
            subcategory="{dataset}",
            caption="../../report/perturbations/attack_figure.rst",
            labels={"figure": "attacks", "dataset": "{dataset}"},
        ),
        pdf=path("perturbation_attack_figure", ext="pdf"),
    log:
        PROJECT.log("perturbations/{dataset}/figures/attacks"),
    conda:
        "../../../envs/judgelab.yaml"
    resources:
        **cpu_job(30, 4000),
    params:
        figure=lambda wc: PERTURBATIONS.attack_figure(wc.dataset).param(),
    script:
        "../../scripts/perturbations/attack_figure.py"
