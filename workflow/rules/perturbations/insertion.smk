# Perturbations stage 2b - insertions ("When LLM Judges Inflate Scores", section 3.2) at the start
# of the pooled sampled passages that the human (grade 0) and their judge (label 0) call
# non-relevant: SEM takes a query's reviewed sentence (perturbations.sem_sentences) or asks the
# rewriter for a sentence answering the query without its non-stopword terms (checked in code,
# asked again up to `sem_max_attempts` times); LEX (the paper's fixed sentence listing the query
# terms) and QRY (the query itself) need no model. The stopword list (perturbations.stopwords) is
# a param of each.


rule perturbation_sem:
    input:
        samples=perturbation_samples,
        reviewed=lambda wc: PERTURBATIONS.sem_file or [],
    output:
        insertions=path("perturbation_insertions", variant="sem"),
        sentences=path("perturbation_sentences", variant="sem"),
    log:
        PROJECT.log("perturbations/{dataset}/insertion/sem"),
    conda:
        "../../../envs/judgelab.yaml"
    threads: model_threads(sem_models)
    resources:
        **model_job(120, sem_models),
    params:
        insertion=lambda wc: PERTURBATIONS.insertion("SEM").param(),
        # the rewriter (none: the reviewed sentences only), the SEM prompt, bound and attempts
        writer=lambda wc: PERTURBATIONS.sem_writer().param(),
    script:
        "../../scripts/perturbations/sem.py"


rule perturbation_insertion:
    input:
        samples=perturbation_samples,
    output:
        insertions=path("perturbation_insertions"),
        sentences=path("perturbation_sentences"),
    log:
        PROJECT.log("perturbations/{dataset}/insertion/{variant}"),
    wildcard_constraints:
        variant=FIXED_INSERTIONS_RE,
    conda:
        "../../../envs/judgelab.yaml"
    params:
        # the stopwords and, for LEX, the paper's sentence (QRY: none, the query is the sentence)
        insertion=lambda wc: PERTURBATIONS.insertion(wc.variant).param(),
    script:
        "../../scripts/perturbations/insertion.py"
