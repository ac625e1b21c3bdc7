"""The overrating study's requests for ``judgelab estimate``, built with the jobs' own builders."""

from __future__ import annotations

from collections.abc import Iterator

from judgelab.llm.backends.base import Request
from judgelab.studies.overrating.pairwise import pairwise_jobs, pairwise_requests, sample_pairs
from judgelab.studies.overrating.pointwise import pointwise_requests

#: Judged queries of the public datasets: the pairwise stand-in of ``judgelab estimate`` before a
#: dataset is downloaded (at most 3 settings x ``per_setting`` pairs per query, an upper bound).
JUDGED_QUERIES = {"dl19": 43, "dl20": 54, "dl21": 53, "llmjudge": 25}


def requests(plan, job, ctx) -> Iterator[tuple[str, Request, bool]]:
    """Pointwise: one request per pair. Pairwise: both orders of every sampled pair (the
    sampling is deterministic, so exact when the dataset's texts are known); before a public
    dataset is downloaded, 3 settings x ``per_setting`` pairs per judged query stand in (an
    upper bound, never looked up)."""
    w = job.wc
    src = ctx.pairs(w["dataset"])
    if job.rule == "overrating_pointwise":
        for req in pointwise_requests(
            src.pairs, plan.prompts[w["scale"]], max_tokens=int(plan.pointwise["max_tokens"])
        ):
            yield job.rule, req, src.exact and ctx.cached(job.model, req) is not None
        return
    max_tokens = int(plan.pairwise["max_tokens"])
    if src.exact:
        sampled = sample_pairs(src.pairs, **plan.sampling)
        for req in pairwise_requests(
            pairwise_jobs(src.pairs, sampled), plan.pairwise_prompt, max_tokens=max_tokens
        ):
            yield job.rule, req, ctx.cached(job.model, req) is not None
        return
    first = src.pairs.iloc[0]
    n = JUDGED_QUERIES.get(w["dataset"], src.pairs["qid"].nunique()) * 3 * plan.sampling["per_setting"]
    stand_in = {"query": first["query"], "text_1": first["passage"], "text_2": first["passage"]}
    for req in pairwise_requests([stand_in] * (2 * n), plan.pairwise_prompt, max_tokens=max_tokens):
        yield job.rule, req, False
