"""Pointwise judgment with a persona and a template (PERAS, section 4.2), shared by the studies
that judge pairs this way (PERAS, the perturbations' original and re-judged labels, ranking), and
the coverage check every judge job of every study ends with.

For every pair the prompt is persona || template(query, passage), and the label-token
probabilities are read at the answer position where the backend can. A request built here is the
same for every study that judges the same pair with the same model, template and persona, so one
study's answers are cache hits for the others. An answer that does not parse is kept as raw text
with ``parsed = False`` and a missing label; it never becomes a grade.

How the label is read (``answer``):

* ``parse`` - from the answer text (:func:`judgelab.llm.answers.read_label`, the template's labels,
  the rules of the judge's parser version; the row's ``parse_rule`` names the rule that read it);
* ``logits`` - the template's label with the largest probability at the first answer position
  (the label-token distribution the backend returns; one answer token is generated), as the
  simulation study's ``answer: logits``; a backend that returns no distribution, or a tie
  between the largest probabilities, gives a missing label (``parse_rule``: ``logits``);
* ``auto`` (resolved by :func:`judgelab.llm.judge.resolve_answer`) - ``logits`` for the embedded (``local``)
  backend, ``parse`` for every API backend.

:func:`require_coverage`: a judge job whose answers parse less than ``min_coverage`` of the time
(or not at all) stops with an error naming the model, the template and the share, and what to try.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping, Sequence

import pandas as pd

from judgelab.data.labels import GRADE_LABELS
from judgelab.data.tables import JUDGMENT_COLUMNS
from judgelab.errors import InputError
from judgelab.llm.answers import label_rules, label_value, read_label
from judgelab.llm.backends import capabilities
from judgelab.llm.backends.base import Completion, Request
from judgelab.llm.client import CachedClient
from judgelab.llm.judge import ANSWER_MODES, Coverage, Judge
from judgelab.llm.prompts import build_messages, fill
from judgelab.llm.session import JobContext

log = logging.getLogger(__name__)


def request_max_tokens(max_tokens: int, answer: str = "parse") -> int:
    """The answer bound a request is sent with: 1 token when the label is read from the logits
    (only the first answer position is read), the template's bound otherwise."""
    return 1 if answer == "logits" else int(max_tokens)


def judgment_requests(pairs: pd.DataFrame, judge: Judge, sample: int = 0) -> list[Request]:
    """One request per pair: the judge's persona instruction (:meth:`Judge.resolved`) and its
    template filled with the pair's query and passage, sent with the judge's bound (one token when
    the label is read from the logits); ``sample``: the repeat's index (0: the judge job's own
    request, 1..k-1: the requests of a judge asked k times, each cached on its own). Pairs of the same query and passage share one (frozen)
    request: rendered once (``judgelab estimate`` of a dataset not downloaded yet counts thousands of
    pairs of one typical text)."""
    max_tokens = request_max_tokens(judge.max_tokens, judge.answer)
    made: dict[tuple[str, str], Request] = {}

    def request(query: str, passage: str) -> Request:
        key = (query, passage)
        if key not in made:
            made[key] = Request.from_messages(
                build_messages(
                    judge.persona, fill(judge.template, query=query, document=passage), judge.placement
                ),
                max_tokens,
                GRADE_LABELS,
                sample=sample,
            )
        return made[key]

    return [request(q, p) for q, p in zip(pairs["query"], pairs["passage"])]


def cut_by_bound(comp: Completion, bound: int | None) -> bool:
    """Was the answer cut by its token bound (:meth:`Completion.truncated`)? Never for a bound of
    one token: that asks for the label token alone (the logits reading, the overrating study's
    token confidence), so the one-token answer is the design, not a cut."""
    return bound is not None and int(bound) > 1 and comp.truncated(bound)


def answer_cells(comp: Completion, truncated: bool, rule: str | None, decoding: str | None = None) -> dict:
    """A judgment row's :data:`~judgelab.data.tables.ANSWER_COLUMNS`: whether the answer was cut,
    the rule that read it, who answered (finish reason, served model, fingerprint) and the
    decoding parameters it was asked with (:meth:`CachedClient.decoding`)."""
    return {
        "truncated": bool(truncated),
        "parse_rule": rule,
        "finish_reason": comp.finish_reason,
        "served_model": comp.served_model,
        "system_fingerprint": comp.system_fingerprint,
        "decoding": decoding,
    }


def label_from_probs(probs: Sequence[float] | None, labels: Sequence[str] = GRADE_LABELS) -> int | None:
    """The label of ``labels`` with the largest probability in ``probs`` (one per grade 0-3, the
    distribution of :data:`GRADE_LABELS` at the first answer position), or None: no
    distribution, or a tie between the largest."""
    if not probs:
        return None
    cand = [(float(probs[GRADE_LABELS.index(str(lab))]), int(lab)) for lab in labels]
    best = max(p for p, _ in cand)
    top = [lab for p, lab in cand if p == best]
    return top[0] if len(top) == 1 and math.isfinite(best) else None


def read_judgment(
    text: str,
    probs: Sequence[float] | None,
    labels: Sequence[str],
    answer: str,
    parser: int | None = None,
) -> tuple[int | str | None, str | None]:
    """The label of one answer under the reading ``answer`` (``parse`` or ``logits``) and how it
    was read: the answer rule's name (parser version ``parser``, None: the current one),
    ``logits``, or None when the label is missing."""
    if answer == "logits":
        label = label_from_probs(probs, labels)
        return label, ("logits" if label is not None else None)
    labels = tuple(str(x) for x in labels)
    got = read_label(text, labels, rules=label_rules(parser))
    return label_value(got, labels), got.rule


def run_judgments(
    pairs: pd.DataFrame,
    judge: Judge,
    client: CachedClient,
    *,
    desc: str = "judge",
    progress: bool = True,
    sample: int = 0,
) -> pd.DataFrame:
    """Judge every pair; one output row per input row, in input order. An answer outside the
    judge's labels is missing (``parsed`` false); ``judge.answer``: ``parse`` or ``logits`` (see
    the module docstring); ``sample``: the repeat's index (:func:`judgment_requests`)."""
    if judge.answer not in ANSWER_MODES:
        raise ValueError(f"answer must be one of {ANSWER_MODES} here, got {judge.answer!r}")
    requests = judgment_requests(pairs, judge, sample)
    answers = client.run(requests, desc=desc, progress=progress)
    return _judgment_frame(pairs, judge, client, requests, answers, desc)


def run_judgment_samples(
    pairs: pd.DataFrame,
    judge: Judge,
    client: CachedClient,
    samples: Sequence[int],
    *,
    desc: str = "judge",
    progress: bool = True,
) -> list[pd.DataFrame]:
    """:func:`run_judgments` of every sample index of ``samples`` (a judge asked several times),
    one table per sample in that order; the requests of all samples go to the client at once (one
    provider batch in batch mode, not one per sample)."""
    if judge.answer not in ANSWER_MODES:
        raise ValueError(f"answer must be one of {ANSWER_MODES} here, got {judge.answer!r}")
    per_sample = [judgment_requests(pairs, judge, s) for s in samples]
    answers = client.run([r for reqs in per_sample for r in reqs], desc=desc, progress=progress)
    n = len(pairs)
    return [
        _judgment_frame(pairs, judge, client, reqs, answers[i * n : (i + 1) * n], f"{desc} sample {s}")
        for i, (s, reqs) in enumerate(zip(samples, per_sample))
    ]


def _judgment_frame(
    pairs: pd.DataFrame,
    judge: Judge,
    client: CachedClient,
    requests: Sequence[Request],
    answers: Sequence[tuple[Completion, bool]],
    desc: str,
) -> pd.DataFrame:
    """The judgment table of ``pairs`` from the answers to their ``requests`` (one each, in order)."""
    answer, labels = judge.answer, judge.labels
    rows = []
    for row, req, (comp, hit) in zip(pairs.itertuples(index=False), requests, answers):
        label, rule = read_judgment(comp.text, comp.label_probs, labels, answer, judge.parser)
        probs: list[float | None] = list(comp.label_probs) if comp.label_probs else [None] * 4
        expected = sum(k * p for k, p in enumerate(comp.label_probs)) if comp.label_probs else None
        rows.append(
            {
                "dataset": row.dataset,
                "qid": row.qid,
                "docid": row.docid,
                "label": label,
                "parsed": label is not None,
                "answer": comp.text,
                "p0": probs[0],
                "p1": probs[1],
                "p2": probs[2],
                "p3": probs[3],
                "label_mass": comp.label_mass,
                "expected_grade": expected,
                "prompt_tokens": comp.prompt_tokens,
                "completion_tokens": comp.completion_tokens,
                "latency_s": comp.latency_s,
                "cache_hit": hit,
                **answer_cells(
                    comp,
                    answer == "parse" and cut_by_bound(comp, judge.max_tokens),
                    rule,
                    client.decoding(req),
                ),
            }
        )
    out = pd.DataFrame(rows, columns=JUDGMENT_COLUMNS)
    out["label"] = out["label"].astype("Int64")
    for col in ("p0", "p1", "p2", "p3", "label_mass", "expected_grade"):
        out[col] = out[col].astype("Float64")
    n_missing = int((~out["parsed"]).sum())
    log.info(
        "%s: %d pairs, %d %s, %d missing (%s)%s",
        desc,
        len(out),
        len(out) - n_missing,
        "read from the logits" if answer == "logits" else "parsed",
        n_missing,
        "no label distribution" if answer == "logits" else "unparsable answers",
        "" if answer == "logits" else f"; read by {rule_counts(out['parse_rule'])}",
    )
    return out


def log_served(desc: str, judge: Judge, served_models) -> list[str]:
    """Log once per job which model answered: every served model name the responses gave, and a
    warning when one is not the configured model (``models.<model>.model``; :func:`same_model`: a
    dated name behind an alias, ``gpt-4o`` -> ``gpt-4o-2024-08-06``, is only recorded). The
    embedded model's file name is recorded, not compared. Returns the names."""
    names = sorted({str(x) for x in pd.Series(served_models, dtype="object").dropna()})
    if not names:
        return names
    configured = str(judge.spec.get("model") or "")
    other = [
        n
        for n in names
        if configured and not capabilities(judge.backend).runs_here and not same_model(configured, n)
    ]
    if other:
        log.warning(
            "%s: answered by %s, not the configured models.%s.model %r (recorded in the rows' served_model)",
            desc,
            ", ".join(other),
            judge.model,
            configured,
        )
    else:
        log.info("%s: answered by %s", desc, ", ".join(names))
    return names


#: What may follow a configured model name in the served one: a date or version stamp
#: (``-2024-08-06``, ``-20241022``, ``-0613``, ``:2``, ``-v1.0``, ``@001``).
_DATED = re.compile(r"[-@:_.]?(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{3,4}|v?\d+(?:[.:]\d+)*)")


def same_model(configured: str, served: str) -> bool:
    """Is ``served`` the model ``configured`` names: the same name, or that name with a date or
    version stamp after it (``gpt-4o`` served as ``gpt-4o-2024-08-06``)? ``gpt-4o-mini`` is another
    model; so is ``claude-3-5-sonnet-20241022`` behind the alias ``claude-3-5-sonnet-latest`` (the
    alias resolved: reported, so the dated name can be pinned)."""
    if served == configured:
        return True
    return served.startswith(configured) and _DATED.fullmatch(served[len(configured) :]) is not None


def rule_counts(rules) -> str:
    """``label-only 5, first-line 2`` (the rules that read a table's labels, by count), or
    ``no rule`` when none did."""
    counts = pd.Series(rules, dtype="object").dropna().value_counts()
    return ", ".join(f"{rule} {n}" for rule, n in counts.items()) or "no rule"


# --------------------------------------------------------------------------------------------
# Coverage: every judge job of every study ends with this check


class CoverageError(InputError):
    """A judge job whose answers parse too rarely to measure anything (see :func:`require_coverage`)."""


def require_coverage(
    parsed: Sequence[bool],
    answers: Sequence[str | None],
    *,
    coverage: Coverage | str | Mapping | None,
    model: str,
    backend: str | None,
    bound: int,
    what: str,
    truncated: Sequence[bool] | None = None,
) -> float | None:
    """Stop a judge job whose answers parse too rarely: nothing parsed of at least one answer, or
    a parsed share below ``coverage.min_coverage``. The error (:class:`CoverageError`, naming the
    key ``min_coverage``) names the job, the model, the template and the share, shows a few
    unparsed answers and says what to try: a larger answer bound (``bound_key``, now ``bound``),
    the model's chat-template switch (API models: e.g. Qwen3's ``enable_thinking: false``), the
    logits reading where the study has one (local models), or a lower ``min_coverage``. Returns
    the share (None for a job with nothing to judge, which never fails). The answers are in the
    request cache: a rerun with only the threshold changed sends nothing.

    ``truncated`` (one flag per answer: cut by the bound) splits the missing answers into
    truncated and unparsable ones, in the log line and in the error; when most missing answers
    were cut, the error says so right after the share ("truncated: ..., raise <bound key>"): the
    bound, not the judge, is then what failed."""
    cov = Coverage.from_param(coverage)
    flags = [bool(x) for x in parsed]
    n, k = len(flags), sum(flags)
    if not n:
        log.info("%s: nothing to judge (coverage undefined)", what)
        return None
    cut = [bool(x) for x in truncated] if truncated is not None else [False] * n
    n_cut = sum(1 for ok, c in zip(flags, cut) if not ok and c)
    split = f"{n - k - n_cut} unparsable, {n_cut} truncated"
    share = k / n
    if cov is None:
        return share
    if k and share >= cov.min_coverage:
        log.info(
            "%s: coverage %.3f (%d of %d parsed; %s; min_coverage %g)",
            what,
            share,
            k,
            n,
            split,
            cov.min_coverage,
        )
        return share
    bound_try = (
        f"a larger answer bound ({cov.bound_key}, now {bound}: a judge that writes a prefix, "
        "or reasons first, needs room before its label)"
    )
    tries = [bound_try]
    lead = ""
    if n_cut and 2 * n_cut >= n - k:
        lead = (
            f"truncated: {n_cut} of the {n - k} missing answers were cut by the bound of {bound} "
            f"tokens, raise {cov.bound_key}; "
        )
    if capabilities(backend).reads_logits:
        if cov.answer_key:
            tries.append(f"reading the label from the logits ({cov.answer_key}: logits, or auto)")
    else:
        tries.append(
            "the model's chat-template switch (a thinking model spends the bound in its think "
            f"block first: Qwen3 served by vLLM needs models.{model}.extra_body: "
            "{chat_template_kwargs: {enable_thinking: false}})"
        )
    tries.append(f"a lower min_coverage (now {cov.min_coverage:g}; 0 keeps only the all-unparsed check)")
    shown = list(dict.fromkeys(_short(a) for a, ok in zip(answers, flags) if not ok))[:3]
    examples = "; ".join(repr(a) for a in shown)
    raise CoverageError(
        f"{what}: {k} of {n} answers of model {model!r} with template {cov.template} parsed "
        f"({split}; coverage {share:.1%}, min_coverage {cov.min_coverage:g}); {lead}nothing is measured on "
        f"answers that do not parse. Unparsed answers, e.g.: {examples}. Try {'; '.join(tries)}. "
        "The answers are in the request cache: a rerun sends only requests that changed",
        key="min_coverage",
    )


def _short(text: str | None, limit: int = 80) -> str:
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return ""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def log_cut_answers(desc: str, completion_tokens, max_tokens: int) -> int:
    """Log how many answers used the whole ``max_tokens`` bound (cut where the model would have
    gone on: a label read from such an answer stands, one that never came is missing). Returns
    the count."""
    used = pd.to_numeric(pd.Series(completion_tokens, dtype="object"), errors="coerce")
    cut = int((used >= max_tokens).sum())
    if cut:
        log.warning(
            "%s: %d of %d answers reached the bound of %d tokens (cut; unparsable ones count as missing)",
            desc,
            cut,
            len(used),
            max_tokens,
        )
    else:
        log.info("%s: no answer reached the bound of %d tokens", desc, max_tokens)
    return cut


def judge_table(table: pd.DataFrame, judge: Judge, context: JobContext) -> pd.DataFrame:
    """The judge job of every study that judges pairs with a persona and a template (PERAS's judge,
    the perturbation study's judgments, the ranking study's pool): the judge's model session
    (:meth:`Judge.session`, the request cache under it), :func:`run_judgments`, the answers that
    reached the bound counted in the log (parse reading), and the coverage check
    (:func:`require_coverage`). ``judge``: resolved (its persona the instruction itself). The same
    pair, template, persona, bound and reading make the same request in every study."""
    desc = context.desc
    with judge.session(context) as client:
        result = run_judgments(table, judge, client, desc=desc)
    if judge.answer == "parse":  # a logits reading sends one token: no answer is cut
        log_cut_answers(desc, result["completion_tokens"], judge.max_tokens)
    check_coverage(result, judge, desc)
    return result


def check_coverage(judged: pd.DataFrame, judge: Judge, what: str) -> float | None:
    """:func:`require_coverage` of a judge job's table (its ``parsed`` and ``answer`` columns),
    with the judge's floor, model, backend and bound (one token when read from the logits): the
    check every judge job of every study ends with; before it, who answered (:func:`log_served`)."""
    if "served_model" in judged.columns:
        log_served(what, judge, judged["served_model"])
    return require_coverage(
        judged["parsed"],
        judged["answer"],
        coverage=judge.coverage,
        model=judge.model,
        backend=judge.backend,
        bound=judge.max_tokens if judge.answer == "parse" else 1,
        what=what,
        truncated=judged["truncated"] if "truncated" in judged.columns else None,
    )
