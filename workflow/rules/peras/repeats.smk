# PERAS self-consistency (peras.repeats k > 1; off at the default 1): each live judge job asked k
# times. A judge that parses its answers asks samples 1..k-1 of every request (cached each on its
# own; sample 0 is its judgment table's); one read from the logits calls nothing and draws its k
# labels from the judgment table's label distributions at models.<m>.temperature. Then one table
# of the flip rate, the agreement between repeats and the majority of k against the human grades.


# the live judges by how they read the label: those that parse ask, those read from the logits draw
PARSE_JUDGES_RE = names_re([m for m in PERAS.judges if PERAS.answer(m) == "parse"])
LOGITS_JUDGES_RE = names_re([m for m in PERAS.judges if PERAS.answer(m) == "logits"])


rule peras_repeats:
    input:
        pairs=path("dataset"),
        judgments=path("judgments"),
        persona_file=persona_input,
    output:
        repeats=path("repeats"),
        majority=path("repeats_majority"),
    log:
        PROJECT.log("peras/repeats/{dataset}/{model}/{template}/{persona}"),
    wildcard_constraints:
        model=PARSE_JUDGES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(720),
    params:
        judge=lambda wc: PERAS.judge(wc.model, wc.template, wc.persona).param(),
        samples=PERAS.repeats,
    script:
        "../../scripts/peras/repeats.py"


# a judge read from the logits: its k labels drawn from its judgment table's label distributions
# (no model call, a cheap job)
rule peras_repeat_draws:
    input:
        pairs=path("dataset"),
        judgments=path("judgments"),
    output:
        repeats=path("repeats"),
        majority=path("repeats_majority"),
    log:
        PROJECT.log("peras/repeats/{dataset}/{model}/{template}/{persona}"),
    wildcard_constraints:
        model=LOGITS_JUDGES_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        judge=lambda wc: PERAS.judge(wc.model, wc.template, wc.persona).param(),
        samples=PERAS.repeats,
    script:
        "../../scripts/peras/repeats.py"


rule peras_consistency:
    input:
        pairs=[path("dataset", dataset=d) for d in PERAS.datasets],
        repeats=PERAS.repeat_files("repeats"),
        majority=PERAS.repeat_files("repeats_majority"),
    output:
        tsv=path("consistency", ext="tsv"),
        md=path("consistency", ext="md"),
    log:
        PROJECT.log("peras/metrics/consistency"),
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # every repeated judge job (dataset, model, template, persona, reading, temperature), in input order
        cells=PERAS.repeat_cells(),
    script:
        "../../scripts/peras/consistency.py"
