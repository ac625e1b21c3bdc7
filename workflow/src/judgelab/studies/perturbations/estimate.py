"""The perturbation study's requests for ``judgelab estimate``, built with the jobs' own request
builders and settings values (the plan's judge, rewriter, meaning checker and SEM writer).

Each stage depends on the answers of the one before (the judge's labels choose the sample, the
rewrites are checked, the kept rewrites and valid sentences are re-judged): where those answers
are cached they are used, else an upper bound stands in (every pair a sample could hold, a
rewrite of ``rewrite_max_tokens`` kept, every SEM attempt), counted as not cached. A dataset not
downloaded yet is a stand-in of one pair per query (its known size): then every pair is sampled
and every pair is a query for SEM - a loose upper bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from judgelab.data.sources import JUDGED_QUERIES
from judgelab.llm.backends.base import Request
from judgelab.studies.perturbations.insertions import (
    build_insertions,
    first_sentence,
    fixed_sentences,
    insertion_candidates,
    read_reviewed_sem,
    sem_failure,
    sem_request,
)
from judgelab.studies.perturbations.originals import label_of
from judgelab.studies.perturbations.outcomes import kept_by_all, rejudge_pairs
from judgelab.studies.perturbations.rewrites import (
    clean_rewrite,
    meaning_check_requests,
    parse_meaning_verdict,
    rewrite_requests,
)
from judgelab.studies.perturbations.sampling import pool_samples


@dataclass
class _Sample:
    """One judge's sample for the estimate: the sample table (``label`` -1 where unknown) and
    whether it is the one the job will draw (False: an upper bound standing in for it)."""

    table: pd.DataFrame
    exact: bool


def _cached(ctx, model: str, request: Request) -> dict | None:
    """The cached answer, or None (also when the estimate left the model out: ``--model``)."""
    return ctx.cached(model, request) if model in ctx.backends else None


def requests(plan, job, ctx) -> Iterator[tuple[str, Request, bool]]:
    """The requests of one job, built with the jobs' own builders. Each stage depends on the
    answers of the one before (the judge's labels choose the sample, the rewrites are
    checked, the kept rewrites and valid sentences are re-judged): where those answers are
    cached they are used, else an upper bound stands in (every pair a sample could hold, a
    rewrite of ``rewrite_max_tokens`` kept, every SEM attempt), counted as not cached. A
    dataset not downloaded yet is a stand-in of one pair per query (its known size): then
    every pair is sampled and every pair is a query for SEM - a loose upper bound."""
    w = job.wc
    if job.rule in ("peras_judge", "overrating_pointwise"):  # the original judgment: the original's requests
        src = ctx.pairs(w["dataset"])
        for req in plan.judge_requests(src.pairs, job.model, plan._persona_text(ctx)):
            yield job.rule, req, src.exact and ctx.cached(job.model, req) is not None
        return
    if job.rule == "perturbation_attack_judge":
        yield from _attack_requests(plan, ctx, w["dataset"], w["defense"], w["attack"], job.model)
        return
    est = _estimate(plan, ctx, w["dataset"])
    if job.rule == "perturbation_rewrite":
        v = plan.variant(w["variant"])
        if job.model == plan.rewriter:
            yield from (("rewrite", r, c) for r, c in est["rewrite"][v])
        if job.model == plan.checker:
            yield from (("meaning_check", r, c) for r, c in est["check"][v])
    elif job.rule == "perturbation_sem":
        yield from (("sem", r, c) for r, c in est["sem"])
    elif job.rule == "perturbation_rejudge":
        yield from (("rejudge", r, c) for r, c in est["rejudge"][(plan.variant(w["variant"]), job.model)])
    else:
        raise ValueError(f"{job.rule} is not an LLM rule of {plan.name}")


def _estimate(plan, ctx, dataset: str) -> dict:
    key = (ctx, dataset)
    if key not in plan._estimates:
        plan._estimates[key] = _build_estimate(plan, ctx, dataset)
    return plan._estimates[key]


def _sample(plan, ctx, dataset: str, judge: str) -> _Sample:
    """The judge's sample from its cached original labels; an upper bound when any is unknown:
    per query up to ``per_label`` grade-0 pairs (labelled 0: the insertion candidates it
    could have), then other pairs up to ``4 x per_label`` (label -1)."""
    from judgelab.studies.perturbations.sampling import SAMPLE_COLUMNS, sample_judged

    src = ctx.pairs(dataset)
    sampling = plan.sampling_settings()
    per_label, seed = sampling.per_label, sampling.seed
    labels = []
    if src.exact:
        reqs = plan.judge_requests(src.pairs, judge, plan._persona_text(ctx))
        reading = plan.judge(judge)
        for req in reqs:
            hit = _cached(ctx, judge, req)
            if hit is None:
                break
            labels.append(label_of(hit, reading))
    if src.exact and len(labels) == len(src.pairs):
        judged = src.pairs[["qid", "docid"]].assign(
            label=pd.array(labels, dtype="Int64"), parsed=[lab is not None for lab in labels]
        )
        return _Sample(sample_judged(src.pairs, judged, judge=judge, per_label=per_label, seed=seed), True)
    pairs = src.pairs.sort_values(["qid", "docid"], kind="stable").reset_index(drop=True)
    zero = pairs["grade"] == 0
    candidate = zero & (zero.astype(int).groupby(pairs["qid"]).cumsum() <= per_label)
    rest = ~candidate
    room = 4 * per_label - candidate.astype(int).groupby(pairs["qid"]).transform("sum")
    keep = candidate | (rest & (rest.astype(int).groupby(pairs["qid"]).cumsum() <= room))
    table = pairs[keep].assign(label=candidate[keep].map({True: 0, False: -1}), judge=judge)
    return _Sample(table[SAMPLE_COLUMNS].reset_index(drop=True), False)


def _build_estimate(plan, ctx, dataset: str) -> dict:
    from judgelab.llm.backends.base import Completion

    samples = {m: _sample(plan, ctx, dataset, m) for m in plan.judges}
    exact = all(x.exact for x in samples.values())
    pool = pool_samples(x.table for x in samples.values())
    out: dict = {"rewrite": {}, "check": {}, "sem": [], "rejudge": {}}
    tables: dict[str, pd.DataFrame] = {}
    check = plan.check_writer() if plan.rewrite_variants else None
    for v in plan.rewrite_variants:
        rewrite = plan.rewrite_writer(v)
        rw_max = rewrite.max_tokens
        reqs = rewrite_requests(pool, rewrite.template, max_tokens=rw_max)
        rewrites, checks, rows = [], [], []
        for r, req in zip(pool.itertuples(index=False), reqs):
            hit = _cached(ctx, plan.rewriter, req) if exact else None
            rewrites.append((req, hit is not None))
            if hit is None:  # stand-in: a rewrite of the full length, kept
                text, known = "x" * (4 * rw_max), False
            else:
                comp = Completion.from_json(hit)
                text = clean_rewrite(comp.text, (comp.completion_tokens or 0) >= rw_max)
                known = True
            kept = False
            if text and check is not None:
                creq = meaning_check_requests(
                    [r.passage], [text], check.template, max_tokens=check.max_tokens
                )[0]
                chit = _cached(ctx, plan.checker, creq) if known else None
                checks.append((creq, chit is not None))
                known = chit is not None
                kept = chit is None or parse_meaning_verdict(chit["text"]) == "preserved"
            rows.append(
                {
                    "dataset": r.dataset,
                    "qid": r.qid,
                    "docid": r.docid,
                    "variant": v,
                    "text": text,
                    "kept": kept,
                    "known": known,
                }
            )
        out["rewrite"][v], out["check"][v] = rewrites, checks
        tables[v] = pd.DataFrame(
            rows, columns=["dataset", "qid", "docid", "variant", "text", "kept", "known"]
        )
    candidates = insertion_candidates(x.table for x in samples.values())
    queries = dict(zip(candidates["qid"], candidates["query"]))
    for v in plan.insertions:
        if v == "SEM":
            sentences = _sem(plan, ctx, queries, exact, out["sem"])
        else:
            insertion = plan.insertion(v)
            sentences = fixed_sentences(
                queries, v, insertion.template or None, dataset=dataset, stopwords=insertion.words
            ).assign(known=True)
        table = build_insertions(candidates, sentences, v)
        tables[v] = table.merge(sentences[["qid", "known"]], on="qid", how="left")
    common = None
    if plan.rewrite_filter == "all_variants" and plan.rewrite_variants:
        common = kept_by_all([tables[v] for v in plan.rewrite_variants], plan.rewrite_variants)
    persona = plan._persona_text(ctx)
    for v in plan.variants:
        table = tables[v]
        for m, sample in samples.items():
            pairs = rejudge_pairs(sample.table, table, v, common)
            known = pairs.merge(
                table[["dataset", "qid", "docid", "known"]], on=["dataset", "qid", "docid"], how="left"
            )["known"].fillna(False)
            reqs = plan.judge_requests(pairs, m, persona)
            out["rejudge"][(v, m)] = [
                (req, bool(k) and sample.exact and _cached(ctx, m, req) is not None)
                for req, k in zip(reqs, known)
            ]
    return out


def _sem(plan, ctx, queries: dict[str, str], exact: bool, requests: list) -> pd.DataFrame:
    """SEM's requests (appended to ``requests``) and sentences: attempt k+1 is asked where the
    cached attempt k fails the check; from the first uncached attempt on, every remaining
    attempt is counted (an upper bound) and a sentence of ``sem_max_tokens`` stands in."""

    writer = plan.sem_writer()
    max_tokens, attempts = writer.max_tokens, writer.max_attempts
    words = plan.insertion("SEM").words
    reviewed = read_reviewed_sem(plan.sem_file, queries, words) if plan.sem_file else {}
    rows = []
    for qid, query in queries.items():
        sentence, known = reviewed.get(qid, ("", True))[0], True
        # a reviewed sentence asks nothing; without a rewriter nothing can be asked
        for a in range(1, attempts + 1 if not sentence and plan.rewriter else 1):
            req = sem_request(query, writer.template, a, max_tokens=max_tokens, stopwords=words)
            hit = _cached(ctx, plan.rewriter, req) if exact and known else None
            requests.append((req, hit is not None))
            if hit is None:
                known, sentence = False, "x" * (4 * max_tokens)
                continue
            candidate = first_sentence(hit["text"])
            if not sem_failure(candidate, query, words):
                sentence = candidate
                break
        rows.append(
            {
                "qid": qid,
                "query": query,
                "variant": "SEM",
                "sentence": sentence,
                "ok": bool(sentence),
                "reason": "" if sentence else "failed",
                "known": known,
            }
        )
    return pd.DataFrame(rows, columns=["qid", "query", "variant", "sentence", "ok", "reason", "known"])


def _attack_requests(plan, ctx, dataset: str, defense: str, attack: str, model: str):
    """An attack judge job's requests: exact, since the attacked passages depend on the dataset
    table only; for a dataset not downloaded yet an upper bound: per judged query ``per_label``
    passages (and as many of other topics) of the stand-in's typical length."""
    from judgelab.studies.perturbations.attacks import attack_candidates
    from judgelab.studies.perturbations.jobs import attack_pairs
    from judgelab.studies.perturbations.originals import variant_requests

    sampling = plan.attack_sampling()
    src = ctx.pairs(dataset)
    if src.exact:
        candidates = attack_candidates(
            src.pairs,
            grades=sampling.grades,
            per_label=sampling.per_label,
            seed=sampling.seed,
            other_topics=sampling.other_topics,
        )
    else:  # per judged query per_label assessed passages (and as many of other topics): a bound
        n_queries = JUDGED_QUERIES.get(dataset, src.pairs["qid"].nunique())
        n = min(len(src.pairs), n_queries * sampling.per_label) * (2 if sampling.other_topics else 1)
        candidates = pd.concat([src.pairs] * 2, ignore_index=True).iloc[:n]
    pairs = attack_pairs(candidates, plan.attack(attack))
    judge = plan.attack_judge(model, defense)
    if judge.original == "peras":
        judge = judge.but(persona=plan._persona_text(ctx) or "")
    for req in variant_requests(pairs, judge):
        yield "attack", req, src.exact and _cached(ctx, model, req) is not None
