"""Perturbation jobs (seed 004, section 3): one function per workflow job, plain paths and values
in, files out, no Snakemake import (rules: ``workflow/rules/perturbations/``; plan:
:mod:`judgelab.studies.perturbations`).

The graph (per dataset; ``judge`` = a model key, judged with one PERAS template and persona):

* :func:`sample_job` - per judge: its original PERAS judgment table -> its sample.
* :func:`rewrite_job` - per rewrite variant (PSV, ACV, SUM, EXP): every judge's sample, pooled
  -> rewrites with the meaning-check verdict, kept flag and reason. Its only prompt params are
  that variant's rewrite prompt and the meaning-check prompt, so editing ``sum.yaml`` reruns only
  the SUM rewrite job (and what depends on it).
* :func:`insertion_job` - per insertion variant (SEM, LEX, QRY): every judge's sample, pooled
  (grade-0, label-0 pairs) -> inserted passages, and the sentence of each query.
* :func:`rejudge_job` - per variant x judge: the judge's sample and the variant's table ->
  re-judgments with the same template, persona and settings as the original judgment.
* :func:`transitions_job` - the rewrite variants' re-judgments and rewrite tables -> transition
  matrices, label shifts and kept fractions.
* :func:`distributions_job` - the insertion variants' re-judgments and tables -> label
  distributions and the insertion counts.
* :func:`transition_figure_job` (per judge) and :func:`insertion_figure_job` - seed 004
  Figure 1 and Figure 3 shaped figures, PNG and PDF.

The tables these jobs hand on (samples, rewrites, insertions, re-judgments) are the study's own:
their columns, readers and writers live in :mod:`judgelab.studies.perturbations` and here.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pandas as pd

from judgelab.analysis.render import MISSING
from judgelab.data.tables import JUDGMENT_COLUMNS, read_dataset, read_judgments, write_tsv
from judgelab.errors import InputError
from judgelab.llm.judging import require_coverage
from judgelab.llm.personas import read_persona
from judgelab.llm.session import LLMSession
from judgelab.project.runner import as_value
from judgelab.studies.perturbations.insertions import (
    INSERTION_VARIANTS,
    build_insertions,
    fixed_sentences,
    generate_sem,
    insertion_candidates,
    read_reviewed_sem,
    stopwords_from_param,
)
from judgelab.studies.perturbations.originals import ORIGINALS, judge_variant
from judgelab.studies.perturbations.outcomes import (
    VARIANTS,
    distribution_table,
    insertion_table,
    kept_by_all,
    kept_table,
    rejudge_pairs,
    shift_table,
    transition_table,
)
from judgelab.studies.perturbations.rewrites import REWRITE_VARIANTS, read_variant_table, run_rewrites
from judgelab.studies.perturbations.sampling import pool_samples, read_sample, sample_judged

log = logging.getLogger("judgelab")

REJUDGE_COLUMNS = ["judge", "variant", "grade", "original_label", *JUDGMENT_COLUMNS]


def _variant(variant: str, allowed: Sequence[str]) -> str:
    v = variant.upper()
    if v not in allowed:
        raise InputError(
            f"unknown variant {variant!r}; expected one of {list(allowed)}", key="perturbations.variants"
        )
    return v


def sample_job(
    pairs: str, judgments: str, out: str, *, judge: str, per_label: int, seed: int
) -> pd.DataFrame:
    """One judge's sample: per query at most ``per_label`` passages per label it predicted."""
    sample = sample_judged(
        read_dataset(pairs),
        read_judgments(judgments),
        judge=judge,
        per_label=per_label,
        seed=int(seed),
        source=str(judgments),
    )
    write_tsv(sample, out)
    return sample


def rewrite_job(
    samples: Sequence[str],
    out: str,
    *,
    variant: str,
    template: str,
    check_template: str,
    rewriter: str | dict,
    max_tokens: int,
    check_max_tokens: int,
    cache: str,
    checker: str | dict | None = None,
    threads: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Rewrite every passage of the pooled samples once (``template``: the variant's prompt
    text), check each rewrite's meaning (``check_template``) with ``checker`` (default: the
    rewriter), and write all rows with their verdict, kept flag and reason."""
    v = _variant(variant, REWRITE_VARIANTS)
    pool = pool_samples(read_sample(s) for s in samples)
    log.info("%s: %d passages pooled from %d samples", v, len(pool), len(samples))
    same_checker = checker is None or checker == "" or as_value(checker) == as_value(rewriter)
    with LLMSession(rewriter, cache, threads, f"rewrite {v}") as rw_client:
        if same_checker:
            result = run_rewrites(
                pool,
                v,
                template,
                check_template,
                rw_client,
                rw_client,
                max_tokens=int(max_tokens),
                check_max_tokens=int(check_max_tokens),
                progress=progress,
            )
        else:
            with LLMSession(checker, cache, threads, f"meaning check {v}") as ck_client:
                result = run_rewrites(
                    pool,
                    v,
                    template,
                    check_template,
                    rw_client,
                    ck_client,
                    max_tokens=int(max_tokens),
                    check_max_tokens=int(check_max_tokens),
                    progress=progress,
                )
    write_tsv(result, out)
    return result


def insertion_job(
    samples: Sequence[str],
    out: str,
    out_sentences: str,
    *,
    variant: str,
    stopwords: str,
    template: str | None = None,
    rewriter: str | dict | None = None,
    max_tokens: int | None = None,
    max_attempts: int | None = None,
    cache: str | None = None,
    threads: int | None = None,
    progress: bool = True,
    reviewed: str | None = None,
) -> pd.DataFrame:
    """Insert the variant's sentence at the start of every pooled grade-0, label-0 passage.

    ``stopwords``: the stopword list (:func:`~.insertions.stopwords_param`) that picks the query
    terms. SEM needs ``template`` (the SEM prompt), ``max_tokens``, ``max_attempts``, and
    ``rewriter`` and ``cache`` for the queries without a ``reviewed`` sentence (a file of
    :func:`~.insertions.read_reviewed_sem`); LEX needs ``template`` (the seed's template
    sentence); QRY nothing else. Writes the inserted passages (``out``) and one sentence row per
    query (``out_sentences``)."""
    v = _variant(variant, INSERTION_VARIANTS)
    words = stopwords_from_param(stopwords)
    sample_tables = [read_sample(s) for s in samples]
    candidates = insertion_candidates(sample_tables)
    dataset = str(candidates["dataset"].iloc[0]) if len(candidates) else ""
    queries = dict(zip(candidates["qid"], candidates["query"]))
    log.info(
        "%s: %d passages judged non-relevant by the human and their judge, %d queries; %d stopwords",
        v,
        len(candidates),
        len(queries),
        len(words),
    )
    if v == "SEM":
        if template is None or max_tokens is None or max_attempts is None:
            raise ValueError("SEM needs template, max_tokens and max_attempts")
        given = read_reviewed_sem(reviewed, queries, words, dataset=dataset) if reviewed else {}
        generate = [q for q in queries if q not in given]
        if generate and not rewriter:
            log.info("SEM: %d queries without a reviewed sentence and no rewriter", len(generate))
        kwargs = dict(
            max_tokens=int(max_tokens),
            max_attempts=int(max_attempts),
            stopwords=words,
            dataset=dataset,
            progress=progress,
            reviewed=given,
        )
        if generate and rewriter:
            with LLMSession(rewriter, cache, threads, "SEM") as client:
                sentences = generate_sem(queries, template, client, **kwargs)
        else:
            sentences = generate_sem(queries, template, None, **kwargs)
    else:
        sentences = fixed_sentences(queries, v, template, dataset=dataset, stopwords=words)
    table = build_insertions(candidates, sentences, v)
    write_tsv(sentences, out_sentences)
    write_tsv(table, out)
    log.info(
        "%s: %d inserted passages, %d without a sentence",
        v,
        int(table["ok"].sum()),
        int((~table["ok"]).sum()),
    )
    return table


def rejudge_job(
    sample: str,
    variants: str,
    out: str,
    *,
    variant: str,
    original: str,
    template: str,
    labels: str | Sequence[str],
    model: str | dict,
    max_tokens: int,
    cache: str,
    persona: str = "",
    placement: str = "user",
    answer: str = "parse",
    threads: int | None = None,
    persona_file: str | None = None,
    progress: bool = True,
    coverage: str | dict | None = None,
    rewrites: Sequence[str] = (),
    rewrite_filter: str = "per_variant",
    model_name: str | None = None,
) -> pd.DataFrame:
    """Re-judge one judge's own sampled pairs on one variant (kept rewrites, or valid
    insertions) exactly as its original judgment was made: ``original`` ``peras`` - the PERAS
    judgment (``persona``, ``placement``, the label read by ``answer``); ``overrating`` - the
    overrating study's graded pointwise judgment (no persona, the label parsed where it is
    generated, token confidence beside it). ``rewrites``: every rewrite variant's table, with
    ``rewrite_filter`` ``all_variants`` (a rewrite variant re-judges only the passages kept in
    all of them). Ends with the coverage check (``coverage``) unless there is nothing to judge."""
    v = _variant(variant, VARIANTS)
    if original not in ORIGINALS:
        raise InputError(
            f"unknown source {original!r} ({', '.join(ORIGINALS)})", key="perturbations.original"
        )
    own = read_sample(sample)
    judges = set(own["judge"])
    if len(judges) > 1:
        raise InputError(f"a sample table holds one judge, found {sorted(judges)}", path=str(sample))
    common = None
    if rewrite_filter == "all_variants" and v not in INSERTION_VARIANTS:
        tables = [read_variant_table(p) for p in rewrites]
        common = kept_by_all(tables, list(dict.fromkeys(x for t in tables for x in t["variant"])))
    pairs = rejudge_pairs(own, read_variant_table(variants), v, common)
    judge = next(iter(judges), "")
    log.info(
        "%s on %s: %d of its %d sampled pairs have a usable variant%s",
        judge,
        v,
        len(pairs),
        len(own),
        f" (kept by all {len(common)} rewrite variants' filter)" if common is not None else "",
    )
    desc = f"rejudge {v} {judge}"
    session = LLMSession(model, cache, threads, desc, name=model_name)
    with session as client:
        judged = judge_variant(
            pairs,
            client,
            original=original,
            template=template,
            labels=[str(x) for x in as_value(labels)],
            max_tokens=int(max_tokens),
            persona=read_persona(persona, persona_file) if original == "peras" else "",
            placement=placement,
            answer=answer,
            desc=desc,
            progress=progress,
        )
    require_coverage(
        judged["parsed"],
        judged["answer"],
        coverage=coverage,
        model=session.name,
        backend=session.spec.get("backend"),
        bound=int(max_tokens) if answer == "parse" else 1,
        what=desc,
    )
    result = judged.assign(
        judge=judge,
        variant=v,
        grade=pairs["grade"].to_numpy(),
        original_label=pairs["original_label"].to_numpy(),
    )
    result = result[["judge", "variant", "grade", "original_label"] + [c for c in judged.columns]]
    result["grade"] = result["grade"].astype("Int64")
    result["original_label"] = result["original_label"].astype("Int64")
    write_tsv(result, out)
    return result


def read_rejudged(path: str) -> pd.DataFrame:
    df = read_judgments(path)
    df["judge"] = df["judge"].astype(str)
    df["original_label"] = df["original_label"].astype("Int64")
    return df


def _concat(frames: list[pd.DataFrame], columns: Sequence[str]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(columns))


def transitions_job(
    rejudged: Sequence[str],
    rewrites: Sequence[str],
    out_transitions: str,
    out_shifts: str,
    out_kept: str,
    *,
    rewrite_filter: str = "per_variant",
) -> pd.DataFrame:
    """Transition matrices (tidy) and label shifts (with the re-judging's coverage) per judge x
    rewrite variant, and per variant the kept fraction and the passages kept by every variant
    (``rewrite_filter``: which of them were re-judged)."""
    judged = _concat([read_rejudged(p) for p in rejudged], REJUDGE_COLUMNS)
    trans = transition_table(judged)
    shifts = shift_table(judged)
    kept = kept_table([read_variant_table(p) for p in rewrites], rewrite_filter)
    write_tsv(trans, out_transitions)
    write_tsv(shifts, out_shifts)
    write_tsv(kept, out_kept)
    for r in kept.itertuples(index=False):
        log.info(
            "%s: %d of %d rewrites kept (%.2f); changed %d, unparsable %d, empty %d",
            r.variant,
            r.kept,
            r.n,
            r.kept_fraction,
            r.changed,
            r.unparsable,
            r.empty,
        )
    for r in shifts.itertuples(index=False):
        log.info(
            "%s %s: %d re-judged, %d parsed, mean shift %s",
            r.judge,
            r.variant,
            r.n,
            r.n_parsed,
            f"{r.mean_shift:+.2f}" if r.n_parsed else MISSING,
        )
    return trans


def distributions_job(
    rejudged: Sequence[str], insertions: Sequence[str], out_distributions: str, out_counts: str
) -> pd.DataFrame:
    """Label distributions per judge x insertion variant, and per variant how many passages
    and queries got a valid sentence."""
    judged = _concat([read_rejudged(p) for p in rejudged], REJUDGE_COLUMNS)
    dist = distribution_table(judged)
    counts = insertion_table(read_variant_table(p) for p in insertions)
    write_tsv(dist, out_distributions)
    write_tsv(counts, out_counts)
    for r in counts.itertuples(index=False):
        log.info(
            "%s: %d of %d passages inserted (%d of %d queries with a valid sentence)",
            r.variant,
            r.n_ok,
            r.n_passages,
            r.n_queries_ok,
            r.n_queries,
        )
    return dist


def transition_figure_job(
    transitions: str,
    out_png: str,
    out_pdf: str,
    *,
    dataset: str,
    judge: str,
    variants: Sequence[str] = REWRITE_VARIANTS,
    display: str | None = None,
) -> None:
    """Seed 004 Figure 1: one judge's transition heatmaps, one panel per rewrite variant (its
    re-judging coverage in the panel title). ``dataset``: the dataset named in the title (the
    pooled figure: the datasets pooled); ``display``: the judge's display name."""
    from judgelab.studies.perturbations.figures import transition_heatmaps

    tidy = pd.read_csv(transitions, sep="\t", dtype={"judge": str, "variant": str})
    transition_heatmaps(
        tidy[tidy["judge"] == judge],
        [v.upper() for v in variants],
        f"Label transitions under passage rewrites - {display or judge}, {dataset}",
        out_png,
        out_pdf,
    )
    log.info("%s: transition figure written (%d rows)", judge, int((tidy["judge"] == judge).sum()))


def insertion_figure_job(
    distributions: str,
    out_png: str,
    out_pdf: str,
    *,
    dataset: str,
    variants: Sequence[str] = INSERTION_VARIANTS,
    names: str | dict | None = None,
) -> None:
    """Seed 004 Figure 3: label distributions on non-relevant passages after each insertion, one
    bar per judge (``names``: display names by judge key, JSON or a mapping)."""
    from judgelab.studies.perturbations.figures import insertion_distributions

    tidy = pd.read_csv(distributions, sep="\t", dtype={"judge": str, "variant": str})
    insertion_distributions(
        tidy,
        [v.upper() for v in variants],
        f"Labels of non-relevant passages after insertions - {dataset}",
        out_png,
        out_pdf,
        names=as_value(names) if names else None,
    )
    log.info("insertion figure written (%d judges)", tidy["judge"].nunique())


def pooled_job(
    transitions: Sequence[str], distributions: Sequence[str], out_transitions: str, out_distributions: str
) -> None:
    """The transition and distribution tables of every dataset pooled (counts summed, shares
    recomputed): the tables of the pooled Figures 1 and 3 (the seed pools DL19 and DL20)."""
    from judgelab.studies.perturbations.outcomes import pool_distributions, pool_transitions

    def read(paths):
        frames = [pd.read_csv(p, sep="\t", dtype={"judge": str, "variant": str}) for p in paths]
        return [f for f in frames if len(f)]

    trans = pool_transitions(read(transitions))
    dist = pool_distributions(read(distributions))
    write_tsv(trans, out_transitions)
    write_tsv(dist, out_distributions)
    log.info(
        "pooled %d transition and %d distribution tables: %d and %d rows",
        len(transitions),
        len(distributions),
        len(trans),
        len(dist),
    )
