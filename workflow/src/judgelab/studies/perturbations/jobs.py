"""Perturbation jobs ("When LLM Judges Inflate Scores", section 3): one function per workflow job,
its inputs, its outputs and one settings value per concern (:mod:`.settings`) in, files out, no
Snakemake import (rules: ``workflow/rules/perturbations/``, each script one
:func:`judgelab.project.runner.run` call; plan: :mod:`judgelab.studies.perturbations.plan`).

The graph (per dataset; ``judge`` = a model key, judged as its original judgment was made):

* :func:`sample_job` - per judge: its original judgment table -> its sample (:class:`Sampling`).
* :func:`rewrite_job` - per rewrite variant (PSV, ACV, SUM, EXP): every judge's sample, pooled
  -> rewrites with the meaning-check verdict, kept flag and reason. Its only prompt params are
  that variant's rewriter (:class:`Writer`: model, rewrite prompt, bound) and the meaning checker,
  so editing ``sum.yaml`` reruns only the SUM rewrite job (and what depends on it).
* :func:`insertion_job` - per insertion variant (SEM, LEX, QRY; :class:`Insertion`, SEM's writer
  :class:`SemWriter`): every judge's sample, pooled (grade-0, label-0 pairs) -> inserted
  passages, and the sentence of each query.
* :func:`rejudge_job` - per variant x judge: the judge's sample and the variant's table ->
  re-judgments by the judge of its original judgment (:class:`OriginalJudge`: the same template,
  persona and settings), of the pairs of a :class:`Selection`.
* :func:`transitions_job` - the rewrite variants' re-judgments and rewrite tables -> transition
  matrices, label shifts and kept fractions.
* :func:`distributions_job` - the insertion variants' re-judgments and tables -> label
  distributions and the insertion counts.
* :func:`attack_sample_job` - the dataset table -> the attacked passages (:mod:`.attacks`: per
  query at most ``per_label`` pairs of the attacked human grades, and as many of other topics);
  :func:`attack_judge_job` - per template (plain, defended) x attack (``none``: clean) x judge:
  the passages with the attack's text at each position, judged as the original judgment;
  :func:`attacks_job` - every attack judgment -> the attack table (before vs after);
  :func:`attack_figure_job` - its figure.
* :func:`transition_figure_job` (per judge) and :func:`insertion_figure_job` - the paper's
  Figure 1 and Figure 3 shaped figures, PNG and PDF; :func:`pooled_job` - the tables of every
  dataset pooled.

The tables these jobs hand on (samples, rewrites, insertions, re-judgments) are the study's own:
their columns, readers and writers live in :mod:`judgelab.studies.perturbations` and here.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgelab.analysis.render import MISSING
from judgelab.data.tables import JUDGMENT_COLUMNS, read_dataset, read_judgments, read_tsv, write_tsv
from judgelab.errors import InputError
from judgelab.llm.judging import check_coverage
from judgelab.llm.session import JobContext
from judgelab.studies.perturbations.insertions import (
    INSERTION_VARIANTS,
    build_insertions,
    fixed_sentences,
    generate_sem,
    insertion_candidates,
    read_reviewed_sem,
)
from judgelab.studies.perturbations.originals import check_original, judge_variant
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
from judgelab.studies.perturbations.settings import (
    Attack,
    AttackFigure,
    AttackMeasure,
    AttackSampling,
    Insertion,
    InsertionFigure,
    OriginalJudge,
    Sampling,
    Selection,
    SemWriter,
    TransitionFigure,
    Writer,
)

log = logging.getLogger("judgelab")

REJUDGE_COLUMNS = ["judge", "variant", "grade", "original_label", *JUDGMENT_COLUMNS]


def _variant(variant: str, allowed: Sequence[str]) -> str:
    v = variant.upper()
    if v not in allowed:
        raise InputError(
            f"unknown variant {variant!r}; expected one of {list(allowed)}", key="perturbations.variants"
        )
    return v


def sample_job(pairs: str, judgments: str, sample: str, model: str, sampling: Sampling) -> pd.DataFrame:
    """The sample of judge ``model``: per query at most ``sampling.per_label`` passages per label
    it predicted in its original judgment (``judgments``), drawn with ``sampling.seed``."""
    table = sample_judged(
        read_dataset(pairs),
        read_judgments(judgments),
        judge=model,
        per_label=sampling.per_label,
        seed=int(sampling.seed),
        source=str(judgments),
    )
    write_tsv(table, sample)
    return table


def rewrite_job(
    samples: Sequence[str],
    rewrites: str,
    variant: str,
    rewriter: Writer,
    checker: Writer,
    context: JobContext,
) -> pd.DataFrame:
    """Rewrite every passage of the pooled samples once (``rewriter``: the model, the variant's
    prompt and bound), check each rewrite's meaning with ``checker`` (the meaning-check prompt;
    its model may be the rewriter's: one session then), and write all rows with their verdict,
    kept flag and reason."""
    v = _variant(variant, REWRITE_VARIANTS)
    pool = pool_samples(read_sample(s) for s in samples)
    log.info("%s: %d passages pooled from %d samples", v, len(pool), len(samples))
    with rewriter.session(context.named(f"rewrite {v}")) as rw_client:
        if checker.spec == rewriter.spec:
            result = run_rewrites(pool, v, rewriter, checker, rw_client, rw_client)
        else:
            with checker.session(context.named(f"meaning check {v}")) as ck_client:
                result = run_rewrites(pool, v, rewriter, checker, rw_client, ck_client)
    write_tsv(result, rewrites)
    return result


def insertion_job(
    samples: Sequence[str],
    insertions: str,
    sentences: str,
    insertion: Insertion,
    writer: SemWriter | None = None,
    context: JobContext | None = None,
    reviewed: str | None = None,
) -> pd.DataFrame:
    """Insert the variant's sentence at the start of every pooled grade-0, label-0 passage.

    ``insertion``: the variant, the stopword list that picks the query terms and (LEX) the
    paper's template sentence. SEM needs its ``writer`` (the SEM prompt, bound and attempts; its
    model, asked in the job's ``context``, for the queries without a ``reviewed`` sentence: a file
    of :func:`~.insertions.read_reviewed_sem`); QRY nothing else. Writes the inserted passages
    (``insertions``) and one sentence row per query (``sentences``)."""
    v = _variant(insertion.variant, INSERTION_VARIANTS)
    words = insertion.words
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
        if writer is None:
            raise ValueError("SEM needs its writer (the SEM prompt, max_tokens and max_attempts)")
        given = read_reviewed_sem(reviewed, queries, words, dataset=dataset) if reviewed else {}
        generate = [q for q in queries if q not in given]
        if generate and not writer.model:
            log.info("SEM: %d queries without a reviewed sentence and no rewriter", len(generate))
        if generate and writer.model:
            with writer.session((context or JobContext()).named("SEM")) as client:
                table = generate_sem(
                    queries, writer, client, stopwords=words, dataset=dataset, reviewed=given
                )
        else:
            table = generate_sem(queries, writer, None, stopwords=words, dataset=dataset, reviewed=given)
    else:
        table = fixed_sentences(queries, v, insertion.template or None, dataset=dataset, stopwords=words)
    inserted = build_insertions(candidates, table, v)
    write_tsv(table, sentences)
    write_tsv(inserted, insertions)
    log.info(
        "%s: %d inserted passages, %d without a sentence",
        v,
        int(inserted["ok"].sum()),
        int((~inserted["ok"]).sum()),
    )
    return inserted


def rejudge_job(
    sample: str,
    variants: str,
    rejudged: str,
    judge: OriginalJudge,
    selection: Selection,
    context: JobContext,
    rewrites: Sequence[str] = (),
    persona_file: str | None = None,
) -> pd.DataFrame:
    """Re-judge one judge's own sampled pairs on one variant (``variants``: the variant's table;
    ``selection``: the variant, its kept rewrites or valid insertions) exactly as its original
    judgment was made (``judge``: ``original`` ``peras`` - the PERAS judgment, its persona, or
    the generated one of ``persona_file``, and the label read by ``answer``; ``overrating`` - the
    overrating study's graded pointwise judgment: no persona, the label parsed where it is
    generated, token confidence beside it). ``rewrites``: every rewrite variant's table, with
    ``selection.rewrite_filter`` ``all_variants`` (a rewrite variant re-judges only the passages
    kept in all of them). Ends with the judge's coverage check unless there is nothing to judge."""
    v = _variant(selection.variant, VARIANTS)
    check_original(judge)
    own = read_sample(sample)
    judges = set(own["judge"])
    if len(judges) > 1:
        raise InputError(f"a sample table holds one judge, found {sorted(judges)}", path=str(sample))
    common = None
    if selection.rewrite_filter == "all_variants" and v not in INSERTION_VARIANTS:
        tables = [read_variant_table(p) for p in rewrites]
        common = kept_by_all(tables, list(dict.fromkeys(x for t in tables for x in t["variant"])))
    pairs = rejudge_pairs(own, read_variant_table(variants), v, common)
    name = next(iter(judges), "")
    log.info(
        "%s on %s: %d of its %d sampled pairs have a usable variant%s",
        name,
        v,
        len(pairs),
        len(own),
        f" (kept by all {len(common)} rewrite variants' filter)" if common is not None else "",
    )
    desc = f"rejudge {v} {name}"
    resolved = judge.resolved(persona_file) if judge.original == "peras" else judge
    with resolved.session(context.named(desc)) as client:
        judged = judge_variant(pairs, resolved, client, desc=desc)
    check_coverage(judged, judge, desc)
    result = judged.assign(
        judge=name,
        variant=v,
        grade=pairs["grade"].to_numpy(),
        original_label=pairs["original_label"].to_numpy(),
    )
    result = result[["judge", "variant", "grade", "original_label"] + [c for c in judged.columns]]
    result["grade"] = result["grade"].astype("Int64")
    result["original_label"] = result["original_label"].astype("Int64")
    write_tsv(result, rejudged)
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
    transitions: str,
    shifts: str,
    kept: str,
    rewrite_filter: str,
) -> pd.DataFrame:
    """Transition matrices (tidy) and label shifts (with the re-judging's coverage) per judge x
    rewrite variant, and per variant the kept fraction and the passages kept by every variant
    (``rewrite_filter``: which of them were re-judged)."""
    judged = _concat([read_rejudged(p) for p in rejudged], REJUDGE_COLUMNS)
    trans = transition_table(judged)
    shift = shift_table(judged)
    kept_fractions = kept_table([read_variant_table(p) for p in rewrites], rewrite_filter)
    write_tsv(trans, transitions)
    write_tsv(shift, shifts)
    write_tsv(kept_fractions, kept)
    for r in kept_fractions.itertuples(index=False):
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
    for r in shift.itertuples(index=False):
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
    rejudged: Sequence[str], insertions: Sequence[str], distributions: str, counts: str
) -> pd.DataFrame:
    """Label distributions per judge x insertion variant, and per variant how many passages
    and queries got a valid sentence."""
    judged = _concat([read_rejudged(p) for p in rejudged], REJUDGE_COLUMNS)
    dist = distribution_table(judged)
    counted = insertion_table(read_variant_table(p) for p in insertions)
    write_tsv(dist, distributions)
    write_tsv(counted, counts)
    for r in counted.itertuples(index=False):
        log.info(
            "%s: %d of %d passages inserted (%d of %d queries with a valid sentence)",
            r.variant,
            r.n_ok,
            r.n_passages,
            r.n_queries_ok,
            r.n_queries,
        )
    return dist


def transition_figure_job(transitions: str, png: str, pdf: str, figure: TransitionFigure) -> None:
    """The paper's Figure 1: one judge's transition heatmaps, one panel per rewrite variant (its
    re-judging coverage in the panel title). ``figure``: the judge (key and display name), the
    variants and the dataset named in the title (the pooled figure: the datasets pooled)."""
    from judgelab.studies.perturbations.figures import transition_heatmaps

    judge = figure.judge
    tidy = pd.read_csv(transitions, sep="\t", dtype={"judge": str, "variant": str})
    transition_heatmaps(
        tidy[tidy["judge"] == judge],
        [v.upper() for v in figure.variants],
        f"Label transitions under passage rewrites - {figure.display or judge}, {figure.title}",
        png,
        pdf,
    )
    log.info("%s: transition figure written (%d rows)", judge, int((tidy["judge"] == judge).sum()))


def insertion_figure_job(distributions: str, png: str, pdf: str, figure: InsertionFigure) -> None:
    """The paper's Figure 3: label distributions on non-relevant passages after each insertion,
    one bar per judge (``figure``: the variants, the judges' display names by key, the dataset
    named in the title)."""
    from judgelab.studies.perturbations.figures import insertion_distributions

    tidy = pd.read_csv(distributions, sep="\t", dtype={"judge": str, "variant": str})
    insertion_distributions(
        tidy,
        [v.upper() for v in figure.variants],
        f"Labels of non-relevant passages after insertions - {figure.title}",
        png,
        pdf,
        names=dict(figure.names) if figure.names else None,
    )
    log.info("insertion figure written (%d judges)", tidy["judge"].nunique())


def pooled_job(
    transitions: Sequence[str],
    distributions: Sequence[str],
    pooled_transitions: str,
    pooled_distributions: str,
) -> None:
    """The transition and distribution tables of every dataset pooled (counts summed, shares
    recomputed): the tables of the pooled Figures 1 and 3 (the paper pools DL19 and DL20)."""
    from judgelab.studies.perturbations.outcomes import pool_distributions, pool_transitions

    def read(paths):
        frames = [pd.read_csv(p, sep="\t", dtype={"judge": str, "variant": str}) for p in paths]
        return [f for f in frames if len(f)]

    trans = pool_transitions(read(transitions))
    dist = pool_distributions(read(distributions))
    write_tsv(trans, pooled_transitions)
    write_tsv(dist, pooled_distributions)
    log.info(
        "pooled %d transition and %d distribution tables: %d and %d rows",
        len(transitions),
        len(distributions),
        len(trans),
        len(dist),
    )


ATTACK_META = ["judge", "template", "attack", "kind", "position", "source", "grade", "query", "text"]


def attack_sample_job(pairs: str, sample: str, sampling: AttackSampling) -> pd.DataFrame:
    """The attacked passages of the dataset (``pairs``): per query at most ``sampling.per_label``
    pairs of the human grades ``sampling.grades`` and, with ``sampling.other_topics``, as many
    passages of other topics (:func:`~.attacks.attack_candidates`)."""
    from judgelab.studies.perturbations.attacks import attack_candidates

    table = attack_candidates(
        read_dataset(pairs),
        grades=sampling.grades,
        per_label=sampling.per_label,
        seed=sampling.seed,
        other_topics=sampling.other_topics,
    )
    log.info(
        "attacks: %d passages of %d queries (%s)",
        len(table),
        table["qid"].nunique(),
        table["source"].value_counts().sort_index().to_dict(),
    )
    write_tsv(table, sample)
    return table


def read_attack_sample(path: str) -> pd.DataFrame:
    df = read_tsv(path, str, missing={"grade": [""]})
    df["grade"] = df["grade"].astype("Int64")
    return df


def attack_pairs(candidates: pd.DataFrame, attack: Attack) -> pd.DataFrame:
    """The pairs a judge judges for ``attack``: every candidate clean (attack ``none``, position
    ``none``), or with the attack's text at each of its positions (a query whose STUFF text is
    empty - no query term - has no attacked pair)."""
    from judgelab.studies.perturbations.attacks import CLEAN, attack_passage, stuff_text

    if not attack.kind:
        return candidates.assign(position=CLEAN, text="")
    texts = (
        candidates["query"].map(lambda q: stuff_text(q, attack.words, attack.repeat))
        if attack.kind == "STUFF"
        else pd.Series(attack.sentence, index=candidates.index)
    )
    usable = candidates[texts != ""]
    if len(usable) < len(candidates):
        log.info(
            "%s: %d passages whose query has no term, not attacked",
            attack.name,
            len(candidates) - len(usable),
        )
    t = texts[usable.index]
    parts = []
    for position in attack.positions:
        parts.append(
            usable.assign(
                position=position,
                text=t,
                passage=[attack_passage(p, x, position) for p, x in zip(usable["passage"], t)],
            )
        )
    return pd.concat(parts, ignore_index=True) if parts else candidates.iloc[0:0].assign(position="", text="")


def attack_judge_job(
    sample: str,
    judged: str,
    judge: OriginalJudge,
    attack: Attack,
    template: str,
    context: JobContext,
    persona_file: str | None = None,
) -> pd.DataFrame:
    """Judge the attacked passages (``sample``) with ``attack``'s text at each of its positions
    (``attack.name`` ``none``: clean), exactly as the original judgment (``judge``; ``template``
    names its template: ``plain``, or ``defended`` - the judge's template inside the defense
    template). Ends with the judge's coverage check."""
    check_original(judge)
    pairs = attack_pairs(read_attack_sample(sample), attack)
    desc = f"attack {attack.name} ({template}) {judge.model}"
    log.info("%s: %d passages x positions to judge", desc, len(pairs))
    resolved = judge.resolved(persona_file) if judge.original == "peras" else judge
    with resolved.session(context.named(desc)) as client:
        result = judge_variant(pairs, resolved, client, desc=desc)
    if len(result):
        check_coverage(result, judge, desc)
    meta = pairs.assign(judge=judge.model, template=template, attack=attack.name, kind=attack.kind)
    out = pd.concat(
        [
            meta[ATTACK_META].reset_index(drop=True),
            result.drop(columns=["query"], errors="ignore").reset_index(drop=True),
        ],
        axis=1,
    )
    out["grade"] = out["grade"].astype("Int64")
    write_tsv(out, judged)
    return out


def read_attack_judged(path: str) -> pd.DataFrame:
    df = read_judgments(path)
    for col in ("judge", "template", "attack", "kind", "position", "source", "query", "text"):
        df[col] = df[col].fillna("").astype(str)
    return df


def attacks_job(judged: Sequence[str], attacks: str, markdown: str, measure: AttackMeasure) -> pd.DataFrame:
    """The attack table (:func:`~.attacks.attack_table`) of every attack judgment of the dataset
    (``judged``: clean and attacked, per template and judge), as TSV and Markdown."""
    from judgelab.analysis.render import markdown_frame
    from judgelab.studies.perturbations.attacks import attack_table

    frames = [read_attack_judged(p) for p in judged]
    table = attack_table(
        pd.concat(frames, ignore_index=True),
        relevant=measure.relevant,
        n_boot=measure.n_boot,
        seed=measure.seed,
        alpha=measure.alpha,
    )
    write_tsv(table, attacks)
    shown = table[table["passages"] == "all"].drop(columns=["dataset", "passages"])
    Path(markdown).write_text(
        f"Attacks: share judged relevant (label >= {measure.relevant}) before and after, all "
        f"attacked passages; {1 - measure.alpha:.0%} paired bootstrap interval over queries "
        f"({measure.n_boot} resamples), McNemar's exact p. Per source: the TSV.\n\n"
        + markdown_frame(shown)
        + "\n",
        encoding="utf-8",
    )
    for r in table[table["passages"] == "all"].itertuples(index=False):
        log.info(
            "%s %s %s at %s: relevant %.2f -> %.2f (%+.2f, [%.2f, %.2f]), McNemar p %.3g, n %d, coverage %.2f",
            r.judge,
            r.template,
            r.attack,
            r.position,
            r.relevant_before,
            r.relevant_after,
            r.difference,
            r.ci_low,
            r.ci_high,
            r.mcnemar_p,
            r.n,
            r.coverage,
        )
    return table


def attack_figure_job(attacks: str, png: str, pdf: str, figure: AttackFigure) -> None:
    """The attack figure: per judge, the share judged relevant before and after, one bar pair per
    attack x position (x template)."""
    from judgelab.studies.perturbations.figures import attack_bars

    table = pd.read_csv(attacks, sep="\t", dtype={"judge": str, "attack": str})
    attack_bars(
        table[table["passages"] == "all"],
        f"Share judged relevant before and after attacks - {figure.title}",
        png,
        pdf,
        names=dict(figure.names) or None,
    )
    log.info("attack figure written (%d rows)", int((table["passages"] == "all").sum()))
