"""The overrating study's requests for ``judgelab estimate``, built with the jobs' own builders
from the judges the rules pass (:meth:`~judgelab.studies.overrating.plan.Plan.pointwise_judge`,
:meth:`~judgelab.studies.overrating.plan.Plan.pairwise_judge`)."""

from __future__ import annotations

from collections.abc import Iterator

from judgelab.data.sources import JUDGED_QUERIES
from judgelab.llm.backends.base import Request
from judgelab.llm.pairwise import pairwise_jobs
from judgelab.studies.overrating.pairwise import pairwise_judge_requests, sample_pairs
from judgelab.studies.overrating.pointwise import pointwise_judge_requests

# the pairwise stand-in before a dataset is downloaded: at most 3 settings x ``per_setting`` pairs
# per judged query (JUDGED_QUERIES), an upper bound


def requests(plan, job, ctx) -> Iterator[tuple[str, Request, bool]]:
    """Pointwise: one request per pair. Pairwise: both orders of every sampled pair (the
    sampling is deterministic, so exact when the dataset's texts are known); before a public
    dataset is downloaded, 3 settings x ``per_setting`` pairs per judged query stand in (an
    upper bound, never looked up)."""
    w = job.wc
    src = ctx.pairs(w["dataset"])
    if job.rule == "overrating_pointwise":
        for req in pointwise_judge_requests(src.pairs, plan.pointwise_judge(job.model, w["scale"])):
            yield job.rule, req, src.exact and ctx.cached(job.model, req) is not None
        return
    judge, sampling = plan.pairwise_judge(job.model), plan.sampling
    if src.exact:
        sampled = sample_pairs(src.pairs, sampling.per_setting, sampling.seed, sampling.relevant_min)
        for req in pairwise_judge_requests(pairwise_jobs(src.pairs, sampled), judge):
            yield job.rule, req, ctx.cached(job.model, req) is not None
        return
    first = src.pairs.iloc[0]
    n = JUDGED_QUERIES.get(w["dataset"], src.pairs["qid"].nunique()) * 3 * sampling.per_setting
    stand_in = {"query": first["query"], "text_1": first["passage"], "text_2": first["passage"]}
    for req in pairwise_judge_requests([stand_in] * (2 * n), judge):
        yield job.rule, req, False
