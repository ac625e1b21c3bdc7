# Ranking stage 2 - the pool's labels: per dataset x live judge, one job labelling the pool (every
# run's top `pool_depth` over the dataset's topics) where the passage text is known, with the PERAS
# template and persona (requests identical to the PERAS judge job's: pairs PERAS asked are cache
# hits; the job waits for that PERAS job when PERAS runs it). Per dataset x imported judge, its
# qrels file read against the dataset table (no LLM call).


rule ranking_judge:
    input:
        pairs=path("dataset"),
        runs=ranking_runs,
        persona_file=lambda wc: PROJECT.persona_input(RANKING.persona),
        peras=lambda wc: RANKING.peras_judgments(wc.dataset, wc.model),
    output:
        labels=path("ranking_labels"),
    log:
        PROJECT.log("ranking/{dataset}/judge/{model}"),
    wildcard_constraints:
        model=RANKING_LIVE_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(720),
    params:
        # the dataset's run names (the order of `runs`) and the pool depth
        pooling=lambda wc: RANKING.pooling(wc.dataset).param(),
        # the judge whole (PERAS's of the template and persona): model entry, template, labels,
        # persona, bound, reading, coverage floor
        judge=lambda wc: RANKING.judge(wc.model).param(),
    script:
        "../../scripts/ranking/judge.py"


# Per dataset x live judge x persona a persona committee names (ranking.committees.<c>.personas)
# other than the study's: the pool labelled as ranking_judge labels it, under that persona (the
# PERAS judge job's requests of the persona: cache hits where PERAS asked them).
rule ranking_persona_judge:
    input:
        pairs=path("dataset"),
        runs=ranking_runs,
        persona_file=lambda wc: PROJECT.persona_input(wc.persona),
        peras=lambda wc: RANKING.peras_judgments(wc.dataset, wc.model, wc.persona),
    output:
        labels=path("ranking_persona_labels"),
    log:
        PROJECT.log("ranking/{dataset}/judge/{model}/{persona}"),
    wildcard_constraints:
        model=RANKING_LIVE_RE,
        persona=names_re(PROJECT.personas),
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(720),
    params:
        pooling=lambda wc: RANKING.pooling(wc.dataset).param(),
        judge=lambda wc: RANKING.judge(wc.model, wc.persona).param(),
    script:
        "../../scripts/ranking/judge.py"


rule ranking_import:
    input:
        pairs=path("dataset"),
        judge_file=lambda wc: RANKING.imported_file(wc.model, wc.dataset),
    output:
        labels=path("ranking_labels"),
    log:
        PROJECT.log("ranking/{dataset}/import/{model}"),
    wildcard_constraints:
        model=RANKING_IMPORTED_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the declared scales (null = not declared: 0/1 labels and 0-1 confidences are never
        # guessed) and the dataset's encoding
        reading=lambda wc: PROJECT.import_reading(wc.model, wc.dataset).param(),
    script:
        "../../scripts/ranking/import.py"


# Per dataset x committee (ranking.committees): one label per pair from its members' label files
# (majority, median or mean; judgelab.analysis.committee), a judge like the others (no LLM call).
rule ranking_committee:
    input:
        labels=lambda wc: [RANKING.member_file(wc.dataset, m) for m in RANKING.committee(wc.model).members],
    output:
        committee_labels=path("ranking_labels"),
    log:
        PROJECT.log("ranking/{dataset}/committee/{model}"),
    wildcard_constraints:
        model=RANKING_COMMITTEE_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the members (in order), the rule and the quorum
        committee=lambda wc: RANKING.committee(wc.model).param(),
    script:
        "../../scripts/ranking/committee.py"


# Self-consistency (peras.repeats k > 1; the ranking study's live judges are PERAS's): per dataset x
# live judge, its pool labelled k times. A judge that parses asks samples 1..k-1 of every pool pair
# (cached each on its own, the same requests as PERAS's repeats of the pair); one read from the
# logits calls nothing and draws its k labels from its pool labels' distributions.
rule ranking_repeats:
    input:
        pairs=path("dataset"),
        runs=ranking_runs,
        labels=path("ranking_labels"),
        persona_file=lambda wc: PROJECT.persona_input(RANKING.persona),
    output:
        repeats=path("ranking_repeats"),
    log:
        PROJECT.log("ranking/{dataset}/repeats/{model}"),
    wildcard_constraints:
        model=RANKING_PARSE_RE,
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads()
    resources:
        **model_job(720),
    params:
        pooling=lambda wc: RANKING.pooling(wc.dataset).param(),
        judge=lambda wc: RANKING.judge(wc.model).param(),
        samples=RANKING.repeats,
    script:
        "../../scripts/ranking/repeats.py"


rule ranking_repeat_draws:
    input:
        labels=path("ranking_labels"),
    output:
        repeats=path("ranking_repeats"),
    log:
        PROJECT.log("ranking/{dataset}/repeats/{model}"),
    wildcard_constraints:
        model=RANKING_LOGITS_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        pooling=lambda wc: RANKING.pooling(wc.dataset).param(),
        judge=lambda wc: RANKING.judge(wc.model).param(),
        samples=RANKING.repeats,
    script:
        "../../scripts/ranking/repeats.py"
