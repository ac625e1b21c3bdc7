"""Query-dependent insertions (SEM, LEX, QRY) into passages judged non-relevant, and the query
terms and SEM verification they rest on.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from judgelab.data.textfiles import text_lines
from judgelab.errors import InputError
from judgelab.llm.backends.base import Request
from judgelab.llm.client import CachedClient
from judgelab.llm.prompts import fill, register_kind
from judgelab.studies.perturbations.rewrites import SENTENCE_END
from judgelab.studies.perturbations.sampling import pool_samples
from judgelab.studies.perturbations.settings import SemWriter

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
    "source",
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


#: The built-in stopword list that is no file: scikit-learn's ``ENGLISH_STOP_WORDS`` (318 words;
#: it drops query terms such as "us", "three", "show", "find", "made").
SKLEARN = "sklearn"


@functools.cache
def _sklearn_words() -> frozenset[str]:
    # imported on first use: the rewrite and re-judge jobs never pay for the import
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def load_stopwords(
    ref: str, resources: str | Path | None = None, *, key: str = "perturbations.stopwords"
) -> frozenset[str]:
    """A stopword list: ``sklearn`` (scikit-learn's ``ENGLISH_STOP_WORDS``), a name of a list
    under ``resources/stopwords/<name>.txt`` (``nltk_english``: NLTK's 179 English stopwords), or
    the path of such a file - one word per line, lines starting with ``#`` and blank lines
    skipped, words lower-cased; a line holding white space inside a word fails naming the file
    and line."""
    if ref == SKLEARN:
        return _sklearn_words()
    path = Path(ref)
    if not path.suffix and resources is not None and not path.exists():
        path = Path(resources) / "stopwords" / f"{ref}.txt"
    if not path.is_file():
        bundled = sorted(p.stem for p in (Path(resources) / "stopwords").glob("*.txt")) if resources else []
        raise InputError(
            f"no stopword list {ref!r} ({path} does not exist; built in: {SKLEARN}, bundled: {bundled})",
            key=key,
        )
    out = set()
    for no, line in text_lines(path):
        w = line.strip()
        if not w or w.startswith("#"):
            continue
        if len(w.split()) != 1:
            raise InputError(f"one word per line expected, got {w!r}", path=str(path), line=no)
        out.add(w.casefold())
    return frozenset(out)


def stopwords_param(words: frozenset[str] | set[str]) -> str:
    """A stopword list as a plain string (one word per line, sorted): the tracked param of the
    insertion jobs, so editing the list reruns exactly them."""
    return "\n".join(sorted(words))


def stopwords_from_param(value: str | frozenset[str] | set[str]) -> frozenset[str]:
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    return frozenset(w for w in str(value).split("\n") if w)


def is_stopword(word: str, stopwords: frozenset[str]) -> bool:
    w = word.casefold()
    return w in stopwords or _norm(w) in stopwords


def query_terms(query: str, stopwords: frozenset[str]) -> list[str]:
    """The query's words that are not in ``stopwords`` (compared case-folded, also without a
    possessive ``'s``), de-duplicated case-insensitively, in query order, as written in the
    query."""
    seen, out = set(), []
    for w in words(query):
        if is_stopword(w, stopwords) or _norm(w) in seen:
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


def sem_violations(sentence: str, query: str, stopwords: frozenset[str]) -> list[str]:
    """The query terms the sentence uses: a sentence word matches a term when their
    :func:`inflection_forms` share a form."""
    found: set[str] = set()
    for w in words(sentence):
        found |= inflection_forms(w)
    return [t for t in query_terms(query, stopwords) if inflection_forms(t) & found]


def sem_failure(sentence: str, query: str, stopwords: frozenset[str]) -> str:
    """Why a SEM sentence is not usable (empty when it is): ``empty``, ``query terms: ...`` (the
    terms it uses) or ``too short`` (fewer than :data:`SEM_MIN_WORDS` words: "Sure!" is no answer)."""
    if not sentence:
        return "empty"
    bad = sem_violations(sentence, query, stopwords)
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


def lex_sentence(query: str, template: str, stopwords: frozenset[str]) -> str:
    """LEX: the paper's template sentence with the query terms joined by ``", "`` as ``{terms}``."""
    return fill(template, terms=", ".join(query_terms(query, stopwords)))


def qry_sentence(query: str) -> str:
    """QRY: the query string itself (white space trimmed)."""
    return query.strip()


def insert(sentence: str, passage: str) -> str:
    """The passage with ``sentence`` inserted at its start."""
    return f"{sentence} {passage}"


def sem_request(
    query: str, template: str, attempt: int, *, max_tokens: int, stopwords: frozenset[str]
) -> Request:
    terms = ", ".join(query_terms(query, stopwords))
    return Request.from_messages(
        [{"role": "user", "content": fill(template, query=query, terms=terms, attempt=attempt)}], max_tokens
    )


def generate_sem(
    queries: Mapping[str, str],
    writer: SemWriter,
    client: CachedClient | None,
    *,
    stopwords: frozenset[str],
    dataset: str = "",
    progress: bool = True,
    reviewed: Mapping[str, tuple[str, str]] | None = None,
) -> pd.DataFrame:
    """One SEM sentence per query: requested (``writer``: the SEM prompt and bound, asked of
    ``client``), verified by :func:`sem_failure`, requested again with the next attempt number
    while it fails, at most ``writer.max_attempts`` times. Every try is
    recorded (``tries``: JSON list of attempt, sentence, violations); a query whose tries all fail
    has ``ok`` False, an empty sentence and the last failure as ``reason``.

    ``reviewed``: sentences reviewed by hand (:func:`read_reviewed_sem`), qid -> (sentence,
    where); a query among them takes its reviewed sentence (``source`` ``reviewed``, no request)
    and is never generated; the others are generated (``source`` ``generated``), or, without a
    ``client``, get no sentence (reason ``no reviewed sentence``)."""
    template, max_tokens, max_attempts = writer.template, writer.max_tokens, writer.max_attempts
    if max_attempts < 1:
        raise InputError(f"must be >= 1, got {max_attempts}", key="perturbations.sem_max_attempts")
    reviewed = dict(reviewed or {})
    tries: dict[str, list[dict]] = {q: [] for q in queries if q not in reviewed}
    todo = list(tries) if client is not None else []
    for attempt in range(1, max_attempts + 1):
        if not todo or client is None:
            break
        answers = client.run(
            [
                sem_request(queries[q], template, attempt, max_tokens=max_tokens, stopwords=stopwords)
                for q in todo
            ],
            desc=f"SEM attempt {attempt}",
            progress=progress,
        )
        failed = []
        for q, (comp, _) in zip(todo, answers):
            sentence = first_sentence(comp.text)
            reason = sem_failure(sentence, queries[q], stopwords)
            tries[q].append({"attempt": attempt, "answer": comp.text, "sentence": sentence, "reason": reason})
            if reason:
                failed.append(q)
        todo = failed
    rows = []
    for q, query in queries.items():
        base = {"dataset": dataset, "qid": q, "query": query, "variant": "SEM"}
        base["terms"] = ", ".join(query_terms(query, stopwords))
        if q in reviewed:
            sentence, where = reviewed[q]
            rows.append(
                base
                | {
                    "sentence": sentence,
                    "ok": True,
                    "attempts": 0,
                    "reason": "",
                    "tries": json.dumps([{"reviewed": where}], ensure_ascii=False),
                    "source": "reviewed",
                }
            )
            continue
        if not tries[q]:
            rows.append(
                base
                | {
                    "sentence": "",
                    "ok": False,
                    "attempts": 0,
                    "reason": "no reviewed sentence (perturbations.sem_sentences) and no rewriter",
                    "tries": "[]",
                    "source": "",
                }
            )
            continue
        last = tries[q][-1]
        ok = not last["reason"]
        rows.append(
            base
            | {
                "sentence": last["sentence"] if ok else "",
                "ok": ok,
                "attempts": len(tries[q]),
                "reason": last["reason"],
                "tries": json.dumps(tries[q], ensure_ascii=False),
                "source": "generated",
            }
        )
    out = pd.DataFrame(rows, columns=SENTENCE_COLUMNS)
    log.info(
        "SEM: %d queries (%d reviewed sentences), %d with a valid sentence, %d failed after %d "
        "attempts; attempts used %s",
        len(out),
        int((out["source"] == "reviewed").sum()),
        int(out["ok"].sum()),
        int((~out["ok"]).sum()),
        max_attempts,
        out.loc[out["source"] == "generated", "attempts"].value_counts().sort_index().to_dict(),
    )
    return out


def read_reviewed_sem(
    path: str | Path, queries: Mapping[str, str], stopwords: frozenset[str], *, dataset: str = ""
) -> dict[str, tuple[str, str]]:
    """The reviewed SEM sentences of ``path`` for ``queries`` (qid -> query): a tab-separated file
    with a header naming the columns ``qid`` and ``sentence`` (and optionally ``dataset``: a row
    with a dataset applies to that dataset only; without one, to every dataset). Returns qid ->
    (sentence, ``path:line``) for the queries of ``queries`` it holds. Each sentence must pass the
    SEM check in code (no query term, at least :data:`SEM_MIN_WORDS` words); a sentence that does
    not, a qid given twice for a dataset, a row with a missing field or a file without the two
    columns fails naming the file and line."""
    rows = list(text_lines(path))
    if not rows:
        raise InputError("empty file: a header `qid<TAB>sentence` is needed", path=str(path))
    header = [h.strip() for h in rows[0][1].split("\t")]
    if "qid" not in header or "sentence" not in header:
        raise InputError(
            f"the header must name the columns qid and sentence (tab-separated), got {header}",
            path=str(path),
            line=rows[0][0],
        )
    col = {h: i for i, h in enumerate(header)}
    seen: dict[tuple[str, str], int] = {}
    out: dict[str, tuple[str, str]] = {}
    for no, line in rows[1:]:
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            raise InputError(f"{len(cells)} fields, the header names {len(header)}", path=str(path), line=no)
        qid, sentence = cells[col["qid"]].strip(), cells[col["sentence"]].strip()
        ds = cells[col["dataset"]].strip() if "dataset" in col else ""
        if not qid or not sentence:
            raise InputError("a row needs a qid and a sentence", path=str(path), line=no)
        if (ds, qid) in seen:
            raise InputError(
                f"qid {qid} given twice (line {seen[(ds, qid)]} and here)", path=str(path), line=no
            )
        seen[(ds, qid)] = no
        if (ds and ds != dataset) or qid not in queries:
            continue
        if qid in out and not ds:
            continue  # a dataset-specific row wins over a general one
        failure = sem_failure(sentence, queries[qid], stopwords)
        if failure:
            raise InputError(
                f"the reviewed SEM sentence of query {qid} ({queries[qid]!r}) fails the SEM check: {failure}",
                path=str(path),
                line=no,
            )
        out[qid] = (sentence, f"{path}:{no}")
    return out


def fixed_sentences(
    queries: Mapping[str, str],
    variant: str,
    lex_template: str | None = None,
    dataset: str = "",
    *,
    stopwords: frozenset[str],
) -> pd.DataFrame:
    """The LEX or QRY sentence of every query (no model involved), shaped like :func:`generate_sem`."""
    rows = []
    for q, query in queries.items():
        if variant == "LEX":
            if lex_template is None:
                raise ValueError("LEX needs its template sentence")
            sentence = lex_sentence(query, lex_template, stopwords)
        elif variant == "QRY":
            sentence = qry_sentence(query)
        else:
            raise ValueError(f"{variant!r} is not a fixed insertion (LEX or QRY)")
        terms = query_terms(query, stopwords)
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
                "source": "fixed",
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
