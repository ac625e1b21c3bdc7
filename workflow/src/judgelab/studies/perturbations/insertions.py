"""Query-dependent insertions (SEM, LEX, QRY) into passages judged non-relevant, and the query
terms and SEM verification they rest on.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Iterable, Mapping

import pandas as pd

from ...backends.base import CachedClient, Request
from ...errors import InputError
from ...prompts import fill, register_kind
from .rewrites import SENTENCE_END
from .sampling import pool_samples

log = logging.getLogger(__name__)


register_kind("sem_sentence", ["query", "terms", "attempt"])


register_kind("lex_sentence", ["terms"])


INSERTION_VARIANTS = ("SEM", "LEX", "QRY")


SENTENCE_COLUMNS = [
    "dataset",
    "qid",
    "query",
    "variant",
    "terms",
    "sentence",
    "ok",
    "attempts",
    "reason",
    "tries",
]


INSERTION_COLUMNS = [
    "dataset",
    "qid",
    "query",
    "docid",
    "grade",
    "variant",
    "sentence",
    "original",
    "text",
    "ok",
    "reason",
]


#: a SEM sentence needs at least this many words
SEM_MIN_WORDS = 3


_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


_POSSESSIVE = re.compile(r"['’]s$")


def words(text: str) -> list[str]:
    """Runs of letters/digits, an inner apostrophe kept (``don't``, ``goldfish's``)."""
    return _WORD.findall(text)


def _norm(word: str) -> str:
    return _POSSESSIVE.sub("", word.casefold())


@functools.cache
def stop_words() -> frozenset[str]:
    """scikit-learn's ``ENGLISH_STOP_WORDS`` (imported on first use: the rewrite and re-judge
    jobs never pay for the import)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def is_stopword(word: str) -> bool:
    w = word.casefold()
    return w in stop_words() or _norm(w) in stop_words()


def query_terms(query: str) -> list[str]:
    """The query's non-stopword words (scikit-learn's ``ENGLISH_STOP_WORDS``), de-duplicated
    case-insensitively, in query order, as written in the query."""
    seen, out = set(), []
    for w in words(query):
        if is_stopword(w) or _norm(w) in seen:
            continue
        seen.add(_norm(w))
        out.append(w)
    return out


def inflection_forms(word: str) -> set[str]:
    """The word (case folded, possessive ``'s`` removed) and every form obtained by undoing one
    suffix: -s, -es, -ies -> -y, -ied -> -y, and -ing / -ed, each also with an -e restored and with
    a doubled final consonant undone. Forms shorter than 3 characters are left out."""
    w = _norm(word)
    forms = {w}

    def add(form: str) -> None:
        if len(form) >= 3:
            forms.add(form)

    if w.endswith("ies") or w.endswith("ied"):
        add(w[:-3] + "y")
    if w.endswith("es"):
        add(w[:-2])
    if w.endswith("s") and not w.endswith("ss"):
        add(w[:-1])
    for suffix in ("ing", "ed"):
        if w.endswith(suffix):
            base = w[: -len(suffix)]
            add(base)
            add(base + "e")
            if len(base) >= 2 and base[-1] == base[-2] and base[-1] not in "aeiou":
                add(base[:-1])
    return forms


def sem_violations(sentence: str, query: str) -> list[str]:
    """The query terms the sentence uses: a sentence word matches a term when their
    :func:`inflection_forms` share a form."""
    found: set[str] = set()
    for w in words(sentence):
        found |= inflection_forms(w)
    return [t for t in query_terms(query) if inflection_forms(t) & found]


def sem_failure(sentence: str, query: str) -> str:
    """Why a SEM sentence is not usable (empty when it is): ``empty``, ``query terms: ...`` (the
    terms it uses) or ``too short`` (fewer than :data:`SEM_MIN_WORDS` words: "Sure!" is no answer)."""
    if not sentence:
        return "empty"
    bad = sem_violations(sentence, query)
    if bad:
        return "query terms: " + ", ".join(bad)
    return "too short" if len(words(sentence)) < SEM_MIN_WORDS else ""


def first_sentence(text: str) -> str:
    """The first sentence of the answer's first non-empty line, enclosing quotes and ``*``
    removed (the rewriter is asked for one sentence; anything after it is dropped)."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = line.strip("*\"'“” ").strip()
    m = SENTENCE_END.search(line)
    return line[: m.end()].strip("\"'“”) ") if m else line


def lex_sentence(query: str, template: str) -> str:
    """LEX: the seed's template sentence with the query terms joined by ``", "`` as ``{terms}``."""
    return fill(template, terms=", ".join(query_terms(query)))


def qry_sentence(query: str) -> str:
    """QRY: the query string itself (white space trimmed)."""
    return query.strip()


def insert(sentence: str, passage: str) -> str:
    """The passage with ``sentence`` inserted at its start."""
    return f"{sentence} {passage}"


def sem_request(query: str, template: str, attempt: int, *, max_tokens: int) -> Request:
    return Request.from_messages(
        [
            {
                "role": "user",
                "content": fill(template, query=query, terms=", ".join(query_terms(query)), attempt=attempt),
            }
        ],
        max_tokens,
    )


def generate_sem(
    queries: Mapping[str, str],
    template: str,
    client: CachedClient,
    *,
    max_tokens: int,
    max_attempts: int,
    dataset: str = "",
    progress: bool = True,
) -> pd.DataFrame:
    """One SEM sentence per query: requested, verified by :func:`sem_failure`, requested again
    with the next attempt number while it fails, at most ``max_attempts`` times. Every try is
    recorded (``tries``: JSON list of attempt, sentence, violations); a query whose tries all fail
    has ``ok`` False, an empty sentence and the last failure as ``reason``."""
    if max_attempts < 1:
        raise InputError(f"must be >= 1, got {max_attempts}", key="perturbations.sem_max_attempts")
    tries: dict[str, list[dict]] = {q: [] for q in queries}
    todo = list(queries)
    for attempt in range(1, max_attempts + 1):
        if not todo:
            break
        answers = client.run(
            [sem_request(queries[q], template, attempt, max_tokens=max_tokens) for q in todo],
            desc=f"SEM attempt {attempt}",
            progress=progress,
        )
        failed = []
        for q, (comp, _) in zip(todo, answers):
            sentence = first_sentence(comp.text)
            reason = sem_failure(sentence, queries[q])
            tries[q].append({"attempt": attempt, "answer": comp.text, "sentence": sentence, "reason": reason})
            if reason:
                failed.append(q)
        todo = failed
    rows = []
    for q, query in queries.items():
        last = tries[q][-1]
        ok = not last["reason"]
        rows.append(
            {
                "dataset": dataset,
                "qid": q,
                "query": query,
                "variant": "SEM",
                "terms": ", ".join(query_terms(query)),
                "sentence": last["sentence"] if ok else "",
                "ok": ok,
                "attempts": len(tries[q]),
                "reason": last["reason"],
                "tries": json.dumps(tries[q], ensure_ascii=False),
            }
        )
    out = pd.DataFrame(rows, columns=SENTENCE_COLUMNS)
    log.info(
        "SEM: %d queries, %d with a valid sentence, %d failed after %d attempts; attempts used %s",
        len(out),
        int(out["ok"].sum()),
        int((~out["ok"]).sum()),
        max_attempts,
        out["attempts"].value_counts().sort_index().to_dict(),
    )
    return out


def fixed_sentences(
    queries: Mapping[str, str], variant: str, lex_template: str | None = None, dataset: str = ""
) -> pd.DataFrame:
    """The LEX or QRY sentence of every query (no model involved), shaped like :func:`generate_sem`."""
    rows = []
    for q, query in queries.items():
        if variant == "LEX":
            if lex_template is None:
                raise ValueError("LEX needs its template sentence")
            sentence = lex_sentence(query, lex_template)
        elif variant == "QRY":
            sentence = qry_sentence(query)
        else:
            raise ValueError(f"{variant!r} is not a fixed insertion (LEX or QRY)")
        terms = query_terms(query)
        ok = bool(sentence) and (variant == "QRY" or bool(terms))
        rows.append(
            {
                "dataset": dataset,
                "qid": q,
                "query": query,
                "variant": variant,
                "terms": ", ".join(terms),
                "sentence": sentence if ok else "",
                "ok": ok,
                "attempts": 0,
                "reason": "" if ok else "no query terms",
                "tries": "[]",
            }
        )
    return pd.DataFrame(rows, columns=SENTENCE_COLUMNS)


def insertion_candidates(samples: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Pooled sampled passages that the human (grade 0) and the sampling judge (label 0) both
    call non-relevant."""
    return pool_samples(s[(s["grade"] == 0) & (s["label"] == 0)] for s in samples)


def build_insertions(candidates: pd.DataFrame, sentences: pd.DataFrame, variant: str) -> pd.DataFrame:
    """Each candidate passage with its query's sentence inserted at the start; a query without a
    valid sentence gives rows with ``ok`` False and its reason (no text)."""
    by_q = {s.qid: s for s in sentences[["qid", "sentence", "ok", "reason"]].itertuples(index=False)}
    rows = []
    for r in candidates.itertuples(index=False):
        s = by_q[r.qid]
        ok = bool(s.ok)
        rows.append(
            {
                "dataset": r.dataset,
                "qid": r.qid,
                "query": r.query,
                "docid": r.docid,
                "grade": r.grade,
                "variant": variant,
                "sentence": s.sentence,
                "original": r.passage,
                "text": insert(s.sentence, r.passage) if ok else "",
                "ok": ok,
                "reason": s.reason,
            }
        )
    return pd.DataFrame(rows, columns=INSERTION_COLUMNS)
