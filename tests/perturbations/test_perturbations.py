"""Perturbation study (When LLM Judges Inflate Scores, section 3): sampling, insertions, the SEM
check, the meaning-check filter, transitions and distributions, figures. Fast: no real model (see
test_perturbations_model.py for the end-to-end run with the embedded model)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from judgelab import schema
from judgelab.cache.store import RequestCache
from judgelab.errors import InputError
from judgelab.llm.backends.base import Backend, Completion, Request
from judgelab.llm.client import CachedClient
from judgelab.llm.prompts import load_template
from judgelab.studies.perturbations.figures import insertion_distributions, transition_heatmaps
from judgelab.studies.perturbations.insertions import (
    INSERTION_VARIANTS,
    build_insertions,
    first_sentence,
    fixed_sentences,
    generate_sem,
    inflection_forms,
    insert,
    insertion_candidates,
    lex_sentence,
    load_stopwords,
    qry_sentence,
    query_terms,
    sem_failure,
    sem_violations,
)
from judgelab.studies.perturbations.outcomes import (
    distribution_table,
    insertion_table,
    kept_by_all,
    kept_table,
    rejudge_pairs,
    shift_table,
    transition_counts,
    transition_table,
)
from judgelab.studies.perturbations.rewrites import (
    REWRITE_COLUMNS,
    REWRITE_VARIANTS,
    clean_rewrite,
    meaning_filter,
    parse_meaning_verdict,
    read_variant_table,
    run_rewrites,
)
from judgelab.studies.perturbations.sampling import SAMPLE_COLUMNS, pool_samples, read_sample, sample_judged
from judgelab.studies.perturbations.settings import SemWriter, Writer

SEED_004 = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "004_e51b999c1f5f88d3.txt"
RESOURCES = Path(__file__).resolve().parents[2] / "resources"
LEX = load_template("perturbations/lex")
#: the default list of the config (perturbations.stopwords) and scikit-learn's
NLTK = load_stopwords("nltk_english", RESOURCES)
SKLEARN = load_stopwords("sklearn")


# -- LEX and QRY ------------------------------------------------------------------------------


def test_lex_sentence_is_the_seed_template_with_the_query_terms():
    expected = "The terms goldfish, grow are shown together as an example of word grouping in text data."
    assert lex_sentence("do goldfish grow", LEX, NLTK) == expected
    assert lex_sentence("do goldfish grow", LEX, NLTK) == expected  # deterministic
    assert lex_sentence("what is durable medical equipment consist of", LEX, NLTK) == (
        "The terms durable, medical, equipment, consist are shown together as an example of word "
        "grouping in text data."
    )


def test_lex_template_is_verbatim_from_the_seed():
    if not SEED_004.exists():
        pytest.skip(f"{SEED_004} is absent")
    text = SEED_004.read_text(encoding="utf-8")
    seed_sentence = (
        "The terms $w_{1}$, $w_{2}$, …, $w_{n}$ are shown together as an example of "
        "word grouping in text data."
    )
    assert seed_sentence in text
    assert LEX == seed_sentence.replace("$w_{1}$, $w_{2}$, …, $w_{n}$", "{terms}")


def test_qry_is_the_query_string_inserted_at_the_start():
    assert qry_sentence("do goldfish grow") == "do goldfish grow"
    assert qry_sentence("  do goldfish grow ") == "do goldfish grow"
    assert (
        insert(qry_sentence("do goldfish grow"), "Bananas are rich in potassium.")
        == "do goldfish grow Bananas are rich in potassium."
    )
    table = fixed_sentences({"101": "do goldfish grow"}, "QRY", dataset="t", stopwords=NLTK)
    assert table.loc[0, "sentence"] == "do goldfish grow" and bool(table.loc[0, "ok"])


def test_query_terms_drop_the_configured_stopwords():
    for words in (NLTK, SKLEARN):
        assert query_terms("do goldfish grow", words) == ["goldfish", "grow"]
        assert query_terms("what is the daily life of thai people", words) == [
            "daily",
            "life",
            "thai",
            "people",
        ]
        # case-insensitive de-duplication, surface form of the first occurrence kept
        assert query_terms("Goldfish goldfish GROW", words) == ["Goldfish", "GROW"]
    # scikit-learn's list drops real query terms of judged DL19 / DL20 queries; NLTK's keeps them
    assert query_terms("how to find the midsegment of a trapezoid", SKLEARN) == ["midsegment", "trapezoid"]
    assert query_terms("how to find the midsegment of a trapezoid", NLTK) == [
        "find",
        "midsegment",
        "trapezoid",
    ]
    for query, term in (
        ("why did the us volunterilay enter ww1", "us"),  # DL19 1063750
        ("what are the three percenters?", "three"),  # DL20 1121709
        ("where is the show shameless filmed", "show"),  # DL20 997622
        ("what metal are hip replacements made of", "made"),  # DL20 877809
    ):
        assert term not in query_terms(query, SKLEARN) and term in query_terms(query, NLTK), query
    assert len(NLTK) == 179 and len(SKLEARN) == 318
    # a query of stopwords only has no term: its LEX sentence is not usable
    t = fixed_sentences({"1": "what is it"}, "LEX", LEX, stopwords=NLTK)
    assert not bool(t.loc[0, "ok"]) and t.loc[0, "reason"] == "no query terms"


def test_a_stopword_list_file_is_read_or_fails_naming_the_file_and_line(tmp_path):
    f = tmp_path / "mine.txt"
    f.write_text("# my list\nThe\n\nof\n", encoding="utf-8")
    assert load_stopwords(str(f)) == {"the", "of"}
    assert query_terms("The Cost of Us", load_stopwords(str(f))) == ["Cost", "Us"]
    f.write_text("the\nin on\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"mine.txt:2: one word per line"):
        load_stopwords(str(f))
    with pytest.raises(
        InputError, match=r"perturbations.stopwords.*built in: sklearn, bundled: \['nltk_english'\]"
    ):
        load_stopwords("nosuch", RESOURCES)


# -- SEM check --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence, found",
    [
        ("Goldfish keep getting bigger.", ["goldfish"]),
        ("GOLDFISH get bigger.", ["goldfish"]),
        ("Pet goldfishes get bigger.", ["goldfish"]),
        ("A goldfish's body gets bigger.", ["goldfish"]),
        ("These pet carp keep growing.", ["grow"]),
        ("A pet carp grows all its life.", ["grow"]),
        ("A pet carp Growed.", ["grow"]),
        ("Goldfish GROW.", ["goldfish", "grow"]),
    ],
)
def test_sem_validator_catches_query_terms_in_any_case_and_claimed_inflection(sentence, found):
    assert sem_violations(sentence, "do goldfish grow", NLTK) == found
    assert sem_failure(sentence, "do goldfish grow", NLTK) == "query terms: " + ", ".join(found)


@pytest.mark.parametrize(
    "word, term",
    [
        ("studies", "study"),
        ("studied", "study"),
        ("studying", "study"),
        ("study", "studies"),
        ("baked", "bake"),
        ("baking", "bake"),
        ("bakes", "baked"),
        ("running", "run"),
        ("runs", "run"),
        ("boxes", "box"),
        ("using", "uses"),
        ("Speeding", "speed"),
    ],
)
def test_inflections_claimed_in_the_docstring_match(word, term):
    assert inflection_forms(word) & inflection_forms(term)


def test_sem_validator_accepts_a_sentence_without_query_terms():
    ok = "These orange pet carp keep getting bigger throughout their lives."
    assert sem_violations(ok, "do goldfish grow", NLTK) == []
    assert sem_failure(ok, "do goldfish grow", NLTK) == ""
    # documented limits: irregular forms and derivations are not caught
    assert sem_violations("The pet carp grew; its growth never stops.", "do goldfish grow", NLTK) == []
    assert sem_failure("Sure!", "do goldfish grow", NLTK) == "too short"
    assert sem_failure("", "do goldfish grow", NLTK) == "empty"


def test_first_sentence_keeps_one_sentence_of_the_answer():
    assert (
        first_sentence('\n  "They get bigger all their lives. More text."\nSecond line')
        == "They get bigger all their lives."
    )
    assert first_sentence("No full stop here") == "No full stop here"


class ScriptedSem(Backend):
    """A test double answering SEM requests from a script keyed by the attempt number in the
    prompt, so the retry logic is tested without a model (the real model runs in
    test_perturbations_model.py)."""

    def __init__(self, script: dict[int, str]):
        self.script = script
        self.seen: list[str] = []

    def identity(self) -> dict:
        return {"kind": "scripted-sem"}

    def complete(self, request: Request) -> Completion:
        prompt = request.messages[-1][1]
        self.seen.append(prompt)
        attempt = int(prompt.rsplit("Attempt: ", 1)[1])
        return Completion(text=self.script[attempt], prompt_tokens=1, completion_tokens=1)


def test_generate_sem_retries_with_a_different_request_up_to_the_bound(tmp_path):
    template = load_template("perturbations/sem")
    backend = ScriptedSem({1: "Goldfish grow.", 2: "They get bigger over the years.", 3: "unused"})
    client = CachedClient(backend, RequestCache(tmp_path / "c.sqlite"))
    writer = SemWriter("rewriter", template=template, max_tokens=16, max_attempts=3)
    out = generate_sem({"101": "do goldfish grow"}, writer, client, stopwords=NLTK, progress=False)
    row = out.iloc[0]
    assert bool(row["ok"]) and row["sentence"] == "They get bigger over the years." and row["attempts"] == 2
    tries = json.loads(row["tries"])
    assert [t["reason"] for t in tries] == ["query terms: goldfish, grow", ""]
    assert len(set(backend.seen)) == 2  # the attempt number makes each request (and cache key) new
    assert "goldfish, grow" in backend.seen[0]

    failing = ScriptedSem({1: "Goldfish grow.", 2: "Growing goldfish.", 3: "A goldfish."})
    client = CachedClient(failing, RequestCache(tmp_path / "d.sqlite"))
    out = generate_sem({"101": "do goldfish grow"}, writer, client, stopwords=NLTK, progress=False)
    row = out.iloc[0]
    assert not bool(row["ok"]) and row["sentence"] == "" and row["attempts"] == 3
    assert row["reason"] == "query terms: goldfish"
    assert len(failing.seen) == 3
    with pytest.raises(InputError, match="sem_max_attempts"):
        generate_sem({"101": "q"}, writer.but(max_attempts=0), client, stopwords=NLTK)


# -- meaning check ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, verdict",
    [
        ("Yes", "preserved"),
        ("yes.", "preserved"),
        ("  **Yes** (meaning preserved)", "preserved"),
        ('"Yes, the meaning is the same."', "preserved"),
        ("No", "changed"),
        ("NO (meaning changed)", "changed"),
        ("No, it adds facts.", "changed"),
        ("The meaning is preserved.", None),
        ("Yess", None),
        ("Noted: yes", None),
        ("", None),
        (None, None),
        ("Maybe", None),
    ],
)
def test_meaning_verdict_parser_is_strict(answer, verdict):
    assert parse_meaning_verdict(answer) == verdict


def test_meaning_filter_keeps_exactly_the_rewrites_judged_preserved():
    table = pd.DataFrame(
        {
            "docid": ["a", "b", "c", "d", "e", "f"],
            "text": ["one", "two", "three", "four", "", "six"],
            "check_answer": ["Yes", "No", "I think so", "yes, same meaning", None, None],
        }
    )
    out = meaning_filter(table)
    assert list(out.loc[out["kept"], "docid"]) == ["a", "d"]
    assert list(out["reason"]) == ["", "changed", "unparsable", "", "empty", "unparsable"]
    assert [v if isinstance(v, str) else None for v in out["verdict"]] == [
        "preserved",
        "changed",
        None,
        "preserved",
        None,
        None,
    ]
    with pytest.raises(ValueError):
        meaning_filter(pd.DataFrame({"text": [""], "check_answer": ["Yes"]}))


def test_clean_rewrite_trims_a_truncated_rewrite_to_its_last_sentence():
    assert clean_rewrite("The cat was seen.  The dog\nwas", True) == "The cat was seen."
    assert clean_rewrite("The cat was seen. The dog was", False) == "The cat was seen. The dog was"
    assert clean_rewrite('"It was seen."', False) == "It was seen."
    assert clean_rewrite("no sentence end", True) == "no sentence end"


def _rewrites(variant: str, kept: list[bool], reasons: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "dataset": "t",
            "qid": "1",
            "docid": [f"d{i}" for i in range(1, 5)],
            "variant": variant,
            "kept": kept,
            "reason": reasons,
            "truncated": [False, True, False, False],
            "text": [f"{variant} text {i}" for i in range(1, 5)],
        }
    )


def test_kept_table_counts_reasons_fraction_and_the_passages_kept_by_every_variant():
    sum_ = _rewrites("SUM", [True, False, False, True], ["", "changed", "unparsable", ""])
    exp = _rewrites("EXP", [True, True, False, True], ["", "", "changed", ""])
    per = kept_table([sum_, exp], "per_variant").set_index("variant")
    row = per.loc["SUM"]
    assert (row["n"], row["kept"], row["changed"], row["unparsable"], row["empty"], row["truncated"]) == (
        4,
        2,
        1,
        1,
        0,
        1,
    )
    assert row["kept_fraction"] == 0.5
    # d1 and d4 are kept by both variants, d2 by EXP only: reported with either filter
    assert list(per["kept_all_variants"]) == [2, 2]
    assert list(per["rejudged"]) == [2, 3] and set(per["rewrite_filter"]) == {"per_variant"}
    every = kept_table([sum_, exp], "all_variants").set_index("variant")
    assert list(every["rejudged"]) == [2, 2] and list(every["kept_all_variants"]) == [2, 2]
    common = kept_by_all([sum_, exp], ["SUM", "EXP"])
    assert sorted(common["docid"]) == ["d1", "d4"]
    sample = pd.DataFrame(
        {
            "dataset": "t",
            "judge": "m",
            "qid": "1",
            "query": "q",
            "docid": [f"d{i}" for i in range(1, 5)],
            "passage": "p",
            "grade": pd.array([0, 1, 2, 3], "Int64"),
            "label": pd.array([0, 1, 2, 3], "Int64"),
        }
    )
    assert list(rejudge_pairs(sample, exp, "EXP")["docid"]) == ["d1", "d2", "d4"]  # per variant
    assert list(rejudge_pairs(sample, exp, "EXP", common)["docid"]) == ["d1", "d4"]  # all variants


# -- sampling and pooling ---------------------------------------------------------------------


def _pairs_and_judgments():
    pairs = pd.DataFrame(
        {
            "dataset": "t",
            "qid": ["1"] * 9 + ["2"] * 4,
            "query": ["goldfish pond"] * 9 + ["wifi range"] * 4,
            "docid": [f"d{i:02d}" for i in range(13)],
            "passage": [f"passage {i}" for i in range(13)],
            "grade": pd.array([0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 1, 3], dtype="Int64"),
        }
    )
    labels = pd.array([0, 0, 0, 0, 0, 2, 2, None, None, 0, 1, 1, 3], dtype="Int64")
    judgments = pd.DataFrame(
        {
            "dataset": "t",
            "qid": pairs["qid"],
            "docid": pairs["docid"],
            "label": labels,
            "parsed": ~labels.isna(),
        }
    )
    return pairs, judgments


def test_sampling_bounds_skips_unparsed_and_is_deterministic():
    pairs, judgments = _pairs_and_judgments()
    s = sample_judged(pairs, judgments, judge="m", per_label=2, seed=7)
    assert list(s.columns) == SAMPLE_COLUMNS
    counts = s.groupby(["qid", "label"]).size().to_dict()
    # q1: label 0 has 5 candidates -> 2, label 2 has 2 -> 2; q2: label 0 -> 1, 1 -> 2, 3 -> 1
    assert counts == {("1", 0): 2, ("1", 2): 2, ("2", 0): 1, ("2", 1): 2, ("2", 3): 1}
    assert not set(s["docid"]) & {"d07", "d08"}  # unparsed answers are never sampled
    assert (s["judge"] == "m").all()
    again = sample_judged(pairs, judgments, judge="m", per_label=2, seed=7)
    pd.testing.assert_frame_equal(s, again)
    shuffled = sample_judged(
        pairs.sample(frac=1, random_state=1),
        judgments.sample(frac=1, random_state=2),
        judge="m",
        per_label=2,
        seed=7,
    )
    pd.testing.assert_frame_equal(s, shuffled)  # row order does not matter
    draws = {
        tuple(sample_judged(pairs, judgments, judge="m", per_label=2, seed=k)["docid"]) for k in range(10)
    }
    assert len(draws) > 1  # the seed matters (5 candidates choose 2 in q1 label 0)
    big = sample_judged(pairs, judgments, judge="m", per_label=20, seed=7)
    assert len(big) == 11  # every parsed pair
    # at least 1: the schema's minimum (the config is checked against it when it loads)
    with pytest.raises(InputError, match="perturbations.per_label': 0 is less than the minimum of 1"):
        schema.validate_entry(0, "perturbations.per_label", "perturbations.per_label")


def test_sampling_rejects_judgments_of_pairs_not_in_the_dataset():
    pairs, judgments = _pairs_and_judgments()
    extra = pd.concat(
        [
            judgments,
            pd.DataFrame(
                {
                    "dataset": ["t"],
                    "qid": ["9"],
                    "docid": ["x"],
                    "label": pd.array([1], dtype="Int64"),
                    "parsed": [True],
                }
            ),
        ]
    )
    with pytest.raises(InputError, match="judgments.tsv: 1 judged pairs are not in the dataset"):
        sample_judged(pairs, extra, judge="m", per_label=2, seed=1, source="judgments.tsv")


def test_pooling_rewrites_each_passage_once_and_rejudging_uses_own_sample():
    pairs, judgments = _pairs_and_judgments()
    a = sample_judged(pairs, judgments, judge="a", per_label=1, seed=3)
    other = judgments.assign(label=pd.array([1] * 13, dtype="Int64"), parsed=True)
    b = sample_judged(pairs, other, judge="b", per_label=1, seed=3)
    pool = pool_samples([a, b])
    keys = set(zip(a["qid"], a["docid"])) | set(zip(b["qid"], b["docid"]))
    assert len(pool) == len(keys) and set(zip(pool["qid"], pool["docid"])) == keys
    rewrites = pool.assign(variant="SUM", text="rw " + pool["passage"], kept=True)
    rewrites.loc[0, "kept"] = False
    dropped = (pool.loc[0, "qid"], pool.loc[0, "docid"])
    for s in (a, b):
        r = rejudge_pairs(s, rewrites, "SUM")
        own = set(zip(s["qid"], s["docid"])) - {dropped}
        assert set(zip(r["qid"], r["docid"])) == own
        assert r["passage"].str.startswith("rw ").all()
        assert (
            r["original_label"].to_numpy()
            == s.set_index(["qid", "docid"]).loc[list(zip(r["qid"], r["docid"])), "label"].to_numpy()
        ).all()


def test_insertions_go_to_grade_0_label_0_passages_only():
    pairs, judgments = _pairs_and_judgments()
    s = sample_judged(pairs, judgments, judge="m", per_label=20, seed=1)
    cand = insertion_candidates([s])
    # grade 0 and label 0: d00-d04 (q1), d09 (q2); d10 is grade 0 but label 1
    assert list(cand["docid"]) == ["d00", "d01", "d02", "d03", "d04", "d09"]
    sent = fixed_sentences(dict(zip(cand["qid"], cand["query"])), "LEX", LEX, dataset="t", stopwords=NLTK)
    ins = build_insertions(cand, sent, "LEX")
    assert ins.loc[0, "text"] == (
        "The terms goldfish, pond are shown together as an example of word grouping in text data. passage 0"
    )
    r = rejudge_pairs(s, ins, "LEX")
    assert list(r["docid"]) == list(cand["docid"]) and (r["original_label"] == 0).all()
    counts = insertion_table([ins]).iloc[0]
    assert (counts["n_passages"], counts["n_ok"], counts["n_queries"], counts["n_queries_ok"]) == (6, 6, 2, 2)


# -- transitions and distributions ------------------------------------------------------------


def _rejudged():
    return pd.DataFrame(
        {
            "judge": "m",
            "variant": "SUM",
            "original_label": pd.array([0, 0, 1, 1, 2, 3, 3], dtype="Int64"),
            "label": pd.array([0, 1, 1, None, 3, 3, 2], dtype="Int64"),
        }
    )


def test_transition_matrix_on_constructed_labels():
    r = _rejudged()
    mat = transition_counts(r["original_label"], r["label"])
    assert mat.to_numpy().tolist() == [[1, 1, 0, 0, 0], [0, 1, 0, 0, 1], [0, 0, 0, 1, 0], [0, 0, 1, 1, 0]]
    tidy = transition_table(r).set_index(["original_label", "new_label"])
    assert tidy.loc[(0, 0), "share"] == 0.5 and tidy.loc[(0, 1), "share"] == 0.5
    assert tidy.loc[(1, 1), "share"] == 1.0 and tidy.loc[(1, 1), "row_missing"] == 1
    assert tidy.loc[(2, 3), "share"] == 1.0 and tidy.loc[(3, 2), "share"] == 0.5
    assert tidy["count"].sum() == 6
    shifts = shift_table(r).iloc[0]
    # parsed differences: 0, +1, 0, +1, 0, -1
    assert (shifts["n"], shifts["n_parsed"]) == (7, 6)
    assert math.isclose(shifts["mean_shift"], 1 / 6)
    assert math.isclose(shifts["share_up"], 2 / 6) and math.isclose(shifts["share_same"], 3 / 6)
    assert math.isclose(shifts["share_down"], 1 / 6)


def test_transition_row_without_parsed_rejudgments_is_undefined():
    r = pd.DataFrame(
        {
            "judge": "m",
            "variant": "PSV",
            "original_label": pd.array([2], dtype="Int64"),
            "label": pd.array([None], dtype="Int64"),
        }
    )
    tidy = transition_table(r).set_index(["original_label", "new_label"])
    assert math.isnan(tidy.loc[(2, 0), "share"]) and tidy.loc[(2, 0), "row_missing"] == 1


def test_label_distribution_after_insertion():
    r = pd.DataFrame(
        {
            "judge": "m",
            "variant": "QRY",
            "original_label": pd.array([0] * 5, dtype="Int64"),
            "label": pd.array([0, 1, 1, None, 3], dtype="Int64"),
        }
    )
    d = distribution_table(r).set_index("label")
    assert d["count"].tolist() == [1, 2, 0, 1]
    assert d["share"].tolist() == [0.25, 0.5, 0.0, 0.25]
    assert (d["n_parsed"] == 4).all() and (d["n_missing"] == 1).all()


# -- figures ----------------------------------------------------------------------------------


def test_figures_are_written_as_png_and_pdf(tmp_path):
    trans = transition_table(_rejudged())
    transition_heatmaps(trans, list(REWRITE_VARIANTS), "t", tmp_path / "f1.png", tmp_path / "f1.pdf")
    dist = distribution_table(
        pd.DataFrame(
            {
                "judge": ["m", "m", "n"],
                "variant": ["SEM", "QRY", "QRY"],
                "original_label": pd.array([0, 0, 0], dtype="Int64"),
                "label": pd.array([1, 3, None], dtype="Int64"),
            }
        )
    )
    insertion_distributions(dist, list(INSERTION_VARIANTS), "t", tmp_path / "f3.png", tmp_path / "f3.pdf")
    for name in ("f1.png", "f3.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for name in ("f1.pdf", "f3.pdf"):
        assert (tmp_path / name).read_bytes()[:5] == b"%PDF-"


class ScriptedRewriter(Backend):
    """A test double: rewrites by a rule, and answers the meaning check from a script keyed by
    the rewrite's text (the real model runs in test_perturbations_model.py)."""

    def __init__(self, rewrites: dict[str, tuple[str, int]], checks: dict[str, str]):
        self.rewrites, self.checks = rewrites, checks
        self.checked: list[str] = []

    def identity(self) -> dict:
        return {"kind": "scripted-rewriter"}

    def complete(self, request: Request) -> Completion:
        prompt = request.messages[-1][1]
        if prompt.startswith("You are given an original passage"):
            rewritten = prompt.split("Rewritten passage: ", 1)[1].split("\n", 1)[0]
            self.checked.append(rewritten)
            return Completion(text=self.checks[rewritten], prompt_tokens=5, completion_tokens=1)
        passage = prompt.rsplit("Passage: ", 1)[1]
        text, n = self.rewrites[passage]
        return Completion(text=text, prompt_tokens=3, completion_tokens=n)


def test_run_rewrites_checks_non_empty_rewrites_and_records_every_row(tmp_path):
    pool = pd.DataFrame(
        {
            "dataset": "t",
            "qid": "1",
            "query": "q",
            "docid": ["a", "b", "c", "d"],
            "passage": ["pa", "pb", "pc", "pd"],
            "grade": pd.array([0, 1, 2, 3], dtype="Int64"),
        }
    )
    backend = ScriptedRewriter(
        rewrites={"pa": ("Ra.", 2), "pb": ("  ", 1), "pc": ("Rc one. Rc cut", 4), "pd": ('"Rd."', 2)},
        checks={"Ra.": "Yes", "Rc one.": "No", "Rd.": "Perhaps"},
    )
    client = CachedClient(backend, RequestCache(tmp_path / "c.sqlite"))
    out = run_rewrites(
        pool,
        "SUM",
        Writer("rewriter", template=load_template("perturbations/sum"), max_tokens=4),
        Writer("rewriter", template=load_template("perturbations/meaning_check"), max_tokens=2),
        client,
        client,
        progress=False,
    )
    assert list(out.columns) == REWRITE_COLUMNS
    assert list(out["text"]) == ["Ra.", "", "Rc one.", "Rd."]
    assert list(out["truncated"]) == [False, False, True, False]
    assert list(out["kept"]) == [True, False, False, False]
    assert list(out["reason"]) == ["", "empty", "changed", "unparsable"]
    assert backend.checked == ["Ra.", "Rc one.", "Rd."]  # the empty rewrite is not checked
    assert list(out["check_prompt_tokens"]) == [5, None, 5, 5]
    empty = run_rewrites(
        pool.iloc[0:0],
        "SUM",
        Writer("rewriter", template="x {passage}", max_tokens=4),
        Writer("rewriter", template="y", max_tokens=2),
        client,
        client,
        progress=False,
    )
    assert list(empty.columns) == REWRITE_COLUMNS and len(empty) == 0


def test_bad_tables_name_the_file(tmp_path):
    bad = tmp_path / "sample.tsv"
    bad.write_text("dataset\tqid\tdocid\nt\t1\td1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"sample.tsv: not a sample table"):
        read_sample(str(bad))
    with pytest.raises(InputError, match=r"sample.tsv: not a rewrites or insertions table"):
        read_variant_table(str(bad))
    with pytest.raises(InputError, match="perturbations.variants"):
        rejudge_pairs(pd.DataFrame(columns=SAMPLE_COLUMNS), pd.DataFrame(columns=["kept"]), "XYZ")
