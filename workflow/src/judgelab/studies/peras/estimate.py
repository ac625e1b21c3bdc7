"""PERAS's requests for ``judgelab estimate``: the judge and confidence jobs' requests, built with the
jobs' own builders (:func:`judgelab.llm.judging.judgment_requests`, :func:`.confidence.confidence_requests`).
"""

from __future__ import annotations

from collections.abc import Iterator

from judgelab.llm.backends.base import Request
from judgelab.llm.judging import judgment_requests, read_judgment
from judgelab.studies.peras.confidence import confidence_requests


def requests(plan, job, ctx) -> Iterator[tuple[str, Request, bool]]:
    """Judge: every pair. Repeats (``peras.repeats`` k, judges that parse): every pair k - 1 more
    times. Confidence: the pairs whose judgment label parsed - known only where
    the judgment is cached; elsewhere every pair is counted (an upper bound)."""
    w = job.wc
    src = ctx.pairs(w["dataset"])
    text = ctx.persona_text(w["persona"])
    judge = plan.judge(job.model, w["template"], w["persona"]).but(persona=text)
    if job.rule == "peras_repeats":  # samples 1..k-1 (sample 0 is the judge job's)
        for sample in range(1, plan.repeats):
            for req in judgment_requests(src.pairs, judge, sample):
                yield job.rule, req, src.exact and ctx.cached(job.model, req) is not None
        return
    reqs = judgment_requests(src.pairs, judge)
    if job.rule == "peras_judge":
        for req in reqs:
            yield job.rule, req, src.exact and ctx.cached(job.model, req) is not None
        return
    asked_rows, labels, upper = [], [], []
    for i, req in enumerate(reqs):
        hit = ctx.cached(job.model, req) if src.exact else None
        if hit is None:
            upper.append(i)  # label unknown: counted as asked
        else:
            label, _ = read_judgment(
                hit["text"], hit.get("label_probs"), judge.labels, judge.answer, judge.parser
            )
            if label is not None:
                asked_rows.append(i)
                labels.append(label)
    confidence = plan.confidence_judge(job.model, w["persona"]).but(persona=text)
    for req in confidence_requests(src.pairs.iloc[asked_rows], labels, confidence):
        yield "peras_confidence", req, ctx.cached(job.model, req) is not None
    for req in confidence_requests(src.pairs.iloc[upper], [0] * len(upper), confidence):
        yield "peras_confidence", req, False
