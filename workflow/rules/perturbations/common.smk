# Helpers of the perturbation rules. Every answer (judges, variants, prompts, paths) comes from the
# study's plan (judgelab.studies.perturbations.Plan).
PERTURBATIONS = PROJECT.plan("perturbations")

# the variants as they appear in the paths (lower case), by kind
PERTURBATION_JUDGES_RE = names_re(PERTURBATIONS.judges)
REWRITE_VARIANTS_RE = names_re([PERTURBATIONS.wildcard(v) for v in PERTURBATIONS.rewrite_variants])
FIXED_INSERTIONS_RE = names_re([PERTURBATIONS.wildcard(v) for v in PERTURBATIONS.insertions if v != "SEM"])
VARIANTS_RE = names_re([PERTURBATIONS.wildcard(v) for v in PERTURBATIONS.variants])
ATTACKS_RE = names_re(PERTURBATIONS.attack_names)


def perturbation_samples(wildcards):
    """Every judge's sample of the dataset (pooled by the rewrite and insertion jobs)."""
    return PERTURBATIONS.samples(wildcards.dataset)


def rewrite_models(wildcards):
    """The models a rewrite job calls: the rewriter, then the checker if it differs."""
    return PERTURBATIONS.rewrite_models


def sem_models(wildcards):
    """The SEM job's model: the rewriter (none when every sentence comes from sem_sentences)."""
    return [PERTURBATIONS.rewriter] if PERTURBATIONS.rewriter else []


def perturbation_rejudged(variants):
    """Input function: the re-judgments of `variants()` by every judge of the dataset."""
    return lambda wildcards: PERTURBATIONS.rejudged(wildcards.dataset, variants())


def perturbation_tables(kind, variants):
    return lambda wildcards: [
        path(kind, dataset=wildcards.dataset, variant=PERTURBATIONS.wildcard(v)) for v in variants()
    ]
