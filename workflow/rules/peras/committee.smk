# PERAS committees (peras.committees; judgelab.analysis.committee): a judge committee's judgment
# table at every persona its judges ran, and a persona committee's row of every judge x template
# that runs its personas, each from the members' judgment tables (majority, median or mean; no
# LLM call). The tables are written like a judge's (label only: no distribution, no confidence),
# so the metrics, significance, tables and figures take them like any judge's. A persona
# committee's table sits at a persona of a live judge: the ruleorder gives it to this rule, not to
# the peras_judge or peras_confidence rule (peras_import_judge takes only its files' personas).


ruleorder: peras_persona_committee > peras_judge
ruleorder: peras_persona_committee > peras_confidence


rule peras_judge_committee:
    input:
        pairs=path("dataset"),
        judgments=committee_inputs,
    output:
        judgments=path("judgments"),
        confidence=path("confidence"),
    log:
        PROJECT.log("peras/committee/{dataset}/{model}/{template}/{persona}"),
    wildcard_constraints:
        model=JUDGE_COMMITTEES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the members (in order), the rule and the quorum
        committee=committee_param,
    script:
        "../../scripts/peras/committee.py"


rule peras_persona_committee:
    input:
        pairs=path("dataset"),
        judgments=committee_inputs,
    output:
        judgments=path("judgments"),
        confidence=path("confidence"),
    log:
        PROJECT.log("peras/committee/{dataset}/{model}/{template}/{persona}"),
    wildcard_constraints:
        model=names_re(PERAS.judges + list(PROJECT.imported)),
        persona=PERSONA_COMMITTEES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        committee=committee_param,
    script:
        "../../scripts/peras/committee.py"
