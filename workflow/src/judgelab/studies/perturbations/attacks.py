"""Attacks on passages: can the judge be gamed? (Alaofi et al., "LLMs can be Fooled into Labelling
a Document as Relevant", SIGIR-AP 2024, arXiv 2501.17969.)

Two attacks, each a text added to a passage at its start or its end (:data:`POSITIONS`):

* ``STUFF`` - keyword stuffing: the query's terms (:func:`~.insertions.query_terms`, the study's
  stopword list) joined by spaces, repeated ``repeat`` times (:func:`stuff_text`);
* ``INJECT`` - an instruction addressed to the judge, one sentence of a list
  (``resources/prompts/perturbations/injections.yaml``; users add their own), each sentence an
  attack of its own (:func:`read_injections`).

They go into passages that certainly are not relevant (:func:`attack_candidates`): per query at
most ``per_label`` of the passages the human assessors graded with one of ``grades`` (0 by
default), and, as the paper also did, as many passages drawn from other topics of the dataset
(judged for this query: certainly non-relevant). Each passage is judged clean and attacked,
exactly as the study's original judgment is made (template, persona, model, answer reading), and
optionally also with a defended template (a sentence telling the judge that the passage is data,
not instructions; ``defense`` template, :func:`defended_template`).

:func:`attack_table` compares, per judge x template x attack x position (and per source of the
passages), the share judged relevant (label >= ``relevant``) before and after: the difference with
a paired bootstrap interval over queries (the draws of :mod:`judgelab.analysis.bootstrap`, as
PERAS's significance), McNemar's exact p on the passages both answers of which parsed
(:func:`mcnemar_exact`), the mean label shift and the coverage.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.analysis.bootstrap import percentile_interval, resample_counts
from judgelab.errors import InputError
from judgelab.llm.prompts import fill, register_kind
from judgelab.studies.perturbations.insertions import query_terms

register_kind("defense", ["template"])

#: the attack kinds
ATTACK_KINDS = ("STUFF", "INJECT")

#: where an attack's text goes
POSITIONS = ("start", "end")

#: the attack and position of the clean judgment (the "before")
CLEAN = "none"

#: the templates an attack is judged with: the study's own, and the defended one
DEFENSES = ("plain", "defended")

#: where a candidate passage comes from
SOURCES = ("assessed", "other_topic")

#: the passages an attack-table row summarises: each source, and both together
PASSAGES = ("all", *SOURCES)

CANDIDATE_COLUMNS = ["dataset", "qid", "query", "docid", "passage", "grade", "source"]

ATTACK_TABLE_COLUMNS = [
    "dataset",
    "judge",
    "template",
    "attack",
    "kind",
    "position",
    "passages",
    "n",
    "n_queries",
    "n_parsed",
    "coverage",
    "relevant_before",
    "relevant_after",
    "difference",
    "ci_low",
    "ci_high",
    "n_up",
    "n_down",
    "mcnemar_p",
    "mean_shift",
]


def _draw(n: int, k: int, seed: Sequence[int]) -> np.ndarray:
    return np.sort(np.random.default_rng(list(seed)).choice(n, min(k, n), replace=False))


def attack_candidates(
    pairs: pd.DataFrame, *, grades: Sequence[int], per_label: int, seed: int, other_topics: bool
) -> pd.DataFrame:
    """The passages attacked: per query at most ``per_label`` of its pairs whose human grade is
    one of ``grades`` (source ``assessed``; candidates ordered by docid, drawn with a generator
    seeded by (seed, crc32(qid), 0)), and with ``other_topics`` as many passages of the other
    queries of ``pairs`` that this query's assessors did not judge (source ``other_topic``, grade
    empty; distinct docids ordered by docid, seeded by (seed, crc32(qid), 1)), judged for this
    query. Columns :data:`CANDIDATE_COLUMNS`, sorted by qid, source, docid."""
    chosen = {int(g) for g in grades}
    if not chosen:
        raise InputError(
            "no grade given: which human grades are attacked", key="perturbations.attacks.grades"
        )
    passages = (
        pairs[["docid", "passage"]].drop_duplicates("docid").sort_values("docid", kind="stable")
    ).reset_index(drop=True)
    parts = []
    for qid, group in pairs.groupby("qid", sort=True):
        crc = zlib.crc32(str(qid).encode("utf-8"))
        graded = group[group["grade"].isin(chosen)].sort_values("docid", kind="stable")
        own = graded.iloc[_draw(len(graded), int(per_label), (seed, crc, 0))]
        parts.append(own.assign(source="assessed"))
        if other_topics and len(own):
            foreign = passages[~passages["docid"].isin(set(group["docid"]))]
            pick = foreign.iloc[_draw(len(foreign), len(own), (seed, crc, 1))]
            query = str(group["query"].iloc[0])
            parts.append(
                pick.assign(
                    dataset=group["dataset"].iloc[0], qid=qid, query=query, grade=pd.NA, source="other_topic"
                )
            )
    if not parts:
        return pd.DataFrame(columns=CANDIDATE_COLUMNS)
    out = pd.concat(parts, ignore_index=True)[CANDIDATE_COLUMNS]
    out["grade"] = out["grade"].astype("Int64")
    return out.sort_values(["qid", "source", "docid"], kind="stable").reset_index(drop=True)


def read_injections(path: str | Path) -> dict[str, str]:
    """The injection list of a YAML file: ``injections:`` a mapping name -> sentence (a name:
    letters, digits, ``_``). A file without it, a non-text sentence or an empty one fails naming
    the file."""
    import yaml

    with open(path, encoding="utf-8") as fh:
        try:
            data = yaml.safe_load(fh)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise InputError(
                f"not YAML: {exc}", path=str(path), line=mark.line + 1 if mark is not None else None
            ) from None
    items = data.get("injections") if isinstance(data, dict) else None
    if not isinstance(items, dict) or not items:
        raise InputError("expected a mapping `injections:` of name -> sentence", path=str(path))
    out = {}
    for name, sentence in items.items():
        if not isinstance(sentence, str) or not sentence.strip():
            raise InputError(f"injection {name!r}: the sentence must be non-empty text", path=str(path))
        check_name(str(name), f"{path}: injections")
        out[str(name)] = sentence.strip()
    return out


def check_name(name: str, key: str) -> None:
    if not name or not all(c.isalnum() or c == "_" for c in name):
        raise InputError(f"name {name!r}: letters, digits and _ only (it names result files)", key=key)


def stuff_text(query: str, stopwords: frozenset[str], repeat: int) -> str:
    """STUFF's text: the query's terms joined by spaces, ``repeat`` times ("" without terms)."""
    terms = " ".join(query_terms(query, stopwords))
    return " ".join([terms] * int(repeat)) if terms else ""


def attack_passage(passage: str, text: str, position: str) -> str:
    """The passage with ``text`` added at its ``start`` or its ``end`` (one space between)."""
    if position == "start":
        return f"{text} {passage}"
    if position == "end":
        return f"{passage} {text}"
    raise InputError(
        f"unknown position {position!r} ({', '.join(POSITIONS)})", key="perturbations.attacks.positions"
    )


def defended_template(defense: str, template: str) -> str:
    """The defended judgment template: the defense template with the judge's template as its
    ``{template}`` (the judge's own placeholders kept for the judgment to fill)."""
    return fill(defense, template=template)


def mcnemar_exact(n_up: int, n_down: int) -> float:
    """McNemar's exact two-sided p of a paired 2 x 2 table whose discordant cells are ``n_up``
    (not relevant before, relevant after) and ``n_down`` (statsmodels ``mcnemar``, exact: the
    binomial test of min(n_up, n_down) out of their sum at 1/2); 1.0 without a discordant pair."""
    from statsmodels.stats.contingency_tables import mcnemar

    if n_up + n_down == 0:
        return 1.0
    return float(mcnemar([[0, int(n_down)], [int(n_up), 0]], exact=True).pvalue)


def _query_bootstrap(
    qids: np.ndarray, before: np.ndarray, after: np.ndarray, n_boot: int, seed: int, alpha: float
) -> tuple[float, float]:
    """The percentile interval of the difference of shares relevant (after - before) over
    resamples of the queries (each resample: the pooled share of the drawn queries' passages)."""
    units, inv = np.unique(qids, return_inverse=True)
    if len(units) < 2:
        return float("nan"), float("nan")
    n_q = np.bincount(inv, minlength=len(units)).astype(float)
    d_q = np.bincount(inv, weights=(after - before).astype(float), minlength=len(units))
    counts = resample_counts(len(units), n_boot, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        diffs = (counts @ d_q) / (counts @ n_q)
    return percentile_interval(diffs, alpha)


def attack_table(
    judged: pd.DataFrame,
    *,
    relevant: int,
    n_boot: int,
    seed: int,
    alpha: float,
) -> pd.DataFrame:
    """Per judge x template x attack x position x passages (:data:`PASSAGES`), the clean
    judgment (attack :data:`CLEAN`) against the attacked one of the same passage: ``n`` passages,
    ``n_parsed`` whose both answers parsed (``coverage`` = n_parsed / n), over those the shares
    judged relevant (label >= ``relevant``) before and after, their ``difference`` with the
    ``1 - alpha`` paired bootstrap interval over queries (``n_boot`` resamples, ``seed``), the
    passages made relevant (``n_up``) and made not relevant (``n_down``), McNemar's exact p and
    the mean label shift (after - before). ``judged``: the attack judge jobs' rows (columns
    judge, template, attack, position, qid, docid, source, label); ``kinds``: attack -> kind."""
    keys = ["judge", "template", "qid", "docid"]
    clean = judged[judged["attack"] == CLEAN][keys + ["label"]].rename(columns={"label": "before"})
    dup = clean.duplicated(keys)
    if dup.any():
        row = clean[dup].iloc[0]
        raise ValueError(f"two clean judgments of {row['qid']}/{row['docid']} by {row['judge']}")
    attacked = judged[judged["attack"] != CLEAN]
    merged = attacked.merge(clean, on=keys, how="left", validate="many_to_one")
    rows = []
    dataset = str(judged["dataset"].iloc[0]) if len(judged) and "dataset" in judged else ""
    group_keys = ["judge", "template", "attack", "kind", "position"]
    for (judge, template, attack, kind, position), g in merged.groupby(group_keys, sort=False):
        for passages in PASSAGES:
            part = g if passages == "all" else g[g["source"] == passages]
            if not len(part):
                continue
            both = part[part["label"].notna() & part["before"].notna()]
            before = (both["before"].astype(int) >= relevant).to_numpy(dtype=int)
            after = (both["label"].astype(int) >= relevant).to_numpy(dtype=int)
            n_up = int(((after == 1) & (before == 0)).sum())
            n_down = int(((after == 0) & (before == 1)).sum())
            m = len(both)
            low, high = (
                _query_bootstrap(both["qid"].to_numpy(), before, after, n_boot, seed, alpha)
                if m
                else (float("nan"), float("nan"))
            )
            rows.append(
                {
                    "dataset": dataset,
                    "judge": judge,
                    "template": template,
                    "attack": attack,
                    "kind": kind,
                    "position": position,
                    "passages": passages,
                    "n": len(part),
                    "n_queries": int(part["qid"].nunique()),
                    "n_parsed": m,
                    "coverage": m / len(part),
                    "relevant_before": float(before.mean()) if m else float("nan"),
                    "relevant_after": float(after.mean()) if m else float("nan"),
                    "difference": float((after - before).mean()) if m else float("nan"),
                    "ci_low": low,
                    "ci_high": high,
                    "n_up": n_up,
                    "n_down": n_down,
                    "mcnemar_p": mcnemar_exact(n_up, n_down) if m else float("nan"),
                    "mean_shift": float((both["label"].astype(int) - both["before"].astype(int)).mean())
                    if m
                    else float("nan"),
                }
            )
    return pd.DataFrame(rows, columns=ATTACK_TABLE_COLUMNS)
