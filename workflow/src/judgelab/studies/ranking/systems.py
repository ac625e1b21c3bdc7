"""Retrieval systems the workflow builds itself (``source: systems``): no TREC-submitted run can be
bundled, so the default run ranks the passages of a dataset table with a few classic rankers and
writes their rankings as TREC run files.

The *collection* is the set of distinct passages of the dataset table (each docid once). Every
system ranks, for each topic of the table, its *candidates*: ``judged`` - the passages judged for
that topic (a re-ranking of the judged pool, as in TREC DL's re-ranking subtask: every pair has a
human grade) - or ``all`` - every passage of the collection (passages judged for other topics
enter the pool unjudged for this one). Collection statistics (document frequencies, lengths) are
always those of the whole collection.

Text analysis, the same for every system (:func:`tokenize`): lower case, tokens are runs of
letters and digits (Unicode ``\\w`` without ``_``), English stop words removed (bm25s's
``STOPWORDS_EN``: the 33 words of Lucene's English stop set, which Anserini's BM25 also drops);
no stemming.

Systems (``kind``), by library where one exists:

* ``bm25`` - Okapi BM25 through ``bm25s`` (``k1``, ``b``, ``method``: bm25s's variants, default
  ``lucene``: idf = ln(1 + (N - df + 0.5) / (df + 0.5)), term weight
  tf / (tf + k1 (1 - b + b |d| / avgdl)) summed over the query terms, each query token once per
  occurrence);
* ``tfidf`` - cosine of TF-IDF vectors through scikit-learn's ``TfidfVectorizer`` (smoothed idf
  ln((1 + N) / (1 + df)) + 1, raw term counts, L2-normalised);
* ``ql`` - query likelihood with Dirichlet smoothing (Zhai and Lafferty 2004), written here:
  sum over query tokens w with p(w|C) > 0 of ln((c(w, d) + mu p(w|C)) / (|d| + mu)),
  p(w|C) = the collection frequency of w over the collection's token count (a query token
  absent from the collection lowers every document's score by the same amount, so it is left
  out: the ranking is unchanged);
* ``overlap`` - coordination-level matching: the number of distinct query terms in the passage;
* ``length`` - a query-independent prior: the passage's number of tokens (longer first);
* ``random`` - a uniform random score per candidate from ``numpy.random.default_rng`` seeded with
  (``seed``, CRC-32 of the topic id): the same topic always gets the same ranking.

Each topic's candidates are ordered as trec_eval orders them (score descending, ties by docid
descending; :func:`judgelab.studies.ranking.runs.trec_order`), cut at ``depth``, and given ranks
1..n. Scores are written with 17 significant digits, so the file's order is the ranking.
"""

from __future__ import annotations

import functools
import math
import re
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab import schema
from judgelab.data.readers import RUN_COLUMNS
from judgelab.errors import InputError
from judgelab.studies.ranking.runs import trec_order

#: Kinds of system, and the parameters each one takes (all required).
KINDS: dict[str, tuple[str, ...]] = {
    "bm25": ("k1", "b"),
    "tfidf": (),
    "ql": ("mu",),
    "overlap": (),
    "length": (),
    "random": ("seed",),
}
#: Parameters a kind may take beyond its required ones.
OPTIONAL: dict[str, tuple[str, ...]] = {"bm25": ("method",)}
#: What each system ranks per topic.
CANDIDATES = ("judged", "all")

_TOKEN = re.compile(r"[^\W_]+")


@functools.cache
def stop_words() -> frozenset[str]:
    """Lucene's English stop set, as bm25s ships it (``bm25s.stopwords.STOPWORDS_EN``)."""
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def tokenize(text: str) -> list[str]:
    """The analysed tokens of ``text``: lower-cased runs of letters and digits, stop words out."""
    stop = stop_words()
    return [t for t in _TOKEN.findall(str(text).lower()) if t not in stop]


def check_system(name: str, spec: Mapping, key: str) -> None:
    """A system entry names a known ``kind`` and exactly its parameters, with valid values;
    errors name the full key (``key`` is the entry's, e.g. ``ranking.systems.bm25``)."""
    schema.validate_entry(spec, "ranking.systems.<name>", key)  # the kind, the values' ranges
    kind = spec["kind"]
    allowed = set(KINDS[kind]) | set(OPTIONAL.get(kind, ())) | {"kind"}
    for k in spec:
        if k not in allowed:
            raise InputError(
                f"a {kind} system takes {', '.join(KINDS[kind] + OPTIONAL.get(kind, ())) or 'no parameter'}",
                key=f"{key}.{k}",
            )
    for k in KINDS[kind]:
        if k not in spec:
            raise InputError(f"a {kind} system needs `{k}`", key=f"{key}.{k}")


# --- scorers: (collection token lists, query token list) -> one score per collection passage ---


class _Collection:
    """The analysed collection: docids in table order (first occurrence), token lists."""

    def __init__(self, table: pd.DataFrame):
        first = table.drop_duplicates("docid", keep="first")
        self.docids: list[str] = [str(d) for d in first["docid"]]
        self.texts: list[str] = [str(t) for t in first["passage"]]
        self.tokens: list[list[str]] = [tokenize(t) for t in self.texts]
        self.index = {d: i for i, d in enumerate(self.docids)}


class _BM25:
    def __init__(self, col: _Collection, spec: Mapping):
        import bm25s

        self.model = bm25s.BM25(
            k1=float(spec["k1"]),
            b=float(spec["b"]),
            method=spec.get("method", schema.default("ranking.systems.<name>.method")),
            dtype="float64",
        )
        # bm25s needs a non-empty token list per document (an empty passage gets an empty token)
        self.model.index([t or [""] for t in col.tokens], show_progress=False)
        self.vocab = set(self.model.vocab_dict)
        self.n = len(col.tokens)

    def __call__(self, query: list[str]) -> np.ndarray:
        known = [t for t in query if t in self.vocab and t]
        if not known:
            return np.zeros(self.n)
        return np.asarray(self.model.get_scores(known), dtype=float)


class _TfIdf:
    def __init__(self, col: _Collection, spec: Mapping):
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer(analyzer=lambda tokens: tokens)
        self.docs = self.vectorizer.fit_transform(col.tokens) if any(col.tokens) else None
        self.n = len(col.tokens)

    def __call__(self, query: list[str]) -> np.ndarray:
        if self.docs is None or not query:
            return np.zeros(self.n)
        q = self.vectorizer.transform([query])
        return np.asarray((self.docs @ q.T).toarray()).ravel()


class _QueryLikelihood:
    def __init__(self, col: _Collection, spec: Mapping):
        self.mu = float(spec["mu"])
        self.counts = [Counter(t) for t in col.tokens]
        self.lengths = np.array([len(t) for t in col.tokens], dtype=float)
        self.cf = Counter(t for toks in col.tokens for t in toks)
        self.total = float(sum(self.cf.values()))

    def __call__(self, query: list[str]) -> np.ndarray:
        return np.array(
            [ql_score(query, c, n, self.cf, self.total, self.mu) for c, n in zip(self.counts, self.lengths)]
        )


class _Overlap:
    def __init__(self, col: _Collection, spec: Mapping):
        self.sets = [set(t) for t in col.tokens]

    def __call__(self, query: list[str]) -> np.ndarray:
        q = set(query)
        return np.array([float(len(q & s)) for s in self.sets])


def ql_score(
    query: Sequence[str],
    doc_counts: Mapping[str, int],
    doc_len: float,
    cf: Mapping[str, int],
    total: float,
    mu: float,
) -> float:
    """Dirichlet-smoothed query log-likelihood of one document (module docstring): query tokens
    absent from the collection (cf 0) are left out; 0.0 when none is left."""
    score = 0.0
    for w in query:
        p_c = cf.get(w, 0) / total if total else 0.0
        if p_c > 0:
            score += math.log((doc_counts.get(w, 0) + mu * p_c) / (doc_len + mu))
    return score


class _Length:
    def __init__(self, col: _Collection, spec: Mapping):
        self.lengths = np.array([float(len(t)) for t in col.tokens])

    def __call__(self, query: list[str]) -> np.ndarray:
        return self.lengths


#: a scorer class: built on the collection and the system spec, it scores every passage for a query
_SCORERS: dict[str, Callable[[_Collection, Mapping], Callable[[list[str]], np.ndarray]]] = {
    "bm25": _BM25,
    "tfidf": _TfIdf,
    "ql": _QueryLikelihood,
    "overlap": _Overlap,
    "length": _Length,
}


def rank(
    table: pd.DataFrame, spec: Mapping, *, candidates: str, depth: int, tag: str = "judgelab"
) -> pd.DataFrame:
    """The run of one system over a dataset table (columns qid, query, docid, passage): columns
    :data:`~judgelab.studies.ranking.runs.RUN_COLUMNS`, topics sorted by qid, each topic's
    candidates (``judged`` or ``all``, see the module docstring) in trec_eval's order, at most
    ``depth`` per topic, ranks 1..n; ``tag`` the run's tag field."""
    if candidates not in CANDIDATES:
        raise ValueError(f"candidates must be one of {CANDIDATES}, not {candidates!r}")
    if int(depth) < 1:
        raise ValueError(f"depth must be positive, not {depth}")
    col = _Collection(table)
    kind = spec["kind"]
    scorer = None if kind == "random" else _SCORERS[kind](col, spec)
    queries = table.drop_duplicates("qid", keep="first").set_index("qid")["query"]
    judged = table.groupby("qid", sort=False)["docid"].agg(lambda s: list(dict.fromkeys(s)))
    parts = []
    for qid in sorted(queries.index.astype(str)):
        docs = list(col.docids) if candidates == "all" else [str(d) for d in judged[qid]]
        if scorer is None:
            rng = np.random.default_rng([int(spec["seed"]), zlib.crc32(qid.encode("utf-8"))])
            scores = rng.random(len(docs))
        else:
            all_scores = scorer(tokenize(queries[qid]))
            scores = np.array([all_scores[col.index[d]] for d in docs], dtype=float)
        parts.append(pd.DataFrame({"qid": qid, "docid": docs, "score": scores}))
    run = trec_order(pd.concat(parts, ignore_index=True)).groupby("qid", sort=False).head(int(depth))
    run = run.reset_index(drop=True)
    run["rank"] = run.groupby("qid", sort=False).cumcount() + 1
    run["tag"] = tag
    return run[RUN_COLUMNS].astype(
        {"qid": str, "docid": str, "rank": "int64", "score": "float64", "tag": str}
    )


def write_run(run: pd.DataFrame, path: str | Path) -> None:
    """``run`` as a TREC run file (``qid Q0 docid rank score tag``, space separated, in the
    table's order; scores with 17 significant digits, so they read back to the same floats)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        f"{r.qid} Q0 {r.docid} {int(r.rank)} {float(r.score):.17g} {r.tag}\n"
        for r in run.itertuples(index=False)
    ]
    path.write_text("".join(lines), encoding="utf-8")
