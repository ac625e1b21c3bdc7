"""Rewriting perturbations and query-dependent insertions (seed 004, section 3).

Do LLM judges assess meaning or surface cues? Passages are perturbed and re-judged by the judge
that labelled them, with the same template and persona, and the label changes are counted.

* **Sampling** (:func:`sample_judged`): for each judge, per query at most ``per_label``
  passages per label the judge predicted (0-3), drawn with a seed from its original judgment
  table. Unparsed answers have no label and are never sampled. The draw of one (query, label)
  group depends only on the seed, the query id, the label and the group's docids, so judges
  that agree on a group draw the same passages (and share their rewrites).
* **Pooling** (:func:`pool_samples`): the judges' samples are pooled so that each passage is
  rewritten once per variant; each judge is re-judged on its own sample only
  (:func:`rejudge_pairs`).
* **Rewrites** PSV (passive voice), ACV (active voice), SUM (summary), EXP (expansion): one
  request per pooled passage with a bounded ``max_tokens`` (:func:`rewrite_requests`), then an
  LLM meaning check (:func:`meaning_check_requests`, answer parsed strictly by
  :func:`parse_meaning_verdict`). :func:`meaning_filter` keeps exactly the rewrites the check
  calls preserved; a rejected rewrite stays in the table with its reason: ``changed`` (the check
  said No), ``unparsable`` (the check's answer did not parse: counted, never a verdict) or
  ``empty`` (no text left after cleaning; not checked).
* **Insertions** at the start of passages that both the human grade (0) and the judge (label 0)
  call non-relevant: SEM - one sentence from the rewriter that answers the query using none of
  the query's non-stopword terms, verified in code (:func:`sem_failure`: no query term, at
  least :data:`SEM_MIN_WORDS` words) and requested again up to a bound (:func:`generate_sem`),
  failures recorded; the candidates are the sampled pairs (so at most ``per_label`` per query
  and judge); LEX - the seed's fixed template sentence listing the query
  terms (:func:`lex_sentence`); QRY - the query string itself (:func:`qry_sentence`).
* **Outcomes**: transition matrices from the judge's original label to its label on each
  variant (:func:`transition_counts`, :func:`transition_table`), label shifts
  (:func:`shift_table`), label distributions after each insertion (:func:`distribution_table`),
  and the kept fraction per rewrite variant (:func:`kept_table`).

Query terms (:func:`query_terms`): the query is split into words (runs of letters and digits,
an inner apostrophe kept: ``don't``, ``goldfish's``); a word is a stopword if its lower-cased
form, or that form without a possessive ``'s``, is in scikit-learn's ``ENGLISH_STOP_WORDS``;
the other words, de-duplicated case-insensitively, in query order, are the query terms.

SEM verification (:func:`sem_violations`): the sentence is split into words the same way; a
word matches a query term when their :func:`inflection_forms` intersect. A word's forms are the
word itself, case folded with a possessive ``'s`` removed, and what undoing one suffix gives:
``-s``, ``-es``, ``-ies``/``-ied`` -> ``-y``, ``-ing``/``-ed`` (each also with an ``e`` restored
and with a doubled final consonant undone); such forms under 3 letters are not used. So matching is
case-insensitive and catches, e.g., goldfish / Goldfishes / GOLDFISH's, grow / grows / growing /
growed, study / studies / studied / studying, bake / bakes / baked / baking, run / runs /
running, box / boxes. It does NOT catch irregular forms (``grew``, ``grown``, ``mice``),
derivations (``growth``, ``grower``, ``-ly``), comparatives (``-er``, ``-est``), spelling
variants, or a term inside a compound word (``fish`` in ``goldfish``). It errs towards
rejecting (``news`` matches ``new``, ``caring`` matches ``car``), which only costs another attempt.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import zlib
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .backends.base import LABEL_TOKENS, CachedClient, Request
from .errors import InputError
from .prompts import fill, register_kind

# The kinds of the study's prompts (resources/prompts/perturbations/): their placeholders are
# checked when a template is loaded.
register_kind("rewrite", ["passage"])
register_kind("meaning_check", ["original", "rewritten"])
register_kind("sem_sentence", ["query", "terms", "attempt"])
register_kind("lex_sentence", ["terms"])

log = logging.getLogger(__name__)

#: the graded labels 0-3 (a judge's answer tokens)
LABELS = [int(t) for t in LABEL_TOKENS]
REWRITE_VARIANTS = ("PSV", "ACV", "SUM", "EXP")
INSERTION_VARIANTS = ("SEM", "LEX", "QRY")
VARIANTS = REWRITE_VARIANTS + INSERTION_VARIANTS

SAMPLE_COLUMNS = ["dataset", "judge", "qid", "query", "docid", "passage", "grade", "label"]
POOL_COLUMNS = ["dataset", "qid", "query", "docid", "passage", "grade"]
REWRITE_COLUMNS = ["dataset", "qid", "query", "docid", "grade", "variant", "original", "answer",
                   "text", "truncated", "check_answer", "verdict", "kept", "reason",
                   "rewrite_prompt_tokens", "rewrite_completion_tokens", "rewrite_cache_hit",
                   "check_prompt_tokens", "check_cache_hit"]
SENTENCE_COLUMNS = ["dataset", "qid", "query", "variant", "terms", "sentence", "ok", "attempts",
                    "reason", "tries"]
INSERTION_COLUMNS = ["dataset", "qid", "query", "docid", "grade", "variant", "sentence", "original",
                     "text", "ok", "reason"]
#: a SEM sentence needs at least this many words
SEM_MIN_WORDS = 3
#: rejection reasons of a rewrite (``reason`` is empty when the rewrite is kept)
REASONS = ("changed", "unparsable", "empty")

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_POSSESSIVE = re.compile(r"['’]s$")
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*(?=\s|$)")


# --------------------------------------------------------------------------------------------
# Sampling and pooling


def _group_seed(seed: int, qid: str, label: int) -> list[int]:
    return [int(seed), zlib.crc32(str(qid).encode("utf-8")), int(label)]


def sample_judged(pairs: pd.DataFrame, judgments: pd.DataFrame, *, judge: str, per_label: int,
                  seed: int, source: str = "judgments") -> pd.DataFrame:
    """Per query at most ``per_label`` passages per label the judge predicted, drawn with ``seed``.

    ``pairs``: the dataset table (dataset, qid, query, docid, passage, grade); ``judgments``: the
    judge's judgment table on it (qid, docid, label, parsed, ...). Rows whose label did not parse
    are never sampled. Within a (query, label) group the candidates are ordered by docid and
    drawn with a generator seeded by (seed, crc32(qid), label), so the draw does not depend on row
    order or on the other groups. Columns :data:`SAMPLE_COLUMNS`, sorted by qid, label, docid.
    """
    if isinstance(per_label, bool) or not isinstance(per_label, (int, np.integer)) or per_label < 1:
        raise InputError(f"must be a whole number >= 1, got {per_label!r}", key="perturbations.per_label")
    for col in ("qid", "docid", "label", "parsed"):
        if col not in judgments.columns:
            raise InputError(f"judgment table has no column {col!r}", path=source)
    judged = judgments[["qid", "docid", "label", "parsed"]]
    merged = pairs.merge(judged, on=["qid", "docid"], how="inner", validate="one_to_one")
    if len(merged) != len(judged):
        raise InputError(f"{len(judged) - len(merged)} judged pairs are not in the dataset table",
                         path=source)
    parsed = merged["parsed"].astype(str).str.lower().isin(["true", "1"]) & merged["label"].notna()
    usable = merged[parsed].copy()
    usable["label"] = usable["label"].astype(int)
    bad = usable[~usable["label"].isin(LABELS)]
    if len(bad):
        raise InputError(f"label {bad['label'].iloc[0]} outside 0-3 (qid {bad['qid'].iloc[0]}, "
                         f"docid {bad['docid'].iloc[0]})", path=source)
    parts = []
    for (qid, label), group in usable.groupby(["qid", "label"], sort=True):
        group = group.sort_values("docid", kind="stable")
        k = min(int(per_label), len(group))
        pick = np.random.default_rng(_group_seed(seed, qid, label)).choice(len(group), k, replace=False)
        parts.append(group.iloc[np.sort(pick)])
    out = pd.concat(parts, ignore_index=True) if parts else usable.iloc[0:0]
    out = out.assign(judge=judge)[SAMPLE_COLUMNS]
    out["grade"] = out["grade"].astype("Int64")
    out["label"] = out["label"].astype("Int64")
    log.info("%s: %d judged pairs, %d unparsed (never sampled), %d sampled (at most %d per query "
             "and label); labels %s", judge, len(merged), int((~parsed).sum()), len(out), per_label,
             out["label"].value_counts().sort_index().to_dict())
    return out.reset_index(drop=True)


def pool_samples(samples: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """The union of the judges' sampled passages, one row per (dataset, qid, docid)."""
    frames = [s[POOL_COLUMNS] for s in samples]
    if not frames:
        return pd.DataFrame(columns=POOL_COLUMNS)
    allrows = pd.concat(frames, ignore_index=True)
    pool = allrows.drop_duplicates(["dataset", "qid", "docid"]).sort_values(
        ["dataset", "qid", "docid"], kind="stable").reset_index(drop=True)
    if len(allrows.drop_duplicates()) != len(pool):
        raise ValueError("the samples disagree on the query, passage or grade of a pair "
                         "(were they drawn from different dataset tables?)")
    return pool


def read_sample(path: str) -> pd.DataFrame:
    df = pd.read_csv(path, sep="\t", dtype={"dataset": str, "judge": str, "qid": str, "query": str,
                                            "docid": str, "passage": str},
                     keep_default_na=False, na_values={"grade": [""], "label": [""]})
    missing = [c for c in SAMPLE_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"not a sample table: no columns {missing}", path=str(path))
    df["grade"] = df["grade"].astype("Int64")
    df["label"] = df["label"].astype("Int64")
    return df


# --------------------------------------------------------------------------------------------
# Rewrites and the meaning check


def rewrite_requests(pool: pd.DataFrame, template: str, *, max_tokens: int) -> list[Request]:
    """One rewrite request per pooled passage: ``template`` with ``{passage}`` filled."""
    return [Request.from_messages([{"role": "user", "content": fill(template, passage=p)}], max_tokens)
            for p in pool["passage"]]


def clean_rewrite(text: str, truncated: bool) -> str:
    """The rewrite as a one-line passage: white space collapsed, enclosing quotes removed; a
    rewrite cut by ``max_tokens`` is trimmed to its last complete sentence when it has one."""
    s = " ".join(text.split())
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        s = s[1:-1].strip()
    if truncated:
        ends = list(_SENTENCE_END.finditer(s))
        if ends:
            s = s[: ends[-1].end()]
    return s


def meaning_check_requests(originals: Sequence[str], rewrites: Sequence[str], template: str, *,
                           max_tokens: int) -> list[Request]:
    """One meaning-check request per (original, rewrite): ``{original}``, ``{rewritten}`` filled."""
    return [Request.from_messages([{"role": "user", "content": fill(template, original=o, rewritten=r)}],
                                  max_tokens) for o, r in zip(originals, rewrites)]


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
    verdicts, kept, reasons = [], [], []
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


def run_rewrites(pool: pd.DataFrame, variant: str, template: str, check_template: str,
                 rewriter: CachedClient, checker: CachedClient, *, max_tokens: int,
                 check_max_tokens: int, progress: bool = True) -> pd.DataFrame:
    """Rewrite every pooled passage, check each non-empty rewrite's meaning, keep the preserved.

    One row per pooled passage (columns :data:`REWRITE_COLUMNS`), rejected ones included."""
    answers = rewriter.run(rewrite_requests(pool, template, max_tokens=max_tokens),
                           desc=f"rewrite {variant}", progress=progress)
    rows = []
    for r, (comp, hit) in zip(pool.itertuples(index=False), answers):
        truncated = (comp.completion_tokens or 0) >= max_tokens
        rows.append({"dataset": r.dataset, "qid": r.qid, "query": r.query, "docid": r.docid,
                     "grade": r.grade, "variant": variant, "original": r.passage,
                     "answer": comp.text, "text": clean_rewrite(comp.text, truncated),
                     "truncated": truncated, "check_answer": None,
                     "rewrite_prompt_tokens": comp.prompt_tokens,
                     "rewrite_completion_tokens": comp.completion_tokens,
                     "rewrite_cache_hit": hit, "check_prompt_tokens": None, "check_cache_hit": None})
    table = pd.DataFrame(rows, columns=[c for c in REWRITE_COLUMNS if c not in ("verdict", "kept", "reason")])
    ask = table.index[table["text"].str.len() > 0]
    checks = checker.run(meaning_check_requests(table.loc[ask, "original"], table.loc[ask, "text"],
                                                check_template, max_tokens=check_max_tokens),
                         desc=f"meaning check {variant}", progress=progress)
    for i, (comp, hit) in zip(ask, checks):
        table.at[i, "check_answer"] = comp.text
        table.at[i, "check_prompt_tokens"] = comp.prompt_tokens
        table.at[i, "check_cache_hit"] = hit
    out = meaning_filter(table)[REWRITE_COLUMNS]
    counts = out["reason"].replace("", "kept").value_counts().to_dict()
    log.info("%s: %d rewrites, %d kept (%.0f%%); %s; %d cut by max_tokens %d", variant, len(out),
             int(out["kept"].sum()), 100 * out["kept"].mean() if len(out) else 0.0, counts,
             int(out["truncated"].sum()), max_tokens)
    return out


def read_variant_table(path: str) -> pd.DataFrame:
    """A rewrites or insertions table as written by the jobs."""
    df = pd.read_csv(path, sep="\t", dtype={"dataset": str, "qid": str, "query": str, "docid": str,
                                            "variant": str, "original": str, "text": str,
                                            "answer": str, "check_answer": str, "verdict": str,
                                            "reason": str, "sentence": str},
                     keep_default_na=False, na_values={"grade": [""]})
    flag = "kept" if "kept" in df.columns else "ok"
    if flag not in df.columns or "text" not in df.columns:
        raise InputError("not a rewrites or insertions table (no 'kept'/'ok' or 'text' column)",
                         path=str(path))
    df[flag] = df[flag].astype(str).str.lower().isin(["true", "1"])
    df["grade"] = df["grade"].astype("Int64")
    return df


# --------------------------------------------------------------------------------------------
# Insertions


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
    m = _SENTENCE_END.search(line)
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
        [{"role": "user", "content": fill(template, query=query, terms=", ".join(query_terms(query)),
                                          attempt=attempt)}], max_tokens)


def generate_sem(queries: Mapping[str, str], template: str, client: CachedClient, *,
                 max_tokens: int, max_attempts: int, dataset: str = "",
                 progress: bool = True) -> pd.DataFrame:
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
        answers = client.run([sem_request(queries[q], template, attempt, max_tokens=max_tokens)
                              for q in todo], desc=f"SEM attempt {attempt}", progress=progress)
        failed = []
        for q, (comp, _) in zip(todo, answers):
            sentence = first_sentence(comp.text)
            reason = sem_failure(sentence, queries[q])
            tries[q].append({"attempt": attempt, "answer": comp.text, "sentence": sentence,
                             "reason": reason})
            if reason:
                failed.append(q)
        todo = failed
    rows = []
    for q, query in queries.items():
        last = tries[q][-1]
        ok = not last["reason"]
        rows.append({"dataset": dataset, "qid": q, "query": query, "variant": "SEM",
                     "terms": ", ".join(query_terms(query)), "sentence": last["sentence"] if ok else "",
                     "ok": ok, "attempts": len(tries[q]), "reason": last["reason"],
                     "tries": json.dumps(tries[q], ensure_ascii=False)})
    out = pd.DataFrame(rows, columns=SENTENCE_COLUMNS)
    log.info("SEM: %d queries, %d with a valid sentence, %d failed after %d attempts; attempts "
             "used %s", len(out), int(out["ok"].sum()), int((~out["ok"]).sum()), max_attempts,
             out["attempts"].value_counts().sort_index().to_dict())
    return out


def fixed_sentences(queries: Mapping[str, str], variant: str, lex_template: str | None = None,
                    dataset: str = "") -> pd.DataFrame:
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
        rows.append({"dataset": dataset, "qid": q, "query": query, "variant": variant,
                     "terms": ", ".join(terms), "sentence": sentence if ok else "", "ok": ok,
                     "attempts": 0, "reason": "" if ok else "no query terms", "tries": "[]"})
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
        rows.append({"dataset": r.dataset, "qid": r.qid, "query": r.query, "docid": r.docid,
                     "grade": r.grade, "variant": variant, "sentence": s.sentence,
                     "original": r.passage, "text": insert(s.sentence, r.passage) if ok else "",
                     "ok": ok, "reason": s.reason})
    return pd.DataFrame(rows, columns=INSERTION_COLUMNS)


# --------------------------------------------------------------------------------------------
# Re-judging and outcomes


def rejudge_pairs(sample: pd.DataFrame, variants: pd.DataFrame, variant: str) -> pd.DataFrame:
    """The pairs one judge re-judges on ``variant``: its own sampled pairs that have a kept
    rewrite (rewrite variants) or a valid insertion (insertion variants: only its grade-0,
    label-0 pairs), with the variant text as ``passage`` and its original label."""
    flag = "kept" if variant in REWRITE_VARIANTS else "ok"
    if variant not in VARIANTS:
        raise InputError(f"unknown variant {variant!r}; known: {list(VARIANTS)}",
                         key="perturbations.variants")
    own = sample
    if variant in INSERTION_VARIANTS:
        own = sample[(sample["grade"] == 0) & (sample["label"] == 0)]
    usable = variants[variants[flag] & (variants["variant"] == variant)]
    merged = own.merge(usable[["dataset", "qid", "docid", "text"]], on=["dataset", "qid", "docid"],
                       how="inner", validate="one_to_one")
    out = merged.rename(columns={"label": "original_label"}).assign(passage=merged["text"])
    return out[["dataset", "judge", "qid", "query", "docid", "passage", "grade", "original_label"]] \
        .reset_index(drop=True)


def transition_counts(original: Sequence, new: Sequence) -> pd.DataFrame:
    """4 x 4 counts (rows: original label 0-3, columns: label on the variant 0-3) plus a
    ``missing`` column counting variants whose label did not parse (None / NA)."""
    orig = pd.array(list(original), dtype="Int64")
    lab = pd.array(list(new), dtype="Int64")
    if len(orig) != len(lab):
        raise ValueError("original and new labels differ in length")
    if orig.isna().any():
        raise ValueError("every re-judged pair must have an original label")
    mat = pd.DataFrame(0, index=pd.Index(LABELS, name="original_label"),
                       columns=[*LABELS, "missing"])
    for o, n in zip(orig, lab):
        mat.loc[int(o), "missing" if pd.isna(n) else int(n)] += 1
    return mat


def transition_table(rejudged: pd.DataFrame) -> pd.DataFrame:
    """Tidy transitions per judge and variant: count and ``share`` of each original -> new label
    among the row's parsed re-judgments (NaN for a row with none), with the row's totals."""
    rows = []
    for (judge, variant), g in rejudged.groupby(["judge", "variant"], sort=False):
        mat = transition_counts(g["original_label"], g["label"])
        for o in LABELS:
            parsed = int(mat.loc[o, LABELS].sum())
            for n in LABELS:
                c = int(mat.loc[o, n])
                rows.append({"judge": judge, "variant": variant, "original_label": o, "new_label": n,
                             "count": c, "share": c / parsed if parsed else np.nan,
                             "row_parsed": parsed, "row_missing": int(mat.loc[o, "missing"])})
    return pd.DataFrame(rows, columns=["judge", "variant", "original_label", "new_label", "count",
                                       "share", "row_parsed", "row_missing"])


def shift_table(rejudged: pd.DataFrame) -> pd.DataFrame:
    """Per judge and variant: pairs re-judged, parsed, and over the parsed the mean label shift
    (new - original) and the shares of labels raised, kept and lowered."""
    rows = []
    for (judge, variant), g in rejudged.groupby(["judge", "variant"], sort=False):
        p = g[g["label"].notna()]
        d = (p["label"].astype(int) - p["original_label"].astype(int)).to_numpy()
        n = len(d)
        rows.append({"judge": judge, "variant": variant, "n": len(g), "n_parsed": n,
                     "mean_shift": float(d.mean()) if n else np.nan,
                     "share_up": float((d > 0).mean()) if n else np.nan,
                     "share_same": float((d == 0).mean()) if n else np.nan,
                     "share_down": float((d < 0).mean()) if n else np.nan})
    return pd.DataFrame(rows, columns=["judge", "variant", "n", "n_parsed", "mean_shift", "share_up",
                                       "share_same", "share_down"])


def distribution_table(rejudged: pd.DataFrame) -> pd.DataFrame:
    """Per judge and variant: count and share (among parsed) of each label 0-3, with the totals."""
    rows = []
    for (judge, variant), g in rejudged.groupby(["judge", "variant"], sort=False):
        parsed = g["label"].dropna().astype(int)
        for lab in LABELS:
            c = int((parsed == lab).sum())
            rows.append({"judge": judge, "variant": variant, "label": lab, "count": c,
                         "share": c / len(parsed) if len(parsed) else np.nan,
                         "n_parsed": len(parsed), "n_missing": int(g["label"].isna().sum())})
    return pd.DataFrame(rows, columns=["judge", "variant", "label", "count", "share", "n_parsed",
                                       "n_missing"])


def kept_table(rewrites: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Per rewrite variant: rewrites, kept, each rejection reason, and the kept fraction."""
    rows = []
    for t in rewrites:
        for variant, g in t.groupby("variant", sort=False):
            reasons = g["reason"].fillna("")
            row = {"variant": variant, "n": len(g), "kept": int(g["kept"].sum())}
            row.update({r: int((reasons == r).sum()) for r in REASONS})
            row["truncated"] = int(g["truncated"].astype(str).str.lower().isin(["true", "1"]).sum())
            row["kept_fraction"] = row["kept"] / len(g) if len(g) else np.nan
            rows.append(row)
    return pd.DataFrame(rows, columns=["variant", "n", "kept", *REASONS, "truncated", "kept_fraction"])


def insertion_table(insertions: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Per insertion variant: candidate passages and queries, and how many got a valid sentence."""
    rows = []
    for t in insertions:
        for variant, g in t.groupby("variant", sort=False):
            q = g.drop_duplicates("qid")
            rows.append({"variant": variant, "n_passages": len(g), "n_ok": int(g["ok"].sum()),
                         "n_queries": len(q), "n_queries_ok": int(q["ok"].sum())})
    return pd.DataFrame(rows, columns=["variant", "n_passages", "n_ok", "n_queries", "n_queries_ok"])
