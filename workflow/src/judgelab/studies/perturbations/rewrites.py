"""Meaning-preserving rewrites (PSV, ACV, SUM, EXP) and the LLM meaning check that keeps them."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

import pandas as pd

from judgelab.data.tables import read_tsv, truthy
from judgelab.errors import InputError
from judgelab.llm.backends.base import Request
from judgelab.llm.client import CachedClient
from judgelab.llm.prompts import fill, register_kind
from judgelab.studies.perturbations.settings import Writer

# The kinds of the study's prompts (resources/prompts/perturbations/): their placeholders are
# checked when a template is loaded.
register_kind("rewrite", ["passage"])


register_kind("meaning_check", ["original", "rewritten"])


log = logging.getLogger(__name__)

#: the end of a sentence: . ! ? and closing quotes or brackets, before white space or the end
SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s|$)")


REWRITE_VARIANTS = ("PSV", "ACV", "SUM", "EXP")


REWRITE_COLUMNS = [
    "dataset",
    "qid",
    "query",
    "docid",
    "grade",
    "variant",
    "original",
    "answer",
    "text",
    "truncated",
    "check_answer",
    "verdict",
    "kept",
    "reason",
    "rewrite_prompt_tokens",
    "rewrite_completion_tokens",
    "rewrite_cache_hit",
    "check_prompt_tokens",
    "check_cache_hit",
]


#: rejection reasons of a rewrite (``reason`` is empty when the rewrite is kept)
REASONS = ("changed", "unparsable", "empty")


def rewrite_requests(pool: pd.DataFrame, template: str, *, max_tokens: int) -> list[Request]:
    """One rewrite request per pooled passage: ``template`` with ``{passage}`` filled."""
    return [
        Request.from_messages([{"role": "user", "content": fill(template, passage=p)}], max_tokens)
        for p in pool["passage"]
    ]


def clean_rewrite(text: str, truncated: bool) -> str:
    """The rewrite as a one-line passage: white space collapsed, enclosing quotes removed; a
    rewrite cut by ``max_tokens`` is trimmed to its last complete sentence when it has one."""
    s = " ".join(text.split())
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        s = s[1:-1].strip()
    if truncated:
        ends = list(SENTENCE_END.finditer(s))
        if ends:
            s = s[: ends[-1].end()]
    return s


def meaning_check_requests(
    originals: Sequence[str], rewrites: Sequence[str], template: str, *, max_tokens: int
) -> list[Request]:
    """One meaning-check request per (original, rewrite): ``{original}``, ``{rewritten}`` filled."""
    return [
        Request.from_messages(
            [{"role": "user", "content": fill(template, original=o, rewritten=r)}], max_tokens
        )
        for o, r in zip(originals, rewrites)
    ]


_VERDICT = re.compile(r"[\s\"'*\[(]*(yes|no)\b", re.I)


def parse_meaning_verdict(text: str | None) -> str | None:
    """``'preserved'`` / ``'changed'`` from a meaning-check answer, or None (unparsable).

    Strict: the answer's first word (after white space, quotes, ``*``, ``[`` or ``(``) must be
    ``Yes`` (preserved) or ``No`` (changed), in any case. Anything else - another first word
    (``"The meaning is preserved"``, ``"Yess"``), an empty answer - does not parse.
    """
    if text is None:
        return None
    m = _VERDICT.match(text)
    if not m:
        return None
    return "preserved" if m.group(1).lower() == "yes" else "changed"


def meaning_filter(table: pd.DataFrame) -> pd.DataFrame:
    """Add ``verdict``, ``kept`` and ``reason`` to a table with ``text`` and ``check_answer``.

    A rewrite is kept exactly when its text is not empty and its check parses as preserved.
    Rejected rows stay, with the reason ``empty`` (no text: the check is not asked, its answer
    must be missing), ``changed`` or ``unparsable``.
    """
    verdicts: list[str | None] = []
    kept: list[bool] = []
    reasons: list[str] = []
    for text, answer in zip(table["text"], table["check_answer"]):
        has_answer = isinstance(answer, str)
        if not isinstance(text, str) or not text.strip():
            if has_answer:
                raise ValueError("a meaning check was answered for an empty rewrite")
            verdicts.append(None)
            kept.append(False)
            reasons.append("empty")
            continue
        v = parse_meaning_verdict(answer) if has_answer else None
        verdicts.append(v)
        kept.append(v == "preserved")
        reasons.append("" if v == "preserved" else (v or "unparsable"))
    return table.assign(verdict=verdicts, kept=kept, reason=reasons)


def run_rewrites(
    pool: pd.DataFrame,
    variant: str,
    rewrite: Writer,
    check: Writer,
    rewriter: CachedClient,
    checker: CachedClient,
    *,
    progress: bool = True,
) -> pd.DataFrame:
    """Rewrite every pooled passage (``rewrite``: the variant's prompt and bound, asked of the
    ``rewriter`` client), check each non-empty rewrite's meaning (``check``: the meaning-check
    prompt and bound, asked of the ``checker`` client), keep the preserved.

    One row per pooled passage (columns :data:`REWRITE_COLUMNS`), rejected ones included."""
    max_tokens = rewrite.max_tokens
    answers = rewriter.run(
        rewrite_requests(pool, rewrite.template, max_tokens=max_tokens),
        desc=f"rewrite {variant}",
        progress=progress,
    )
    rows = []
    for r, (comp, hit) in zip(pool.itertuples(index=False), answers):
        truncated = (comp.completion_tokens or 0) >= max_tokens
        rows.append(
            {
                "dataset": r.dataset,
                "qid": r.qid,
                "query": r.query,
                "docid": r.docid,
                "grade": r.grade,
                "variant": variant,
                "original": r.passage,
                "answer": comp.text,
                "text": clean_rewrite(comp.text, truncated),
                "truncated": truncated,
                "check_answer": None,
                "rewrite_prompt_tokens": comp.prompt_tokens,
                "rewrite_completion_tokens": comp.completion_tokens,
                "rewrite_cache_hit": hit,
                "check_prompt_tokens": None,
                "check_cache_hit": None,
            }
        )
    table = pd.DataFrame(rows, columns=[c for c in REWRITE_COLUMNS if c not in ("verdict", "kept", "reason")])
    ask = table.index[table["text"].str.len() > 0]
    checks = checker.run(
        meaning_check_requests(
            table.loc[ask, "original"], table.loc[ask, "text"], check.template, max_tokens=check.max_tokens
        ),
        desc=f"meaning check {variant}",
        progress=progress,
    )
    for i, (comp, hit) in zip(ask, checks):
        table.at[i, "check_answer"] = comp.text
        table.at[i, "check_prompt_tokens"] = comp.prompt_tokens
        table.at[i, "check_cache_hit"] = hit
    out = meaning_filter(table)[REWRITE_COLUMNS]
    counts = out["reason"].replace("", "kept").value_counts().to_dict()
    log.info(
        "%s: %d rewrites, %d kept (%.0f%%); %s; %d cut by max_tokens %d",
        variant,
        len(out),
        int(out["kept"].sum()),
        100 * out["kept"].mean() if len(out) else 0.0,
        counts,
        int(out["truncated"].sum()),
        max_tokens,
    )
    return out


def read_variant_table(path: str) -> pd.DataFrame:
    """A rewrites or insertions table as written by the jobs."""
    df = read_tsv(
        path,
        {
            "dataset": str,
            "qid": str,
            "query": str,
            "docid": str,
            "variant": str,
            "original": str,
            "text": str,
            "answer": str,
            "check_answer": str,
            "verdict": str,
            "reason": str,
            "sentence": str,
        },
        missing={"grade": [""]},
    )
    flag = "kept" if "kept" in df.columns else "ok"
    if flag not in df.columns or "text" not in df.columns:
        raise InputError(
            "not a rewrites or insertions table (no 'kept'/'ok' or 'text' column)", path=str(path)
        )
    df[flag] = truthy(df[flag])
    df["grade"] = df["grade"].astype("Int64")
    return df
